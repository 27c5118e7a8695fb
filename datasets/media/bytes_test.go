package media

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
	"github.com/mewkiz/flac/meta"
)

// flacClip encodes samples (mono, 16-bit) as a FLAC stream.
func flacClip(t *testing.T, rate int, samples []int32) []byte {
	t.Helper()
	var buf bytes.Buffer
	info := &meta.StreamInfo{BlockSizeMin: 16, BlockSizeMax: 4096, SampleRate: uint32(rate), NChannels: 1, BitsPerSample: 16, NSamples: uint64(len(samples))}
	enc, err := flac.NewEncoder(&buf, info)
	if err != nil {
		t.Fatal(err)
	}
	for start := 0; start < len(samples); start += 4096 {
		block := samples[start:min(start+4096, len(samples))]
		f := &frame.Frame{
			Header:    frame.Header{HasFixedBlockSize: true, BlockSize: uint16(len(block)), SampleRate: uint32(rate), Channels: frame.ChannelsMono, BitsPerSample: 16, Num: uint64(start / 4096)},
			Subframes: []*frame.Subframe{{SubHeader: frame.SubHeader{Pred: frame.PredVerbatim}, Samples: block, NSamples: len(block)}},
		}
		if err := enc.WriteFrame(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestAudioBytes: WAV and MP3 go as they are, FLAC is decoded to a WAV of
// the same samples and length, other formats are refused by name.
func TestAudioBytes(t *testing.T) {
	samples := make([]int32, 8000) // 0.5 s at 16 kHz
	for i := range samples {
		samples[i] = int32(i%200*100 - 10000)
	}
	p, err := AudioBytes(flacClip(t, 16000, samples))
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != Audio || p.Format != FormatWAV || p.Seconds != 0.5 {
		t.Fatalf("part %v %s %g s", p.Kind, p.Format, p.Seconds)
	}
	wav := p.JSON // the part carries base64; decode the WAV back through the sniffers
	if !bytes.Contains(wav, []byte(`"format":"wav"`)) {
		t.Errorf("part JSON %.80s", wav)
	}
	raw, _, err := flacToWAV(flacClip(t, 16000, samples))
	if err != nil {
		t.Fatal(err)
	}
	if wavSeconds(raw) != 0.5 || binary.LittleEndian.Uint32(raw[24:]) != 16000 {
		t.Errorf("WAV header: %g s at %d Hz", wavSeconds(raw), binary.LittleEndian.Uint32(raw[24:]))
	}
	for i, s := range samples {
		if got := int32(int16(binary.LittleEndian.Uint16(raw[44+2*i:]))); got != s {
			t.Fatalf("sample %d = %d, want %d", i, got, s)
		}
	}
	if p, err := AudioBytes(raw); err != nil || p.Format != FormatWAV || p.Bytes != len(raw) {
		t.Errorf("WAV: %+v %v", p.Format, err)
	}
	if p, err := AudioBytes([]byte("ID3\x03\x00rest-of-an-mp3")); err != nil || p.Format != FormatMP3 {
		t.Errorf("MP3: %v %v", p.Format, err)
	}
	for data, want := range map[string]string{
		"OggS\x00\x02rest":     "audio in Ogg (Vorbis or Opus) format: surge sends WAV and MP3 clips and decodes FLAC",
		"\x00\x00\x00\x18ftyp": "audio in MP4/M4A format",
		"fLaC\x00broken":       "FLAC: ",
		"hello":                "audio in unknown format",
	} {
		if _, err := AudioBytes([]byte(data)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", data, err, want)
		}
	}
}

func TestImageBytes(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	p, err := ImageBytes(buf.Bytes())
	if err != nil || p.Format != "png" || p.Width != 3 || p.Height != 2 || !bytes.Contains(p.JSON, []byte(`"url":"data:image/png;base64,`)) {
		t.Errorf("PNG: %+v %v", p.Format, err)
	}
	if _, err := ImageBytes([]byte("plain text")); err == nil || err.Error() != "not a PNG, JPEG, GIF or WebP image" {
		t.Errorf("text: %v", err)
	}
	if _, err := ImageBytes(make([]byte, DefaultMaxFileBytes+1)); err == nil || !strings.Contains(err.Error(), "more than the 32 MiB") {
		t.Errorf("huge: %v", err)
	}
}
