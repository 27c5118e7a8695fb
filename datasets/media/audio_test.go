package media

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// decodeClip reads an audio part back: its format and WAV bytes.
func decodeClip(t *testing.T, p Part) (string, []byte) {
	t.Helper()
	var v struct {
		Type       string `json:"type"`
		InputAudio struct {
			Data   string `json:"data"`
			Format string `json:"format"`
		} `json:"input_audio"`
	}
	if err := json.Unmarshal(p.JSON, &v); err != nil {
		t.Fatal(err)
	}
	if v.Type != "input_audio" {
		t.Fatalf("type %q", v.Type)
	}
	data, err := base64.StdEncoding.DecodeString(v.InputAudio.Data)
	if err != nil {
		t.Fatal(err)
	}
	return v.InputAudio.Format, data
}

func TestClipsWAV(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o        AudioOptions
		rate     int
		channels int
		depth    int
	}{
		{AudioOptions{LengthMean: 0.5, BatchSize: 1}, 16000, 1, 16},
		{AudioOptions{LengthMean: 0.25, BatchSize: 2, SampleRates: []float64{44.1}, Channels: 2, Depths: []int{24}}, 44100, 2, 24},
		{AudioOptions{LengthMean: 0.1, BatchSize: 1, SampleRates: []float64{8}, Depths: []int{8}}, 8000, 1, 8},
		{AudioOptions{LengthMean: 0.1, BatchSize: 1, Depths: []int{32}, Format: "WAV"}, 16000, 1, 32},
	} {
		c, err := NewClips(tc.o)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := c.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != tc.o.BatchSize {
			t.Fatalf("%d clips, want %d", len(parts), tc.o.BatchSize)
		}
		p := parts[0]
		format, data := decodeClip(t, p)
		if format != "wav" || p.Kind != Audio || p.Bytes != len(data) {
			t.Fatalf("format %q kind %v bytes %d/%d", format, p.Kind, p.Bytes, len(data))
		}
		le := binary.LittleEndian
		if string(data[:4]) != "RIFF" || string(data[8:16]) != "WAVEfmt " || le.Uint16(data[20:]) != 1 ||
			int(le.Uint16(data[22:])) != tc.channels || int(le.Uint32(data[24:])) != tc.rate || int(le.Uint16(data[34:])) != tc.depth {
			t.Fatalf("header %x, want %d Hz, %d channels, %d bits", data[:44], tc.rate, tc.channels, tc.depth)
		}
		want := int(tc.o.LengthMean*float64(tc.rate)) * tc.channels * tc.depth / 8
		if got := int(le.Uint32(data[40:])); got != want || len(data) != 44+want {
			t.Fatalf("data chunk %d bytes (file %d), want %d", got, len(data), want)
		}
		if math.Abs(p.Seconds-tc.o.LengthMean) > 1e-3 || math.Abs(wavSeconds(data)-p.Seconds) > 1e-9 {
			t.Fatalf("seconds %g (header %g), want %g", p.Seconds, wavSeconds(data), tc.o.LengthMean)
		}
		// Noise of σ 0.3: samples spread, not silence.
		if tc.depth == 16 {
			var sum float64
			n := 0
			for i := 44; i+2 <= len(data); i += 2 {
				v := float64(int16(le.Uint16(data[i:]))) / 32767
				sum += v * v
				n++
			}
			if rms := math.Sqrt(sum / float64(n)); rms < 0.2 || rms > 0.4 {
				t.Fatalf("noise RMS %g, want about 0.3", rms)
			}
		}
	}
}

func TestClipsLengthsAndCache(t *testing.T) {
	t.Parallel()
	c, err := NewClips(AudioOptions{LengthMean: 0.2, LengthStddev: 0.5, BatchSize: 1, SampleRates: []float64{8, 16}, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		p, err := c.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p[0].Seconds < MinSeconds-1e-3 {
			t.Fatalf("a clip of %g s, under the %g s floor", p[0].Seconds, MinSeconds)
		}
	}
	fixed, _ := NewClips(AudioOptions{LengthMean: 0.2, BatchSize: 3})
	for range 10 {
		fixed.Next()
	}
	if n, _ := fixed.Distinct(); n > DefaultVariants {
		t.Fatalf("%d clips of one length, want at most %d", n, DefaultVariants)
	}
}

func TestClipsOptionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o              AudioOptions
		option, reason string
	}{
		{AudioOptions{Format: "mp3"}, "Format", "no MP3 encoder"},
		{AudioOptions{Format: "flac"}, "Format", "want wav"},
		{AudioOptions{LengthMean: 0.001}, "LengthMean", "at least"},
		{AudioOptions{LengthMean: math.Inf(1)}, "LengthMean", "between"},
		{AudioOptions{LengthStddev: -1}, "LengthStddev", "≥ 0"},
		{AudioOptions{Channels: 3}, "Channels", "1 (mono) or 2"},
		{AudioOptions{SampleRates: []float64{0}}, "SampleRates", "above 0"},
		{AudioOptions{SampleRates: []float64{1000}}, "SampleRates", "at most"},
		{AudioOptions{Depths: []int{12}}, "Depths", "want 8, 16, 24 or 32"},
		{AudioOptions{BatchSize: -1}, "BatchSize", "negative"},
	} {
		_, err := NewClips(tc.o)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option || !strings.Contains(oe.Reason, tc.reason) {
			t.Errorf("%+v: error %v, want %s …%s…", tc.o, err, tc.option, tc.reason)
		}
	}
}

func TestClipsCacheBound(t *testing.T) {
	t.Parallel()
	c, _ := NewClips(AudioOptions{LengthMean: 1, LengthStddev: 0.5, BatchSize: 1, MaxCacheBytes: 200 << 10})
	var err error
	for range 100 {
		if _, err = c.Next(); err != nil {
			break
		}
	}
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "MaxCacheBytes" {
		t.Fatalf("error %v, want the cache bound", err)
	}
}

func TestWavSecondsHeaders(t *testing.T) {
	t.Parallel()
	good := wav(clipKey{samples: 8000, rate: 8000, depth: 16, channels: 1}, 1)
	for _, tc := range []struct {
		name string
		b    []byte
		want float64
	}{
		{"whole", good, 1},
		{"truncated data", good[:44+8000], 0.5},
		{"not riff", []byte("RIFX0000WAVE"), 0},
		{"no data chunk", good[:36], 0},
		{"short", good[:10], 0},
	} {
		if got := wavSeconds(tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %g s, want %g", tc.name, got, tc.want)
		}
	}
}

// BenchmarkClipEncode is one 10 s, 16 kHz mono clip's first encoding.
func BenchmarkClipEncode(b *testing.B) {
	var n int
	for b.Loop() {
		c, _ := NewClips(AudioOptions{LengthMean: 10, BatchSize: 1, Variants: 1})
		p, err := c.Next()
		if err != nil {
			b.Fatal(err)
		}
		n = len(p[0].JSON)
	}
	b.ReportMetric(float64(n), "part-bytes")
}
