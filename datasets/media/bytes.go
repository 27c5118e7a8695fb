package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"net/http"
	"strings"

	"github.com/mewkiz/flac"
)

// Formats of audio a dataset may hold that input_audio cannot carry as
// they are (FormatFLAC is decoded to WAV).
const FormatFLAC = "flac"

// MaxDecodedBytes bounds a clip decoded to WAV (FLAC): about 35 minutes
// of 16 kHz mono 16-bit audio, far past the 30 s of a speech benchmark.
const MaxDecodedBytes = 64 << 20

// ImageBytes is the part of an image a dataset holds as bytes (a Hub
// dataset's image column): PNG, JPEG, GIF or WebP, sent as it is, as a
// base64 data URL; at most DefaultMaxFileBytes.
func ImageBytes(data []byte) (Part, error) {
	if len(data) > DefaultMaxFileBytes {
		return Part{}, fmt.Errorf("an image of %d bytes, more than the %d MiB a media item may have", len(data), DefaultMaxFileBytes>>20)
	}
	format, ok := strings.CutPrefix(http.DetectContentType(data), "image/")
	if !ok || !knownImageFormat(format) {
		return Part{}, errors.New("not a PNG, JPEG, GIF or WebP image")
	}
	w, h := 0, 0
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
		w, h = cfg.Width, cfg.Height
	}
	return ImageData(format, data, w, h), nil
}

// AudioBytes is the part of a clip a dataset holds as bytes: WAV and MP3
// are sent as they are; FLAC is decoded and sent as WAV (input_audio
// carries wav or mp3 only), as AIPerf re-encodes a dataset's clips. Its
// length is known for WAV and FLAC (0 for MP3).
func AudioBytes(data []byte) (Part, error) {
	if len(data) > DefaultMaxFileBytes {
		return Part{}, fmt.Errorf("a clip of %d bytes, more than the %d MiB a media item may have", len(data), DefaultMaxFileBytes>>20)
	}
	switch sniffAudio(data) {
	case FormatWAV:
		return clipPart(FormatWAV, data), nil
	case FormatMP3:
		return clipPart(FormatMP3, data), nil
	}
	if len(data) >= 4 && string(data[:4]) == "fLaC" {
		wav, secs, err := flacToWAV(data)
		if err != nil {
			return Part{}, fmt.Errorf("FLAC: %v", err)
		}
		return AudioData(FormatWAV, wav, secs), nil
	}
	kind := "unknown"
	switch {
	case len(data) >= 4 && string(data[:4]) == "OggS":
		kind = "Ogg (Vorbis or Opus)"
	case len(data) >= 8 && string(data[4:8]) == "ftyp":
		kind = "MP4/M4A"
	}
	return Part{}, fmt.Errorf("audio in %s format: surge sends WAV and MP3 clips and decodes FLAC", kind)
}

// flacToWAV decodes a FLAC stream to a PCM WAV file of its bit depth
// (rounded up to whole bytes) and returns its length in seconds.
func flacToWAV(data []byte) ([]byte, float64, error) {
	s, err := flac.New(bytes.NewReader(data))
	if err != nil {
		return nil, 0, err
	}
	info := s.Info
	ch, rate := int(info.NChannels), int(info.SampleRate)
	width := (int(info.BitsPerSample) + 7) / 8
	if ch < 1 || ch > 8 || rate <= 0 || width < 1 || width > 4 {
		return nil, 0, fmt.Errorf("%d channels at %d Hz, %d bits: not a stream surge decodes", ch, rate, info.BitsPerSample)
	}
	if int64(info.NSamples)*int64(ch*width) > MaxDecodedBytes {
		return nil, 0, fmt.Errorf("%d samples decode to more than %d MiB", info.NSamples, MaxDecodedBytes>>20)
	}
	shift := uint(width*8) - uint(info.BitsPerSample)
	out := make([]byte, 44, 44+int(info.NSamples)*ch*width)
	for {
		f, err := s.ParseNext()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		if len(f.Subframes) != ch {
			return nil, 0, errors.New("a frame's channel count differs from the stream's")
		}
		n := len(f.Subframes[0].Samples)
		if len(out)+n*ch*width > MaxDecodedBytes {
			return nil, 0, fmt.Errorf("decodes to more than %d MiB", MaxDecodedBytes>>20)
		}
		for i := range n {
			for c := range ch {
				if i >= len(f.Subframes[c].Samples) {
					return nil, 0, errors.New("a frame's channels differ in length")
				}
				v := f.Subframes[c].Samples[i] << shift
				switch width {
				case 1: // 8-bit WAV is unsigned
					out = append(out, byte(v+128))
				case 2:
					out = binary.LittleEndian.AppendUint16(out, uint16(v))
				case 3:
					out = append(out, byte(v), byte(v>>8), byte(v>>16))
				case 4:
					out = binary.LittleEndian.AppendUint32(out, uint32(v))
				}
			}
		}
	}
	size := len(out) - 44
	copy(out, "RIFF")
	binary.LittleEndian.PutUint32(out[4:], uint32(36+size))
	copy(out[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(out[16:], 16)
	binary.LittleEndian.PutUint16(out[20:], 1) // PCM
	binary.LittleEndian.PutUint16(out[22:], uint16(ch))
	binary.LittleEndian.PutUint32(out[24:], uint32(rate))
	binary.LittleEndian.PutUint32(out[28:], uint32(rate*ch*width))
	binary.LittleEndian.PutUint16(out[32:], uint16(ch*width))
	binary.LittleEndian.PutUint16(out[34:], uint16(width*8))
	copy(out[36:], "data")
	binary.LittleEndian.PutUint32(out[40:], uint32(size))
	return out, float64(size/(ch*width)) / float64(rate), nil
}
