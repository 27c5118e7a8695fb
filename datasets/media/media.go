// Package media builds the images and audio clips a chat request carries
// beside its text: synthetic ones (seeded noise images in PNG or JPEG,
// Gaussian-noise WAV clips, as AIPerf's --image-* and --audio-* options
// describe them) and those a dataset names (local files, data URLs and
// image URLs). Each is encoded once, as the OpenAI chat content part it is
// sent as, and shared by every turn that sends it, so building a request
// copies bytes and encodes nothing.
package media

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Kind is what a part carries.
type Kind uint8

// The kinds of media part.
const (
	Image Kind = iota + 1
	Audio
)

// String names the kind as messages do.
func (k Kind) String() string {
	switch k {
	case Image:
		return "image"
	case Audio:
		return "audio"
	}
	return "media"
}

// Part is one image or audio clip as a chat content part. It is immutable
// once built; turns that send the same media share its JSON.
type Part struct {
	Kind Kind
	// JSON is the content part exactly as sent:
	// {"type":"image_url","image_url":{"url":"data:image/png;base64,…"}} or
	// {"type":"input_audio","input_audio":{"data":"…","format":"wav"}}.
	JSON []byte
	// Format is the media's format (png, jpeg, gif, webp, wav, mp3; "url"
	// for an image sent by address).
	Format string
	// Bytes is the size of the media itself (the file, before base64); 0
	// for an image sent by URL, which the server fetches.
	Bytes int
	// Seconds is an audio clip's length (0 when unknown, as for mp3).
	Seconds float64
	// Width and Height are a synthetic or decoded image's size (0 when
	// unknown).
	Width, Height int
}

// Stats sums what parts carry, for a request's record.
type Stats struct {
	// Images counts image parts; Seconds is the audio's total length.
	Images  int
	Audio   int
	Seconds float64
	// Bytes is the media's size in the request body: every part's JSON,
	// base64 included.
	Bytes int
}

// Add counts parts into s.
func (s *Stats) Add(parts []Part) {
	for i := range parts {
		p := &parts[i]
		switch p.Kind {
		case Image:
			s.Images++
		case Audio:
			s.Audio++
			s.Seconds += p.Seconds
		}
		s.Bytes += len(p.JSON)
	}
}

// imageJSON is the chat content part of an image at url.
func imageJSON(url string) []byte {
	q, _ := json.Marshal(url) // a string always marshals
	b := make([]byte, 0, len(q)+40)
	b = append(b, `{"type":"image_url","image_url":{"url":`...)
	b = append(b, q...)
	return append(b, "}}"...)
}

// ImageData is the part of an encoded image of the given format (png,
// jpeg, gif, webp), sent as a base64 data URL.
func ImageData(format string, data []byte, width, height int) Part {
	url := make([]byte, 0, base64.StdEncoding.EncodedLen(len(data))+32)
	url = fmt.Appendf(url, "data:image/%s;base64,", format)
	url = base64.StdEncoding.AppendEncode(url, data)
	return Part{Kind: Image, JSON: imageJSON(string(url)), Format: format, Bytes: len(data), Width: width, Height: height}
}

// ImageURL is the part of an image the server fetches from url.
func ImageURL(url string) Part {
	return Part{Kind: Image, JSON: imageJSON(url), Format: "url"}
}

// AudioData is the part of an encoded clip (wav, mp3) of the given length
// in seconds (0: unknown).
func AudioData(format string, data []byte, seconds float64) Part {
	b := make([]byte, 0, base64.StdEncoding.EncodedLen(len(data))+64)
	b = append(b, `{"type":"input_audio","input_audio":{"data":"`...)
	b = base64.StdEncoding.AppendEncode(b, data)
	b = append(b, `","format":`...)
	q, _ := json.Marshal(format)
	b = append(b, q...)
	b = append(b, "}}"...)
	return Part{Kind: Audio, JSON: b, Format: format, Bytes: len(data), Seconds: seconds}
}

// OptionError is a bad value in ImageOptions or AudioOptions, named by its
// field ("WidthMean", "SampleRates"); the caller says which of its options
// or flags set it.
type OptionError struct {
	Option string
	Reason string
}

// Error returns the option and the reason.
func (e *OptionError) Error() string { return e.Option + " " + e.Reason }

func optionErrorf(option, format string, args ...any) *OptionError {
	return &OptionError{Option: option, Reason: fmt.Sprintf(format, args...)}
}
