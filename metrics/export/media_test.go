package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestInputsMedia: inputs.json carries media exactly as sent, or with
// HashMedia their digests, the rest of the body untouched.
func TestInputsMedia(t *testing.T) {
	img, clip := "iVBORw0KGgo=", "UklGRiQAAABXQVZF"
	body := `{"messages":[{"role":"user","content":[{"type":"text","text":"data:x;base64,kept"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + img + `"}},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/a.png"}},` +
		`{"type":"input_audio","input_audio":{"data":"` + clip + `","format":"wav"}}]}],"model":"m","data":"not audio"}`
	hashed := `{"messages":[{"role":"user","content":[{"type":"text","text":"data:x;base64,kept"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;sha256,` + sha(img) + `"}},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/a.png"}},` +
		`{"type":"input_audio","input_audio":{"data":"sha256:` + sha(clip) + `","format":"wav"}}]}],"model":"m","data":"not audio"}`
	for _, tc := range []struct {
		name string
		opts []InputsOption
		want string
	}{
		{"as sent", nil, body},
		{"hashed", []InputsOption{HashMedia()}, hashed},
	} {
		var b bytes.Buffer
		in := NewInputs(&b, tc.opts...)
		in.Body(0, "c", 0, []byte(body))
		in.Body(0, "c", 1, []byte(`{"messages":[{"role":"user","content":"plain"}]}`))
		in.EndSession(0)
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Data []struct {
				Payloads []json.RawMessage `json:"payloads"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, b.Bytes())
		}
		if got := string(doc.Data[0].Payloads[0]); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if got := string(doc.Data[0].Payloads[1]); got != `{"messages":[{"role":"user","content":"plain"}]}` {
			t.Errorf("%s: a body without media became %s", tc.name, got)
		}
	}
	// Kept as they are: a value with an escape, quoted patterns inside a
	// string, a "url" that is a value, "data" outside input_audio.
	for _, b := range []string{
		`{"url":"data:a;base64,x\/y"}`,
		`{"text":"\"url\":\"data:a;base64,xy\""}`,
		`{"k":"url","url":"https://a/b"}`,
		`{"input_audio":{"format":"wav"},"data":"AAAA"}`,
		`{"input_audio":"AAAA"}`,
		`{"url":"data:a;base64`,
	} {
		if got := string(hashMedia([]byte(b))); got != b {
			t.Errorf("%s became %s", b, got)
		}
	}
	// Spaces around the colon, the data key second.
	if got, want := string(hashMedia([]byte(`{"input_audio": {"format": "wav", "data": "AAAA"}}`))), `{"input_audio": {"format": "wav", "data": "sha256:`+sha("AAAA")+`"}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// BenchmarkHashMedia is the inputs.json writer's cost per body at
// --export-level summary: one 1 MiB image.
func BenchmarkHashMedia(b *testing.B) {
	body := []byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` +
		strings.Repeat("QUJD", 1<<18) + `"}}]}],"model":"m"}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		hashMedia(body)
	}
}

// FuzzHashMedia: any body comes back valid if it was valid, never a panic.
func FuzzHashMedia(f *testing.F) {
	f.Add([]byte(`{"image_url":{"url":"data:image/png;base64,AAAA"}}`))
	f.Add([]byte(`{"input_audio":{"data":"AAAA","format":"wav"}}`))
	f.Add([]byte(`[{"url":"data:x;base64,\u0041"},{"input_audio":{"data":"\n"}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := hashMedia(b)
		if json.Valid(b) && !json.Valid(out) {
			t.Fatalf("%s became invalid: %s", b, out)
		}
	})
}

// TestMediaMetricsExported: the per-request media metrics reach the
// JSONL lines and the summary; a text request's line has none.
func TestMediaMetricsExported(t *testing.T) {
	var lines bytes.Buffer
	j := NewJSONL(&lines, time.Unix(0, 0))
	c := metrics.NewCollector(metrics.WithShards(1), metrics.WithClock(func() int64 { return 0 }), metrics.WithSink(j))
	for i := range 4 {
		r := &metrics.Record{Index: int64(i), RequestID: "r", SentNs: int64(i+1) * 1e6, EndNs: int64(i+2) * 1e6, Streamed: true,
			TokenNs: []int64{int64(i+1)*1e6 + 5e5, int64(i+2) * 1e6}, InputTokens: 10}
		if i < 3 {
			r.Images, r.AudioSeconds, r.MediaBytes = i+1, 0.5, 1000*(i+1)
		}
		c.Add(r)
	}
	s := c.Close()
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	out := strings.Split(strings.TrimSpace(lines.String()), "\n")
	if len(out) != 4 {
		t.Fatalf("%d lines", len(out))
	}
	withMedia := 0
	for _, l := range out {
		if strings.Contains(l, `"image_count":{"value":`) && strings.Contains(l, `"media_bytes":{"value":`) && strings.Contains(l, `"audio_duration":{"value":0.5,"unit":"sec"}`) {
			withMedia++
		} else if strings.Contains(l, "image_count") {
			t.Errorf("a line with part of the media metrics: %s", l)
		}
	}
	if withMedia != 3 {
		t.Fatalf("%d lines carry media metrics, want 3:\n%s", withMedia, lines.String())
	}
	var doc bytes.Buffer
	if err := JSON(&doc, s, Run{}); err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	json.Unmarshal(doc.Bytes(), &sum)
	m, ok := sum["media_bytes"].(map[string]any)
	if !ok || math.Abs(m["avg"].(float64)-2000) > 1e-9 || m["unit"] != "bytes" {
		t.Fatalf("summary media_bytes %v", sum["media_bytes"])
	}
	if im, _ := sum["image_count"].(map[string]any); im == nil || im["max"].(float64) != 3 {
		t.Fatalf("summary image_count %v", sum["image_count"])
	}
}
