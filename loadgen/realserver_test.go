package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// replayServer answers every request with body, a captured SSE stream,
// one event per write, and closes the connection after it as llama.cpp's
// server does.
func replayServer(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	events := bytes.SplitAfter(body, []byte("\n\n"))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Connection", "close")
		for _, ev := range events {
			if len(ev) == 0 {
				continue
			}
			w.Write(ev)
			w.(http.Flusher).Flush()
			time.Sleep(time.Millisecond) // tokens apart in time, as a server sends them
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// readStreamFile reads a stream of testdata/streams.
func readStreamFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "streams", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// oneTurnDataset is n conversations of one turn that say they send isl
// tokens and ask for osl.
func oneTurnDataset(n, isl, osl int) *datasets.Dataset {
	ds := &datasets.Dataset{Name: "test"}
	for i := range n {
		ds.Conversations = append(ds.Conversations, datasets.Conversation{
			ID:    fmt.Sprintf("c%d", i),
			Turns: []datasets.Turn{{Text: fmt.Sprintf("prompt number %d", i), InputTokens: isl, MaxTokens: osl}},
		})
	}
	return ds
}

// runCollected runs count requests of ds at concurrency 2 against url,
// with the collector's options, and returns the summary, every record
// with its values, and the warnings the generator gave.
func runCollected(t *testing.T, url string, ds *datasets.Dataset, count int, colOpts []metrics.Option, genOpts ...Option) (*metrics.Summary, *collectSink, []string) {
	t.Helper()
	sink := &collectSink{}
	start := time.Now()
	col := metrics.NewCollector(append([]metrics.Option{metrics.WithSink(sink), metrics.WithClock(func() int64 { return int64(time.Since(start)) })}, colOpts...)...)
	warnings := make(chan string, 16)
	opts := append([]Option{WithStart(start), WithWarning(func(m string) { warnings <- m })}, genOpts...)
	g, err := New(url, chat(true), ds, col, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(2), Count: count}}); err != nil {
		t.Fatal(err)
	}
	s := col.Close()
	close(warnings)
	var ws []string
	for w := range warnings {
		ws = append(ws, w)
	}
	return s, sink, ws
}

// TestServerCountsOnRealLlamaCpp replays real llama.cpp streams (5 tokens
// for max_tokens 5, usage in the last chunk) under each counting policy:
// by default OSL and ITL come from the server's usage and the tokenizer's
// count is kept beside it; re-tokenizing gives the tokenizer's count, and
// the OSL mismatch check still judges the server's count (which hit the cap
// exactly); the server's input count replaces the dataset's only when
// asked.
func TestServerCountsOnRealLlamaCpp(t *testing.T) {
	t.Parallel()
	tok, err := tokenizer.Default()
	if err != nil {
		t.Fatal(err)
	}
	differ := 0 // streams whose re-tokenized count is not the server's
	for _, file := range []string{"llamacpp-b4747-real-1.sse", "llamacpp-b4747-real-2.sse"} {
		body := readStreamFile(t, file)
		ts := replayServer(t, body)
		var text strings.Builder
		for _, part := range strings.Split(string(body), `"content":"`)[1:] {
			text.WriteString(part[:strings.IndexByte(part, '"')])
		}
		retok := float64(tok.Count(strings.ReplaceAll(text.String(), `\n`, "\n")))
		if retok != 5 {
			differ++
		}
		cases := []struct {
			name             string
			counting         metrics.Counting
			osl, isl         float64
			source, inSource string
		}{
			{"default: server's usage", metrics.Counting{}, 5, 16, metrics.SourceUsage, metrics.InputFromDataset},
			{"re-tokenized", metrics.Counting{Retokenize: true}, retok, 16, metrics.SourceTokenizer, metrics.InputFromDataset},
			{"server's counts for input too", metrics.Counting{ServerInput: true}, 5, 12, metrics.SourceUsage, metrics.InputFromUsage},
		}
		for _, tc := range cases {
			t.Run(file+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s, sink, _ := runCollected(t, ts.URL, oneTurnDataset(4, 16, 5), 6,
					[]metrics.Option{metrics.WithTokenizer(tok), metrics.WithCounting(tc.counting)})
				if len(sink.recs) != 6 || s.Run[metrics.ErrorRequestCount] != 0 {
					t.Fatalf("%d records, errors %+v", len(sink.recs), s.Errors)
				}
				for i, v := range sink.vals {
					r := sink.recs[i]
					if v.OSL != tc.osl || v.ISL != tc.isl || v.Source != tc.source || v.InputSource != tc.inSource {
						t.Errorf("OSL %v ISL %v from %s/%s, want %v %v from %s/%s", v.OSL, v.ISL, v.Source, v.InputSource, tc.osl, tc.isl, tc.source, tc.inSource)
					}
					// Both counts are kept, whichever OSL used.
					if v.TokenizerOSL != retok || v.Get(metrics.UsageCompletion) != 5 || v.Get(metrics.UsagePrompt) != 12 {
						t.Errorf("tokenizer %v usage completion %v prompt %v, want %v 5 12", v.TokenizerOSL, v.Get(metrics.UsageCompletion), v.Get(metrics.UsagePrompt), retok)
					}
					wantITL := (v.Latency - v.TTFT) / (tc.osl - 1)
					if math.Abs(v.ITL-wantITL) > 1e-9 {
						t.Errorf("ITL %v, want (latency − TTFT)/(OSL − 1) = %v", v.ITL, wantITL)
					}
					if v.Mismatched || v.Truncated || r.UsageChunks != 0 {
						t.Errorf("mismatched %v truncated %v usage chunks %d: the server stopped at the cap, kept the prompt, sent usage once", v.Mismatched, v.Truncated, r.UsageChunks)
					}
				}
				if s.Run[metrics.OSLMismatchCount] != 0 || s.Run[metrics.PromptTruncatedCount] != 0 {
					t.Errorf("osl_mismatch_count %v prompt_truncated_count %v, want 0 0", s.Run[metrics.OSLMismatchCount], s.Run[metrics.PromptTruncatedCount])
				}
				if s.TokenSource != tc.source || s.InputTokenSource != tc.inSource {
					t.Errorf("summary sources %q %q, want %q %q", s.TokenSource, s.InputTokenSource, tc.source, tc.inSource)
				}
				if d := s.Metrics[metrics.TokenizerOSL]; d.Count != 6 || d.Avg != retok {
					t.Errorf("tokenizer_output_sequence_length %+v, want 6 values of %v", d, retok)
				}
			})
		}
	}
	if differ == 0 {
		t.Error("the tokenizer counts every stream's text as the server did: the test shows no difference")
	}
}

// TestTruncatedPromptCaught replays a real llama.cpp stream whose
// usage.prompt_tokens says the server kept 599 of the 1,100 tokens sent
// (what llama.cpp did with a 1,024-token slot): the run warns once while it
// goes, counts every such request, and names both counts and the cause. A
// server count a template's few tokens above what was sent is no cut.
func TestTruncatedPromptCaught(t *testing.T) {
	t.Parallel()
	real := readStreamFile(t, "llamacpp-b4747-real-1.sse")
	cut := bytes.Replace(real, []byte(`"prompt_tokens":12,"total_tokens":17`), []byte(`"prompt_tokens":599,"total_tokens":604`), 1)
	if bytes.Equal(cut, real) {
		t.Fatal("the fixture's usage changed: no prompt_tokens to rewrite")
	}
	cases := []struct {
		name      string
		body      []byte
		sent      int
		truncated float64
	}{
		{"cut to the slot's context", cut, 1100, 8},
		{"template adds tokens", real, 10, 0},
		{"within the margin", cut, 700, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := replayServer(t, tc.body)
			col := []metrics.Option{}
			s, _, _ := runCollected(t, ts.URL, oneTurnDataset(4, tc.sent, 5), 8, col)
			if got := s.Run[metrics.PromptTruncatedCount]; got != tc.truncated {
				t.Errorf("prompt_truncated_count %v, want %v", got, tc.truncated)
			}
			var cutWarnings []string
			for _, w := range s.Warnings {
				if strings.Contains(w, "cut") {
					cutWarnings = append(cutWarnings, w)
				}
			}
			if tc.truncated == 0 {
				if len(cutWarnings) != 0 {
					t.Errorf("warnings %q for prompts the server kept", cutWarnings)
				}
				return
			}
			// One live warning (the first cut) and the summary's count.
			if len(cutWarnings) != 2 {
				t.Fatalf("warnings %q, want the live one and the summary's", cutWarnings)
			}
			for _, want := range []string{"8 of 8 requests", "599", "1100", "context length", "surge's counts"} {
				if !strings.Contains(cutWarnings[1], want) {
					t.Errorf("summary warning %q does not say %q", cutWarnings[1], want)
				}
			}
			if isl, server := s.Metrics[metrics.ISL], s.Metrics[metrics.UsagePrompt]; isl.Avg != 1100 || server.Avg != 599 {
				t.Errorf("ISL avg %v, usage_prompt_tokens avg %v: want both counts, 1100 and 599", isl.Avg, server.Avg)
			}
		})
	}
}

// chunkServer streams chunks that carry several tokens each (as
// speculative decoding does): tokens[i] words in chunk i, with the running
// usage on every chunk when perChunk is set, else only in the last one.
func chunkServer(t *testing.T, tokens []int, perChunk bool) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		total := 0
		for i, n := range tokens {
			total += n
			usage := ""
			if perChunk {
				usage = fmt.Sprintf(`,"usage":{"prompt_tokens":16,"completion_tokens":%d,"total_tokens":%d}`, total, 16+total)
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]%s}\n\n", strings.Repeat(" w", n), usage)
			w.(http.Flusher).Flush()
			if i < len(tokens)-1 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":16,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", total, 16+total)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestMultiTokenChunks streams 8 tokens in 4 chunks (3, 1, 2, 2). With
// per-chunk usage the client knows the first chunk's 3 tokens came with
// TTFT: ITL is the decode time over the 5 tokens after them, and the
// summary counts the 3 chunks of several tokens. Without it the summary
// still says the requests had more tokens than chunks. OSL is the
// server's 8 either way, never the 4 chunks.
func TestMultiTokenChunks(t *testing.T) {
	t.Parallel()
	tokens := []int{3, 1, 2, 2}
	for _, perChunk := range []bool{true, false} {
		t.Run(fmt.Sprintf("per-chunk usage %v", perChunk), func(t *testing.T) {
			t.Parallel()
			ts := chunkServer(t, tokens, perChunk)
			s, sink, _ := runCollected(t, ts.URL, oneTurnDataset(4, 16, 8), 6, nil)
			if len(sink.recs) != 6 || s.Run[metrics.ErrorRequestCount] != 0 {
				t.Fatalf("%d records, errors %+v", len(sink.recs), s.Errors)
			}
			after := 7.0 // tokens after the first, as AIPerf counts
			if perChunk {
				after = 5
			}
			for i, v := range sink.vals {
				r := sink.recs[i]
				if v.OSL != 8 || len(r.TokenNs) != 4 {
					t.Fatalf("OSL %v in %d chunks, want 8 in 4", v.OSL, len(r.TokenNs))
				}
				if want := (v.Latency - v.TTFT) / after; math.Abs(v.ITL-want) > 1e-9 || math.Abs(v.PerUser-1000/want) > 1e-9 {
					t.Errorf("ITL %v per-user %v, want %v and %v", v.ITL, v.PerUser, want, 1000/want)
				}
				wantChunks := [3]int{0, 0, 0}
				if perChunk {
					wantChunks = [3]int{4, 3, 3}
				}
				if got := [3]int{r.UsageChunks, r.MultiTokenChunks, r.FirstChunkTokens}; got != wantChunks {
					t.Errorf("usage chunks, multi-token chunks, first chunk's tokens %v, want %v", got, wantChunks)
				}
			}
			want := "6 requests had more tokens than chunks (48 tokens in 24 chunks"
			if perChunk {
				want = "18 of 24 chunks carried more than one token"
			}
			if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
				t.Errorf("warnings %q do not say %q", s.Warnings, want)
			}
		})
	}
}

// TestCapGuard runs against a mock that ignores max_completion_tokens and
// streams 400 tokens for a cap of 8: the guard ends each response once it
// is past 4× the cap, records why, and warns; without the guard the
// responses run to the end.
func TestCapGuard(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(mockserver.New(mockserver.Config{IgnoreMaxCompletionTokens: true, DefaultOutputTokens: 400}))
	t.Cleanup(ts.Close)
	for _, guard := range []bool{true, false} {
		t.Run(fmt.Sprintf("guard %v", guard), func(t *testing.T) {
			t.Parallel()
			var opts []Option
			if !guard {
				opts = append(opts, WithoutCapGuard())
			}
			s, sink, warnings := runCollected(t, ts.URL, oneTurnDataset(4, 16, 8), 6, nil, opts...)
			if len(sink.recs) != 6 {
				t.Fatalf("%d records", len(sink.recs))
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "asked for 8 tokens") {
				t.Errorf("warnings %q, want one about the cap", warnings)
			}
			for _, r := range sink.recs {
				if !guard {
					if r.Err != nil || len(r.TokenNs) != 400 {
						t.Errorf("error %+v after %d tokens: without the guard the response runs to its end (400)", r.Err, len(r.TokenNs))
					}
					continue
				}
				if r.Err == nil || r.Err.Type != ErrOverCap || len(r.TokenNs) != CapGuardFactor*8+1 {
					t.Fatalf("error %+v after %d tokens, want %s after %d", r.Err, len(r.TokenNs), ErrOverCap, CapGuardFactor*8+1)
				}
				if !strings.Contains(r.Err.Message, "33 tokens for a cap of 8") {
					t.Errorf("message %q does not say how far past its cap the response ran", r.Err.Message)
				}
			}
			if guard && s.Run[metrics.ErrorRequestCount] != 6 {
				t.Errorf("error_request_count %v, want 6", s.Run[metrics.ErrorRequestCount])
			}
		})
	}
}

// TestPerChunkUsageAsked: the endpoint's PerChunkUsage asks for the
// running usage on every chunk (continuous_usage_stats); the mock, sending
// 3 tokens a chunk for a cap of 8, then shows chunks of 3, 3 and 2. Without
// it the chunks carry no usage and only the totals say tokens outnumber
// chunks.
func TestPerChunkUsageAsked(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(mockserver.New(mockserver.Config{TokensPerChunk: 3}))
	t.Cleanup(ts.Close)
	for _, asked := range []bool{true, false} {
		t.Run(fmt.Sprintf("asked %v", asked), func(t *testing.T) {
			t.Parallel()
			sink := &collectSink{}
			col := metrics.NewCollector(metrics.WithSink(sink))
			ep := &endpoint.Endpoint{Kind: endpoint.Chat, Model: "m", Streaming: true, PerChunkUsage: asked}
			g, err := New(ts.URL, ep, oneTurnDataset(2, 16, 8), col)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Run(context.Background(), []Stage{{Limit: schedule.Constant(2), Count: 4}}); err != nil {
				t.Fatal(err)
			}
			s := col.Close()
			want := [3]int{3, 3, 3}
			if !asked {
				want = [3]int{}
			}
			for i, r := range sink.recs {
				if got := [3]int{r.UsageChunks, r.MultiTokenChunks, r.FirstChunkTokens}; got != want || sink.vals[i].OSL != 8 || len(r.TokenNs) != 3 {
					t.Errorf("usage chunks, multi-token chunks, first chunk's tokens %v, OSL %v in %d chunks; want %v, 8 in 3", got, sink.vals[i].OSL, len(r.TokenNs), want)
				}
			}
			if !slices.ContainsFunc(s.Warnings, func(w string) bool {
				return strings.Contains(w, "more than one token") || strings.Contains(w, "more tokens than chunks")
			}) {
				t.Errorf("warnings %q say nothing of the chunks", s.Warnings)
			}
		})
	}
}
