package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/loadgen/sse"
	"github.com/surgebench/surge/metrics"
)

// Usage verdicts of the corpus.
const (
	usageBelieved = "believed"
	usageAbsent   = "absent"
)

// serverCorpus is one recorded answer per server, streamed and not
// (testdata/servers: real captures of koboldcpp, distributed-llama and
// llama.cpp, the others written from each server's source or API
// reference; its README says which), and what surge makes of each: the
// text events, OSL and where it came from, the finish the answer ended
// with, and whether the server's usage is believed. docs/server-wire.md
// is the same table in words.
var serverCorpus = []struct {
	file   string
	kind   endpoint.Kind
	stream bool
	cap    int // the request's output cap (0: none)
	// events are the text events; osl and source what surge counted.
	events int
	osl    float64
	source string
	// finish is the answer's finish (finish_reason, stop_reason, or
	// "[DONE]"/"message_stop" when only the end marker ends it); usage the
	// verdict on the server's usage (usageBelieved, usageAbsent, or the
	// sign that made it not believable); batched is set when the answer
	// came in batches (its ITL a delivery cadence).
	finish  string
	usage   string
	batched bool
	// truth is the server's own count of the tokens it generated (its log,
	// or usage known to be exact): the docs' table shows it beside osl.
	truth int
}{
	// llama.cpp b4747 (real): chunked; no role chunk; the finish in a last
	// chunk with an empty delta, usage (asked for) and timings; data: [DONE].
	{file: "llamacpp-b4747-chat-stream.http", kind: endpoint.Chat, stream: true, cap: 8, events: 8, osl: 8, source: metrics.SourceUsage, finish: "length", usage: usageBelieved, truth: 8},
	{file: "llamacpp-b4747-chat.http", kind: endpoint.Chat, cap: 8, events: 1, osl: 8, source: metrics.SourceUsage, finish: "length", usage: usageBelieved, truth: 8},
	// koboldcpp 1.76 (real): HTTP/1.0, no length, no chunking; "null" as a
	// finish_reason until the last chunk; data: [DONE] and no newline; the
	// non-streamed usage the constant 100/100/200.
	{file: "koboldcpp-1.76-chat-stream.http", kind: endpoint.Chat, stream: true, cap: 64, events: 45, osl: 82, source: metrics.SourceTokenizer, finish: "length", usage: usageAbsent, batched: true, truth: 64},
	{file: "koboldcpp-1.76-chat-stream-one-event.http", kind: endpoint.Chat, stream: true, cap: 16, events: 1, osl: 19, source: metrics.SourceTokenizer, finish: "length", usage: usageAbsent, batched: true, truth: 16},
	{file: "koboldcpp-1.76-chat.http", kind: endpoint.Chat, cap: 16, events: 1, osl: 19, source: metrics.SourceTokenizer, finish: "length", usage: metrics.SignOverCap, truth: 16},
	{file: "koboldcpp-1.76-completions-stream.http", kind: endpoint.Completions, stream: true, cap: 48, events: 44, osl: 56, source: metrics.SourceTokenizer, finish: "length", usage: usageAbsent, batched: true, truth: 48},
	{file: "koboldcpp-1.76-completions.http", kind: endpoint.Completions, cap: 16, events: 1, osl: 15, source: metrics.SourceTokenizer, finish: "length", usage: metrics.SignOverCap, truth: 16},
	// distributed-llama (real): CRLF events, finish_reason "" until a last
	// chunk of "stop" without text, no usage in the stream, data: [DONE]\r\n
	// and no blank line; the whole answer's usage exact, its finish "".
	{file: "distributed-llama-chat-stream.http", kind: endpoint.Chat, stream: true, cap: 8, events: 8, osl: 10, source: metrics.SourceTokenizer, finish: "stop", usage: usageAbsent, truth: 8},
	{file: "distributed-llama-chat.http", kind: endpoint.Chat, cap: 8, events: 1, osl: 8, source: metrics.SourceUsage, finish: "", usage: usageBelieved, truth: 8},
	// From each server's source and API reference.
	{file: "vllm-chat-stream.http", kind: endpoint.Chat, stream: true, cap: 64, events: 10, osl: 10, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 10},
	{file: "vllm-chat.http", kind: endpoint.Chat, cap: 64, events: 1, osl: 10, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 10},
	{file: "sglang-chat-stream.http", kind: endpoint.Chat, stream: true, cap: 64, events: 14, osl: 14, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 14},
	{file: "sglang-chat.http", kind: endpoint.Chat, cap: 64, events: 1, osl: 14, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 14},
	{file: "tgi-chat-stream.http", kind: endpoint.Chat, stream: true, cap: 64, events: 10, osl: 10, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 10},
	{file: "tgi-chat.http", kind: endpoint.Chat, cap: 64, events: 1, osl: 10, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 10},
	{file: "ollama-chat-stream.http", kind: endpoint.Chat, stream: true, cap: 64, events: 10, osl: 10, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 10},
	{file: "ollama-chat.http", kind: endpoint.Chat, cap: 64, events: 1, osl: 10, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 10},
	{file: "openai-chat-stream.http", kind: endpoint.Chat, stream: true, cap: 64, events: 10, osl: 10, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 10},
	{file: "openai-chat.http", kind: endpoint.Chat, cap: 64, events: 1, osl: 10, source: metrics.SourceUsage, finish: "stop", usage: usageBelieved, truth: 10},
	{file: "anthropic-messages-stream.http", kind: endpoint.Messages, stream: true, cap: 64, events: 10, osl: 10, source: metrics.SourceUsage, finish: "end_turn", usage: usageBelieved, truth: 10},
	{file: "anthropic-messages.http", kind: endpoint.Messages, cap: 64, events: 1, osl: 10, source: metrics.SourceUsage, finish: "end_turn", usage: usageBelieved, truth: 10},
}

// rawServer answers each connection's request with resp, byte for byte,
// and closes the connection: a recorded answer replayed as it came off the
// wire (its head, its framing, its end).
func rawServer(t *testing.T, resp []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = c.Write(resp)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// corpusRun sends one request of kind to url, capped at capTokens, with
// a collector counting with tok, and returns its record and values.
func corpusRun(t *testing.T, url string, kind endpoint.Kind, stream bool, capTokens int, tok metrics.TokenCounter) (*metrics.Record, metrics.Values) {
	t.Helper()
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink), metrics.WithTokenizer(tok))
	ds := &datasets.Dataset{Name: "corpus", Conversations: []datasets.Conversation{{ID: "c",
		Turns: []datasets.Turn{{Text: "Write a haiku about the sea.", InputTokens: 8, MaxTokens: capTokens}}}}}
	g, err := New(url, &endpoint.Endpoint{Kind: kind, Model: "m", Streaming: stream}, ds, col)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(1), Count: 1}}); err != nil {
		t.Fatal(err)
	}
	col.Close()
	if len(sink.recs) != 1 {
		t.Fatalf("%d records, want 1", len(sink.recs))
	}
	return sink.recs[0], sink.vals[0]
}

// TestServerConformance reads every recorded answer of the corpus through
// a real socket and the generator's own reading, as a run would, and
// checks what surge makes of it. Each stream is also cut at the event
// boundary before its finish and inside that event: both must be errors,
// never a shorter success.
func TestServerConformance(t *testing.T) {
	t.Parallel()
	tok, err := tokenizer.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range serverCorpus {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("testdata", "servers", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			r, v := corpusRun(t, rawServer(t, raw), tc.kind, tc.stream, tc.cap, tok)
			if r.Err != nil {
				t.Fatalf("error %+v", r.Err)
			}
			usage := usageAbsent
			switch {
			case v.Distrust != nil:
				usage = v.Distrust.Sign
			case r.Usage.Present:
				usage = usageBelieved
			}
			resp, body := splitResponse(t, raw)
			got := []any{len(r.TokenNs), v.OSL, v.Source, answerFinish(t, body), usage, v.Batched, r.Streamed}
			want := []any{tc.events, tc.osl, tc.source, tc.finish, tc.usage, tc.batched, tc.stream}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("[text events, OSL, source, finish, usage, batched, streamed] = %v, want %v", got, want)
			}
			if tc.usage == usageBelieved && v.OSL != float64(tc.truth) {
				t.Errorf("OSL %v from a believed usage, the server generated %d", v.OSL, tc.truth)
			}
			if tc.batched && len(r.TokenNs) == 1 && !math.IsNaN(v.ITL) {
				t.Errorf("an answer in one event has ITL %v, want none", v.ITL)
			}
			if !tc.stream {
				return
			}
			for name, cut := range streamCuts(t, tc.kind, body) {
				cutResp := fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nConnection: close\r\n\r\n%s", resp.Header.Get("Content-Type"), cut)
				r, _ := corpusRun(t, rawServer(t, cutResp), tc.kind, tc.stream, tc.cap, tok)
				if r.Err == nil || r.Err.Type != ErrStream {
					t.Errorf("cut %s: error %+v, want a stream error", name, r.Err)
				}
			}
		})
	}
}

// splitResponse reads a recorded response: its head and its body as the
// framing (length, chunks, close) delimits it.
func splitResponse(t *testing.T, raw []byte) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// eventEnds are the offsets in body where each SSE event's blank line
// ends.
func eventEnds(body []byte) []int {
	var ends []int
	for i := 0; i < len(body); i++ {
		for _, sep := range []string{"\r\n\r\n", "\n\n", "\r\r"} {
			if bytes.HasPrefix(body[i:], []byte(sep)) {
				ends = append(ends, i+len(sep))
				i += len(sep) - 1
				break
			}
		}
	}
	return ends
}

// streamCuts are body cut where a stream must be an error: at the event
// boundary before the event that finishes the answer (its finish reason,
// or its end marker), and in the middle of that event.
func streamCuts(t *testing.T, kind endpoint.Kind, body []byte) map[string][]byte {
	t.Helper()
	ends := eventEnds(body)
	finished := func(b []byte) bool {
		dec := (&endpoint.Endpoint{Kind: kind}).NewDecoder()
		var out endpoint.Output
		rd := sse.NewReader(bytes.NewReader(b), nil)
		for {
			ev, err := rd.Next()
			if err != nil {
				return false
			}
			if d, _ := dec.Event(ev.Type, ev.Data, &out); d.Finished || d.Done {
				return true
			}
		}
	}
	prev := 0
	for _, end := range ends {
		if finished(body[:end]) {
			return map[string][]byte{
				"at the event boundary before the finish": body[:prev],
				"inside the finishing event":              body[:prev+(end-prev)/2],
			}
		}
		prev = end
	}
	t.Fatal("the stream never finishes")
	return nil
}

// answerFinish is how a recorded answer says it finished: the last
// non-empty finish_reason or stop_reason it carries ("" when it carries
// only empty ones or none).
func answerFinish(t *testing.T, body []byte) string {
	t.Helper()
	var reason string
	note := func(v any) {
		if s, ok := v.(string); ok && s != "" && s != "null" {
			reason = s
		}
	}
	look := func(data []byte) {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil {
			return
		}
		note(m["stop_reason"])
		if d, ok := m["delta"].(map[string]any); ok {
			note(d["stop_reason"])
		}
		if cs, ok := m["choices"].([]any); ok && len(cs) > 0 {
			if c, ok := cs[0].(map[string]any); ok {
				note(c["finish_reason"])
			}
		}
	}
	if !bytes.Contains(body, []byte("data:")) {
		look(body)
		return reason
	}
	rd := sse.NewReader(bytes.NewReader(body), nil)
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return reason
		}
		if err != nil {
			t.Fatalf("the recorded stream: %v", err)
		}
		look(ev.Data)
	}
}

// TestServerCorpusDocumented: every recorded answer is in the corpus
// table, and the docs' table names every server of it.
func TestServerCorpusDocumented(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "servers", "*.http"))
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]bool{}
	for _, tc := range serverCorpus {
		inTable[tc.file] = true
	}
	for _, f := range files {
		if !inTable[filepath.Base(f)] {
			t.Errorf("%s is not in serverCorpus", f)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "server-wire.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range serverCorpus {
		if !strings.Contains(string(doc), tc.file) {
			t.Errorf("docs/server-wire.md does not name %s", tc.file)
		}
	}
}
