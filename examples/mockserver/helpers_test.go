package mockserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// newTestServer serves a New(cfg) over real HTTP on 127.0.0.1.
func newTestServer(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s := New(cfg)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// event is one SSE data payload and when the client read it.
type event struct {
	data string
	at   time.Time
}

// post sends body to path and returns the response, which the caller
// closes.
func post(t testing.TB, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp
}

// readEvents reads an SSE body to its end, timestamping each data line.
func readEvents(t testing.TB, r io.Reader) []event {
	t.Helper()
	var evs []event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		evs = append(evs, event{data: data, at: time.Now()})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading stream: %v", err)
	}
	return evs
}

// streamEvents posts body and reads the whole stream.
func streamEvents(t testing.TB, url, body string) (sent time.Time, evs []event) {
	t.Helper()
	sent = time.Now()
	resp := post(t, context.Background(), url, body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	return sent, readEvents(t, resp.Body)
}

// decode unmarshals s into a generic value, failing the test on error.
func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("event %q is not JSON: %v", s, err)
	}
	return m
}

// chunkText is the text an event carries, and whether it is reasoning.
type chunkText struct {
	Content   string
	Reasoning string
	Finish    string
	Usage     bool
}

// texts summarises the stream's JSON events (the last, [DONE], excluded).
func texts(t testing.TB, evs []event) []chunkText {
	t.Helper()
	var out []chunkText
	for _, e := range evs {
		if e.data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Text  *string `json:"text"`
				Delta struct {
					Content   string `json:"content"`
					Reasoning string `json:"reasoning_content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			t.Fatalf("event %q: %v", e.data, err)
		}
		var ct chunkText
		ct.Usage = c.Usage != nil
		if len(c.Choices) > 0 {
			ch := c.Choices[0]
			ct.Content, ct.Reasoning = ch.Delta.Content, ch.Delta.Reasoning
			if ch.Text != nil {
				ct.Content = *ch.Text
			}
			if ch.FinishReason != nil {
				ct.Finish = *ch.FinishReason
			}
		}
		out = append(out, ct)
	}
	return out
}
