package loadgen

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics"
)

// eventReader hands out one SSE event (up to and including its blank
// line) per Read and counts the Reads, so a clock that returns the count
// stamps each event with its 1-based position in the stream.
type eventReader struct {
	rest  []byte
	reads int64
}

func (r *eventReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	n := bytes.Index(r.rest, []byte("\n\n"))
	if n < 0 {
		n = len(r.rest)
	} else {
		n += 2
	}
	n = copy(p, r.rest[:n])
	r.rest = r.rest[n:]
	r.reads++
	return n, nil
}

// TestRealServerStreams reads each server's stream shape (testdata/streams,
// see its README) through the generator's own stream reader and checks
// which event is the first token, what OSL and text come out, and that the
// stream ends cleanly: also with its [DONE] cut off, which only a seen
// finish_reason makes a complete answer.
func TestRealServerStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file string
		// firstToken and firstContent are 1-based event positions; 0: none.
		firstToken, firstContent int64
		events                   int // text-carrying events
		osl                      float64
		text, reasoning          string
	}{
		// No role chunk: the very first event is a token.
		{file: "llamacpp.sse", firstToken: 1, firstContent: 1, events: 3, osl: 3, text: "Hello there!"},
		// The role-only first chunk is not a token; the usage-only chunk
		// after the finish gives OSL.
		{file: "vllm.sse", firstToken: 2, firstContent: 2, events: 3, osl: 3, text: "Hello there!"},
		// Null-filled deltas are not tokens; reasoning comes first.
		{file: "sglang.sse", firstToken: 2, firstContent: 3, events: 3, osl: 4, text: "Hello there!", reasoning: "Greet"},
		// role on every delta: the first chunk carries text and is a token.
		{file: "tgi.sse", firstToken: 1, firstContent: 1, events: 3, osl: 3, text: "Hello there!"},
		{file: "ollama.sse", firstToken: 1, firstContent: 1, events: 3, osl: 3, text: "Hello there!"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			full, err := os.ReadFile(filepath.Join("testdata", "streams", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			noDone, ok := bytes.CutSuffix(full, []byte("data: [DONE]\n\n"))
			if !ok {
				t.Fatalf("%s does not end with data: [DONE]", tc.file)
			}
			for _, b := range [][]byte{full, noDone} {
				col := metrics.NewCollector()
				g, err := New("http://127.0.0.1:1", chat(true), testDataset(t, 1), col)
				if err != nil {
					t.Fatal(err)
				}
				body := &eventReader{rest: b}
				g.now = func() int64 { return body.reads }
				rec := &metrics.Record{Streamed: true}
				g.readStream(context.Background(), context.Background(), body, rec, &prefillSlot{})
				col.Close()
				if rec.Err != nil {
					t.Fatalf("error %+v (with [DONE]: %v)", rec.Err, len(b) == len(full))
				}
				var first int64
				if len(rec.TokenNs) > 0 {
					first = rec.TokenNs[0]
				}
				v := metrics.Compute(rec, nil)
				got := []any{first, rec.FirstContentNs, len(rec.TokenNs), v.OSL, v.Source, rec.Text, rec.ReasoningText}
				want := []any{tc.firstToken, tc.firstContent, tc.events, tc.osl, metrics.SourceUsage, tc.text, tc.reasoning}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("[first token event, first content event, token events, OSL, source, text, reasoning] (-want +got):\n%s", d)
				}
			}
		})
	}
}
