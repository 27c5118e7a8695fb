package mockserver

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// mediaLoad is what a request's image and audio parts ask of the server:
// each is checked as a server checks it before it encodes anything (a
// part that does not decode is a 400), and adds to the prefill time.
type mediaLoad struct {
	Images       int
	Audio        int
	AudioSeconds float64
}

// imagePart is an image_url part's object; inputAudio an input_audio's.
type imagePart struct {
	URL string `json:"url"`
}

type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

// mp3BytesPerSecond prices an mp3 clip the mock cannot decode: 128 kbit/s.
const mp3BytesPerSecond = 128_000 / 8

// add checks one content part of type typ and counts it.
func (m *mediaLoad) add(p *wirePart) error {
	switch p.Type {
	case "text":
		return nil
	case "image_url":
		if p.ImageURL == nil || p.ImageURL.URL == "" {
			return errors.New(`image_url part has no "image_url": {"url": …}`)
		}
		if err := checkImageURL(p.ImageURL.URL); err != nil {
			return err
		}
		m.Images++
		return nil
	case "input_audio":
		a := p.InputAudio
		if a == nil || a.Data == "" {
			return errors.New(`input_audio part has no "input_audio": {"data": …}`)
		}
		data, err := base64.StdEncoding.DecodeString(a.Data)
		if err != nil {
			return fmt.Errorf("input_audio data is not valid base64: %v", err)
		}
		switch a.Format {
		case "wav":
			secs, err := wavLength(data)
			if err != nil {
				return fmt.Errorf("input_audio: %v", err)
			}
			m.AudioSeconds += secs
		case "mp3":
			m.AudioSeconds += float64(len(data)) / mp3BytesPerSecond
		default:
			return fmt.Errorf(`input_audio format %q: want "wav" or "mp3"`, a.Format)
		}
		m.Audio++
		return nil
	}
	return fmt.Errorf("unsupported content part type %q (want text, image_url or input_audio)", p.Type)
}

// checkImageURL accepts an http(s) URL (the mock fetches nothing) or a
// base64 image data URL whose data decodes.
func checkImageURL(url string) error {
	if strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://") {
		return nil
	}
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return errors.New("image_url must be an http(s) URL or a data URL")
	}
	head, b64, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasPrefix(head, "image/") || !strings.HasSuffix(head, ";base64") {
		return fmt.Errorf("image data URL %.40q is not data:image/<format>;base64,…", url)
	}
	if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
		return fmt.Errorf("image data URL is not valid base64: %v", err)
	}
	return nil
}

// wavLength reads a PCM WAV clip's length from its header.
func wavLength(b []byte) (float64, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, errors.New("wav data is not a RIFF WAVE file")
	}
	var byteRate uint32
	for i := 12; i+8 <= len(b); {
		id, size := string(b[i:i+4]), int(binary.LittleEndian.Uint32(b[i+4:]))
		body := i + 8
		switch id {
		case "fmt ":
			if body+12 <= len(b) {
				byteRate = binary.LittleEndian.Uint32(b[body+8:])
			}
		case "data":
			if byteRate == 0 {
				return 0, errors.New("wav data chunk before a fmt chunk with a byte rate")
			}
			return float64(min(size, len(b)-body)) / float64(byteRate), nil
		}
		if size < 0 || size > len(b)-body {
			break
		}
		i = body + size + size&1
	}
	return 0, errors.New("wav has no data chunk")
}
