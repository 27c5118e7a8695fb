package mockserver

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// testWAV is a 16-bit mono WAV of secs seconds at 8 kHz.
func testWAV(secs float64) []byte {
	n := int(secs * 8000)
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], 8000)
	binary.LittleEndian.PutUint32(b[28:], 16000)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	return b
}

const pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNiAAAABgADNjd8qAAAAABJRU5ErkJggg=="

// mediaBody is a chat body with the given content parts after a text part.
func mediaBody(stream bool, parts ...string) string {
	s := `{"model":"m","max_tokens":3,"messages":[{"role":"user","content":[{"type":"text","text":"what is this"}`
	for _, p := range parts {
		s += "," + p
	}
	s += `]}]`
	if stream {
		s += `,"stream":true`
	}
	return s + "}"
}

func imagePartJSON(url string) string {
	return `{"type":"image_url","image_url":{"url":"` + url + `"}}`
}

func audioPartJSON(data, format string) string {
	return `{"type":"input_audio","input_audio":{"data":"` + data + `","format":"` + format + `"}}`
}

// TestMediaParts: image and audio parts are checked as a server checks
// them (a part that does not decode is a 400 naming it) and counted.
func TestMediaParts(t *testing.T) {
	t.Parallel()
	wav := base64.StdEncoding.EncodeToString(testWAV(0.5))
	for _, tc := range []struct {
		name   string
		parts  []string
		status int
		want   string // in the error message
	}{
		{"png data URL", []string{imagePartJSON("data:image/png;base64," + pngData)}, 200, ""},
		{"http URL", []string{imagePartJSON("https://example.com/a.png")}, 200, ""},
		{"wav", []string{audioPartJSON(wav, "wav")}, 200, ""},
		{"mp3", []string{audioPartJSON("SUQzAwAA", "mp3")}, 200, ""},
		{"bad image base64", []string{imagePartJSON("data:image/png;base64,@@@")}, 400, "image data URL is not valid base64"},
		{"not a data URL", []string{imagePartJSON("ftp://x/y.png")}, 400, "must be an http(s) URL or a data URL"},
		{"data URL not image", []string{imagePartJSON("data:text/plain;base64,aGk=")}, 400, "is not data:image/<format>;base64"},
		{"image_url missing", []string{`{"type":"image_url"}`}, 400, `has no "image_url"`},
		{"bad audio base64", []string{audioPartJSON("!!", "wav")}, 400, "input_audio data is not valid base64"},
		{"not wav", []string{audioPartJSON("aGVsbG8=", "wav")}, 400, "not a RIFF WAVE file"},
		{"audio format", []string{audioPartJSON(wav, "flac")}, 400, `format "flac": want "wav" or "mp3"`},
		{"unknown part", []string{`{"type":"video_url","video_url":{"url":"https://x"}}`}, 400, `unsupported content part type "video_url"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, ts := newTestServer(t, Config{})
			resp := post(t, context.Background(), ts.URL+"/v1/chat/completions", mediaBody(false, tc.parts...))
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			json.Unmarshal(b, &e)
			if resp.StatusCode != tc.status || !strings.Contains(e.Error.Message, tc.want) {
				t.Fatalf("status %d, body %s; want %d with %q", resp.StatusCode, b, tc.status, tc.want)
			}
			st := s.Stats()
			if tc.status == 200 && st.Images+st.AudioClips != 1 || tc.status == 400 && st.BadRequests != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestMediaPrefill: each image and each second of audio adds its prefill
// cost to TTFT. The server's deadlines are never early, so the lower
// bounds hold on any machine; the text-only bound is loose (a busy 2-core
// box delays, it does not add a whole image's cost every time).
func TestMediaPrefill(t *testing.T) {
	t.Parallel()
	const perImage, perSecond = 150 * time.Millisecond, 200 * time.Millisecond
	_, ts := newTestServer(t, Config{PrefillPerImage: perImage, PrefillPerAudioSecond: perSecond})
	url := ts.URL + "/v1/chat/completions"
	img := imagePartJSON("data:image/png;base64," + pngData)
	wav := audioPartJSON(base64.StdEncoding.EncodeToString(testWAV(1.5)), "wav")
	ttft := func(body string) time.Duration {
		sent, evs := streamEvents(t, url, body)
		return evs[1].at.Sub(sent) // evs[0] is the role
	}
	for _, tc := range []struct {
		name  string
		parts []string
		floor time.Duration
	}{
		{"two images", []string{img, img}, 2 * perImage},
		{"1.5 s of audio", []string{wav}, 3 * perSecond / 2},
		{"both", []string{img, wav}, perImage + 3*perSecond/2},
	} {
		if got := ttft(mediaBody(true, tc.parts...)); got < tc.floor {
			t.Errorf("%s: TTFT %v, under its prefill of %v", tc.name, got, tc.floor)
		}
	}
	if got := ttft(mediaBody(true)); got >= 2*perImage {
		t.Errorf("text only: TTFT %v, as long as two images' prefill", got)
	}
}

func TestWavLength(t *testing.T) {
	t.Parallel()
	good := testWAV(0.25)
	for _, tc := range []struct {
		name string
		b    []byte
		want float64
		err  string
	}{
		{"whole", good, 0.25, ""},
		{"cut short", good[:44+1000], 1000.0 / 16000, ""},
		{"no data", good[:36], 0, "no data chunk"},
		{"not riff", []byte("RIFX....WAVE"), 0, "not a RIFF WAVE"},
		{"data before fmt", append([]byte("RIFF\x00\x00\x00\x00WAVEdata\x02\x00\x00\x00"), 0, 0), 0, "before a fmt chunk"},
		{"huge chunk", append([]byte("RIFF\x00\x00\x00\x00WAVEjunk\xff\xff\xff\x7f"), good[12:]...), 0, "no data chunk"},
	} {
		got, err := wavLength(tc.b)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %g, %v; want %g", tc.name, got, err, tc.want)
		}
	}
}

func TestPrefillConfigValidate(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{PrefillPerImage: -1}, {PrefillPerAudioSecond: -time.Second}, {PrefillPerToken: -time.Microsecond}} {
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "Prefill") {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	if s := New(Config{PrefillPerImage: -5}); s.cfg.PrefillPerImage != 0 {
		t.Errorf("a negative prefill was kept: %v", s.cfg.PrefillPerImage)
	}
}

// BenchmarkParseMediaRequest is the mock's cost to read and check one
// chat body with a 1 MiB image (its CPU is the client's when embedded).
func BenchmarkParseMediaRequest(b *testing.B) {
	body := []byte(mediaBody(true, imagePartJSON("data:image/png;base64,"+strings.Repeat("QUJD", 1<<18))))
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := words.parseRequest(body, chatAPI, 1000); err != nil {
			b.Fatal(err)
		}
	}
}
