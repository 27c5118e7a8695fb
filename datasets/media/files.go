package media

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"net/http"
	"path/filepath"
	"strings"
)

// Files resolves the media a dataset names, as AIPerf's loaders read
// them: an image is an http(s) URL (sent as it is, for the server to
// fetch), a data URL, or a local file; an audio clip is AIPerf's
// "format,base64" string, a data URL or a local file. Each distinct
// reference is read and encoded once; a file may have at most its bound
// of bytes. Not safe for concurrent use.
type Files struct {
	maxBytes int64
	// inline refuses local files (Inline).
	inline bool
	images map[string]Part
	audio  map[string]Part
	// read counts the files read (a reference seen again is not reread).
	read int
}

// NewFiles returns a resolver whose files may have at most maxBytes each
// (0: DefaultMaxFileBytes).
func NewFiles(maxBytes int64) *Files {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxFileBytes
	}
	return &Files{maxBytes: maxBytes, images: map[string]Part{}, audio: map[string]Part{}}
}

// Inline returns a resolver that reads no files: URLs and inline data
// only, a local path is an error (for parsing one line apart from a
// dataset load).
func Inline() *Files {
	f := NewFiles(0)
	f.inline = true
	return f
}

// Read reports how many files were read from disk.
func (f *Files) Read() int { return f.read }

// Image resolves an image reference.
func (f *Files) Image(ref string) (Part, error) {
	if p, ok := f.images[ref]; ok {
		return p, nil
	}
	p, err := f.image(ref)
	if err != nil {
		return Part{}, err
	}
	f.images[ref] = p
	return p, nil
}

func (f *Files) image(ref string) (Part, error) {
	switch {
	case ref == "":
		return Part{}, errors.New("an image reference is empty")
	case hasPrefixFold(ref, "http://"), hasPrefixFold(ref, "https://"):
		return ImageURL(ref), nil
	case hasPrefixFold(ref, "data:"):
		mime, data, err := f.dataURL(ref)
		if err != nil {
			return Part{}, err
		}
		format, ok := strings.CutPrefix(mime, "image/")
		if !ok {
			return Part{}, fmt.Errorf("a data URL of %q is not an image", mime)
		}
		p := ImageURL(ref) // as the dataset gave it
		p.Format, p.Bytes = format, len(data)
		return p, nil
	}
	data, err := f.file(ref)
	if err != nil {
		return Part{}, err
	}
	format, ok := strings.CutPrefix(http.DetectContentType(data), "image/")
	if !ok || !knownImageFormat(format) {
		return Part{}, fmt.Errorf("%s: not a PNG, JPEG, GIF or WebP image", ref)
	}
	w, h := 0, 0
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
		w, h = cfg.Width, cfg.Height
	}
	return ImageData(format, data, w, h), nil
}

// Audio resolves an audio reference.
func (f *Files) Audio(ref string) (Part, error) {
	if p, ok := f.audio[ref]; ok {
		return p, nil
	}
	p, err := f.clip(ref)
	if err != nil {
		return Part{}, err
	}
	f.audio[ref] = p
	return p, nil
}

func (f *Files) clip(ref string) (Part, error) {
	switch {
	case ref == "":
		return Part{}, errors.New("an audio reference is empty")
	case hasPrefixFold(ref, "http://"), hasPrefixFold(ref, "https://"):
		return Part{}, fmt.Errorf("%s: input_audio carries its data in the request, so an audio URL cannot be sent: download the file and name its path", ref)
	case hasPrefixFold(ref, "data:"):
		mime, data, err := f.dataURL(ref)
		if err != nil {
			return Part{}, err
		}
		format := audioFormat(mime)
		if format == "" {
			return Part{}, fmt.Errorf("a data URL of %q is not wav or mp3 audio", mime)
		}
		return clipPart(format, data), nil
	}
	if format, b64, ok := strings.Cut(ref, ","); ok && (format == FormatWAV || format == FormatMP3) {
		// AIPerf's own form: "wav,<base64>".
		data, err := f.decode(b64)
		if err != nil {
			return Part{}, fmt.Errorf("%s audio: %w", format, err)
		}
		return clipPart(format, data), nil
	}
	data, err := f.file(ref)
	if err != nil {
		return Part{}, err
	}
	format := sniffAudio(data)
	if format == "" {
		switch strings.ToLower(filepath.Ext(ref)) {
		case ".wav":
			format = FormatWAV
		case ".mp3":
			format = FormatMP3
		default:
			return Part{}, fmt.Errorf("%s: not a WAV or MP3 file", ref)
		}
	}
	return clipPart(format, data), nil
}

// clipPart is a clip's part, its length read from a WAV header.
func clipPart(format string, data []byte) Part {
	secs := 0.0
	if format == FormatWAV {
		secs = wavSeconds(data)
	}
	return AudioData(format, data, secs)
}

// file reads a local media file once, bounded.
func (f *Files) file(path string) ([]byte, error) {
	if f.inline {
		return nil, fmt.Errorf("%s: a local media file is read only when the whole dataset is loaded", path)
	}
	data, err := readBounded(path, f.maxBytes)
	if err != nil {
		return nil, err
	}
	f.read++
	return data, nil
}

// dataURL splits "data:<mime>;base64,<data>" and decodes its data.
func (f *Files) dataURL(ref string) (mime string, data []byte, err error) {
	head, b64, ok := strings.Cut(ref[len("data:"):], ",")
	if !ok {
		return "", nil, errors.New(`a data URL has no ","`)
	}
	mime, enc, _ := strings.Cut(head, ";")
	if !strings.EqualFold(enc, "base64") {
		return "", nil, fmt.Errorf("a data URL of %q is not base64", mime)
	}
	data, err = f.decode(b64)
	if err != nil {
		return "", nil, fmt.Errorf("a data URL of %q: %w", mime, err)
	}
	return strings.ToLower(mime), data, nil
}

// decode checks and decodes base64 data of at most the file bound.
func (f *Files) decode(b64 string) ([]byte, error) {
	if int64(base64.StdEncoding.DecodedLen(len(b64))) > f.maxBytes {
		return nil, fmt.Errorf("larger than the %d MiB a media file may have", f.maxBytes>>20)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("bad base64: %v", err)
	}
	return data, nil
}

// audioFormat maps an audio MIME type to the format input_audio names.
func audioFormat(mime string) string {
	switch mime {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return FormatWAV
	case "audio/mpeg", "audio/mp3", "audio/mpeg3":
		return FormatMP3
	}
	return ""
}

// sniffAudio tells WAV and MP3 from their first bytes ("" if neither).
func sniffAudio(b []byte) string {
	switch {
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return FormatWAV
	case len(b) >= 3 && string(b[:3]) == "ID3", len(b) >= 2 && b[0] == 0xff && b[1]&0xe0 == 0xe0:
		return FormatMP3
	}
	return ""
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
