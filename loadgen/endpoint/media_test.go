package endpoint

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/media"
)

func TestChatBodyMedia(t *testing.T) {
	t.Parallel()
	img := media.ImageURL("https://example.com/a.png")
	clip := media.AudioData("wav", []byte("RIFF"), 0.5)
	ep := &Endpoint{Kind: Chat, Model: "m", Streaming: true, Extra: map[string]any{"temperature": 0.5}}
	turn := &datasets.Turn{Text: "what <is> this?", Media: []media.Part{img, clip}, MaxTokens: 9}
	first := TurnMessages(&datasets.Turn{Text: "earlier", Media: []media.Part{img}})
	history := append(first, Message{Role: "assistant", Content: "a cat"})
	body, err := ep.Body("be brief", history, turn)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	imgPart := map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png"}}
	want := map[string]any{
		"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"max_completion_tokens": 9.0, "temperature": 0.5,
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "earlier"}, imgPart}},
			map[string]any{"role": "assistant", "content": "a cat"},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "what <is> this?"}, imgPart,
				map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": "UklGRg==", "format": "wav"}},
			}},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("body (-want +got):\n%s", d)
	}
	if !bytes.Contains(body, []byte(`what \u003cis\u003e this?`)) {
		t.Fatalf("text not escaped as encoding/json escapes it: %s", body)
	}
	// The media bytes go in as encoded.
	if !bytes.Contains(body, clip.JSON) {
		t.Fatal("the audio part is not in the body as encoded")
	}

	// Media alone: no text part; no other fields at all.
	bare := &Endpoint{Kind: Chat, Model: "m"}
	body, err = bare.Body("", nil, &datasets.Turn{Media: []media.Part{img}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"messages":[{"role":"user","content":[` + string(img.JSON) + `]}],"model":"m"}`; string(body) != want {
		t.Fatalf("media-only body %s, want %s", body, want)
	}
	// An extra "messages" replaces the messages, as in any body.
	over := &Endpoint{Kind: Chat, Model: "m", Extra: map[string]any{"messages": []any{}}}
	if body, _ = over.Body("", nil, turn); string(body) != `{"max_completion_tokens":9,"messages":[],"model":"m"}` {
		t.Fatalf("extra messages: %s", body)
	}
}

func TestMediaRefusedByOtherTypes(t *testing.T) {
	t.Parallel()
	turn := &datasets.Turn{Text: "x", Media: []media.Part{media.ImageURL("https://a/b.png")}}
	for _, k := range Kinds() {
		ep := &Endpoint{Kind: k, Model: "m"}
		if k == Template {
			ep.Template, _ = ParseTemplate("t", `{"p": {{ .Text | tojson }}}`)
		}
		_, err := ep.Body("", nil, turn)
		if k.Info().Media != (err == nil) {
			t.Errorf("%s: media allowed %v, error %v", k, k.Info().Media, err)
		}
		if err != nil && !strings.Contains(err.Error(), "cannot send images or audio") {
			t.Errorf("%s: error %v", k, err)
		}
	}
	if !Chat.Info().Media {
		t.Error("chat does not send media")
	}
}

// benchMediaTurn is a turn with one 512×512 noise PNG (about 1 MiB in the
// body), as --image-width-mean 512 --image-height-mean 512 sends.
func benchMediaTurn(b *testing.B) *datasets.Turn {
	s, err := media.NewImages(media.ImageOptions{WidthMean: 512, HeightMean: 512, BatchSize: 1})
	if err != nil {
		b.Fatal(err)
	}
	parts, err := s.Next()
	if err != nil {
		b.Fatal(err)
	}
	return &datasets.Turn{Text: strings.Repeat("word ", 200), Media: parts, MaxTokens: 100}
}

// BenchmarkChatBodyMedia is building one request body with an image:
// the part is copied, not marshalled.
func BenchmarkChatBodyMedia(b *testing.B) {
	turn := benchMediaTurn(b)
	ep := &Endpoint{Kind: Chat, Model: "m", Streaming: true}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		body, err := ep.Body("", nil, turn)
		if err != nil {
			b.Fatal(err)
		}
		n = len(body)
	}
	b.ReportMetric(float64(n), "body-bytes")
}

// BenchmarkChatBodyMediaMarshal is the same body through encoding/json
// (the media part as a string field), what mediaBody avoids.
func BenchmarkChatBodyMediaMarshal(b *testing.B) {
	turn := benchMediaTurn(b)
	var part struct {
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	json.Unmarshal(turn.Media[0].JSON, &part)
	b.ReportAllocs()
	for b.Loop() {
		body := map[string]any{"model": "m", "stream": true, "messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": turn.Text},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": part.ImageURL.URL}},
		}}}}
		if _, err := json.Marshal(body); err != nil {
			b.Fatal(err)
		}
	}
}
