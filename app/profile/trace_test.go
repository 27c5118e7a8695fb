package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
)

// stampServer answers chat requests after Wait with a short stream and
// keeps each request's arrival (from the first) and body.
type stampServer struct {
	Wait time.Duration
	mu   sync.Mutex
	t0   time.Time
	at   []time.Duration
	body []map[string]any
}

func (s *stampServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r) // the model and server look-ups
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	s.mu.Lock()
	now := time.Now()
	if s.t0.IsZero() {
		s.t0 = now
	}
	s.at = append(s.at, now.Sub(s.t0))
	s.body = append(s.body, body)
	s.mu.Unlock()
	time.Sleep(s.Wait)
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\" a\"}}]}\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// arrivals is every request's arrival from the first, in order.
func (s *stampServer) arrivals() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.at...)
}

// traceRun runs args (a trace replay) against a stampServer answering
// after wait, and returns the server.
func traceRun(t *testing.T, wait time.Duration, args ...string) *stampServer {
	t.Helper()
	s := &stampServer{Wait: wait}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := parseArgs(t, append([]string{"--url", srv.URL, "--skip-preflight", "--model", "m", "--streaming", "--ui", "none", "--tokenizer", "builtin",
		"--output-artifact-dir", t.TempDir(), "--no-gpu-telemetry", "--no-server-metrics"}, args...)...)
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return s
}

// TestReplaySpeedupEndToEnd: --replay-speedup 4 sends a trace's rows a
// quarter as far apart as recorded (800 ms → 200 ms), judged by the
// server's arrival stamps; --ignore-trace-delays sends them back to back.
func TestReplaySpeedupEndToEnd(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t, "m.jsonl", `{"timestamp": 0, "input_length": 20, "output_length": 2}
{"timestamp": 800, "input_length": 20, "output_length": 2}
{"timestamp": 1600, "input_length": 20, "output_length": 2}
`)
	at := traceRun(t, 0, "--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--replay-speedup", "4").arrivals()
	if len(at) != 3 || at[2] < 350*time.Millisecond || at[2] > 1000*time.Millisecond {
		t.Errorf("--replay-speedup 4: arrivals %v, want the last about 400 ms after the first (1.6 s recorded)", at)
	}
	at = traceRun(t, 0, "--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--ignore-trace-delays", "--concurrency", "3", "--request-count", "3").arrivals()
	if len(at) != 3 || at[2] > 500*time.Millisecond {
		t.Errorf("--ignore-trace-delays: arrivals %v, want them together", at)
	}
}

// TestBasetenOpenLoopEndToEnd: a Baseten session's second turn, recorded
// 600 ms after its first, is sent 600 ms after it in open loop (the first
// reply took 300 ms), and 600 ms after that reply with
// --no-open-loop-replay (no recorded duration: the whole gap is think
// time). By default each body carries min_tokens and the recorded KV
// hints; --omit-kv-hints and --no-force-min-tokens leave them out.
func TestBasetenOpenLoopEndToEnd(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t, "b.jsonl", `{"timestamp_start_unix_ms": 1000, "prompt": "hello there", "input_tokens": 2, "output_tokens": 3, "provided_session_id": "x", "total_hashes": [7], "block_size": 16}
{"timestamp_start_unix_ms": 1600, "prompt": "hello there again", "input_tokens": 3, "output_tokens": 3, "provided_session_id": "x", "total_hashes": [7, 8], "block_size": 16}
`)
	wait := 300 * time.Millisecond
	open := traceRun(t, wait, "--input-file", trace, "--custom-dataset-type", "baseten")
	at := open.arrivals()
	if len(at) != 2 || at[1] < 550*time.Millisecond || at[1] > 850*time.Millisecond {
		t.Errorf("open loop: second turn %v after the first, want about 600 ms", at)
	}
	if b := open.body[1]; b["min_tokens"] != 3.0 || b["block_size"] != 16.0 || fmt.Sprint(b["hash_ids"]) != "[7 8]" {
		t.Errorf("open loop body %v: want min_tokens 3 and the KV hints", b)
	}
	closed := traceRun(t, wait, "--input-file", trace, "--custom-dataset-type", "baseten", "--no-open-loop-replay", "--omit-kv-hints", "--no-force-min-tokens")
	if at := closed.arrivals(); len(at) != 2 || at[1] < 880*time.Millisecond {
		t.Errorf("closed loop: second turn %v after the first, want 300 ms reply + 600 ms think time", at)
	}
	for _, k := range []string{"min_tokens", "hash_ids", "block_size"} {
		if _, ok := closed.body[1][k]; ok {
			t.Errorf("closed loop body sends %s: %v", k, closed.body[1])
		}
	}
}

// TestTraceFlagsRefused: a replay flag a dataset type cannot honour is a
// usage error naming the flag, before anything is sent, whether the type
// is given or guessed from the file; a WEKA replay with more lanes than
// traces needs --allow-dataset-wrap.
func TestTraceFlagsRefused(t *testing.T) {
	t.Parallel()
	mc := writeTrace(t, "m.jsonl", `{"timestamp": 0, "input_length": 20, "output_length": 2}`+"\n")
	weka := filepath.Join("..", "..", "datasets", "testdata", "weka")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--input-file", mc, "--custom-dataset-type", "mooncake_trace", "--omit-kv-hints"}, "--omit-kv-hints applies to baseten only"},
		{[]string{"--input-file", mc, "--no-open-loop-replay"}, "--no-open-loop-replay applies to baseten only"},
		{[]string{"--input-file", mc, "--use-think-time-only"}, "--use-think-time-only applies to weka only"},
		{[]string{"--replay-speedup", "2"}, "--replay-speedup applies to trace types only"},
		{[]string{"--input-file", mc, "--allow-dataset-wrap", "--custom-dataset-type", "mooncake_trace"}, "--allow-dataset-wrap applies to a WEKA replay"},
		{[]string{"--input-file", weka, "--custom-dataset-type", "weka", "--no-fixed-schedule", "--concurrency", "5"}, "dataset wrapping is disabled"},
		{[]string{"--input-file", weka, "--custom-dataset-type", "weka", "--no-fixed-schedule", "--concurrency", "5", "--no-allow-dataset-wrap"}, "dataset wrapping is disabled"},
		{[]string{"--input-file", mc, "--ignore-trace-delays", "--fixed-schedule"}, "--ignore-trace-delays drops the timestamps --fixed-schedule replays"},
		{[]string{"--input-file", mc, "--trace-session-sample-ratio", "1.5"}, "--trace-session-sample-ratio"},
	} {
		c := parseArgs(t, append([]string{"--ui", "none", "--tokenizer", "builtin"}, tc.args...)...)
		_, err := prepareConfig(c, io.Discard)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	c := parseArgs(t, "--ui", "none", "--tokenizer", "builtin", "--input-file", weka, "--custom-dataset-type", "weka", "--no-fixed-schedule", "--concurrency", "5", "--allow-dataset-wrap")
	if _, err := prepareConfig(c, io.Discard); err != nil {
		t.Errorf("--allow-dataset-wrap: %v", err)
	}
}

// writeTrace writes a trace file for a test.
func writeTrace(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSynthesisEndToEnd: --synthesis-speedup-ratio 4 compresses a Mooncake
// trace's clock, --synthesis-output-len-multiplier 3 triples every output
// cap sent, --synthesis-max-isl leaves the long row out; a reshape of a
// Baseten trace is refused naming its flag.
func TestSynthesisEndToEnd(t *testing.T) {
	t.Parallel()
	trace := writeTrace(t, "m.jsonl", `{"timestamp": 0, "input_length": 20, "output_length": 2}
{"timestamp": 800, "input_length": 900, "output_length": 2}
{"timestamp": 1600, "input_length": 20, "output_length": 2}
`)
	s := traceRun(t, 0, "--input-file", trace, "--synthesis-speedup-ratio", "4", "--synthesis-output-len-multiplier", "3", "--synthesis-max-isl", "500")
	at := s.arrivals()
	if len(at) != 2 || at[1] < 350*time.Millisecond || at[1] > 1000*time.Millisecond {
		t.Errorf("arrivals %v, want 2 about 400 ms apart", at)
	}
	for _, b := range s.body {
		if b["max_completion_tokens"] != 6.0 {
			t.Errorf("body caps the output at %v, want 6", b["max_completion_tokens"])
		}
	}
	bt := writeTrace(t, "b.jsonl", `{"timestamp_start_unix_ms": 1000, "prompt": "hi", "input_tokens": 1, "output_tokens": 3}`+"\n")
	c := parseArgs(t, "--ui", "none", "--tokenizer", "builtin", "--input-file", bt, "--synthesis-prompt-len-multiplier", "2")
	_, err := prepareConfig(c, io.Discard)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--synthesis-prompt-len-multiplier does not apply to a baseten trace") {
		t.Errorf("baseten reshape: %v", err)
	}
}

// TestExportOutputsJSON: --export-outputs-json writes outputs.json with
// every profile response's text as the mock generated it, sorted by
// session, and the warmup's apart; without the flag there is none; a
// prefix names it <prefix>_outputs.json.
func TestExportOutputsJSON(t *testing.T) {
	t.Parallel()
	run := func(args ...string) string {
		dir := t.TempDir()
		c := parseArgs(t, append([]string{"--model", "mock", "--streaming", "--ui", "none", "--tokenizer", "builtin", "--request-count", "5",
			"--warmup-request-count", "2", "--isl", "8", "--osl", "3", "--output-artifact-dir", dir, "--no-gpu-telemetry", "--no-server-metrics"}, args...)...)
		if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir := run("--export-outputs-json")
	b, err := os.ReadFile(filepath.Join(dir, "outputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string `json:"schema_version"`
		Data   []struct {
			Session int64  `json:"session_num"`
			Text    string `json:"response_text"`
		} `json:"data"`
		Warmup []json.RawMessage `json:"warmup"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "1.1" || len(doc.Data) != 5 || len(doc.Warmup) != 2 {
		t.Fatalf("outputs.json: schema %q, %d profile and %d warmup entries", doc.Schema, len(doc.Data), len(doc.Warmup))
	}
	for i, d := range doc.Data {
		if strings.TrimSpace(d.Text) == "" || (i > 0 && d.Session < doc.Data[i-1].Session) {
			t.Errorf("entry %d: session %d, text %q", i, d.Session, d.Text)
		}
	}
	if _, err := os.Stat(filepath.Join(run(), "outputs.json")); !os.IsNotExist(err) {
		t.Errorf("outputs.json without the flag: %v", err)
	}
	if _, err := os.Stat(filepath.Join(run("--export-outputs-json", "--profile-export-prefix", "foo"), "foo_outputs.json")); err != nil {
		t.Errorf("with a prefix: %v", err)
	}
}

// newStampURL serves s for one test and returns its URL.
func newStampURL(t *testing.T, s *stampServer) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRequestRateSeriesEndToEnd: --request-rate-series sends at the
// series' rate (2/s constant: 500 ms apart, judged by the server's
// stamps), from AIPerf's JSON file or an inline list; it excludes
// --request-rate.
func TestRequestRateSeriesEndToEnd(t *testing.T) {
	t.Parallel()
	file := writeTrace(t, "series.json", `{"points": [{"time_s": 0, "qps": 2}, {"time_s": 10, "qps": 2}]}`)
	for _, series := range []string{file, "0:2,10:2"} {
		at := traceRun(t, 0, "--request-rate-series", series, "--arrival-pattern", "constant", "--request-count", "3", "--isl", "8", "--osl", "2").arrivals()
		if len(at) != 3 || at[1] < 400*time.Millisecond || at[1] > 700*time.Millisecond || at[2] < 900*time.Millisecond || at[2] > 1300*time.Millisecond {
			t.Errorf("%s: arrivals %v, want 500 ms apart", series, at)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--request-rate-series", "0:2", "--request-rate", "3"}, "drop --request-rate"},
		{[]string{"--request-rate-series", "0:0,5:0"}, "every rate is 0"},
		{[]string{"--request-rate-series", "5:1,2:1"}, "times must increase"},
		{[]string{"--request-rate-series", "nope.json"}, "no such file"},
		{[]string{"--request-rate-series", writeTrace(t, "bad.json", `{"points": [{"t": 0}]}`)}, "want a JSON object"},
		{[]string{"--request-rate-series", "0:2", "--concurrency", "1,2"}, "one --concurrency cap"},
	} {
		_, err := spec.Parse(parseArgs(t, tc.args...))
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestCacheBustEndToEnd: --cache-bust first_turn_prefix starts every
// session's user message with a marker of its own (AIPerf's [rid:…]),
// and system_suffix ends the system prompt with it; without the flag no
// body has one. A recorded body cannot take a marker: refused. With
// --cache-bust a WEKA replay may wrap its traces.
func TestCacheBustEndToEnd(t *testing.T) {
	t.Parallel()
	firstUser := func(b map[string]any, role string) string {
		for _, m := range b["messages"].([]any) {
			if mm := m.(map[string]any); mm["role"] == role {
				s, _ := mm["content"].(string)
				return s
			}
		}
		return ""
	}
	rid := regexp.MustCompile(`\[rid:[0-9a-f]{12}\]`)
	s := traceRun(t, 0, "--cache-bust", "first_turn_prefix", "--concurrency", "2", "--request-count", "6", "--isl", "8", "--osl", "2", "--num-dataset-entries", "2")
	seen := map[string]bool{}
	for _, b := range s.body {
		u := firstUser(b, "user")
		m := rid.FindString(u)
		if m == "" || !strings.HasPrefix(u, m+"\n\n") {
			t.Errorf("first_turn_prefix: user message %q", u)
		}
		seen[m] = true
	}
	if len(seen) != 6 {
		t.Errorf("%d distinct markers over 6 sessions of 2 conversations", len(seen))
	}
	s = traceRun(t, 0, "--cache-bust", "system_suffix", "--system-prompt", "be brief", "--request-count", "2", "--isl", "8", "--osl", "2")
	for _, b := range s.body {
		if sys := firstUser(b, "system"); !strings.HasPrefix(sys, "be brief\n\n[rid:") {
			t.Errorf("system_suffix: system message %q", sys)
		}
	}
	s = traceRun(t, 0, "--request-count", "2", "--isl", "8", "--osl", "2")
	for _, b := range s.body {
		if rid.MatchString(firstUser(b, "user")) {
			t.Errorf("a marker without --cache-bust")
		}
	}
	raw := writeTrace(t, "raw.jsonl", `{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`+"\n")
	c := parseArgs(t, "--ui", "none", "--tokenizer", "builtin", "--input-file", raw, "--custom-dataset-type", "raw_payload", "--cache-bust", "first_turn_prefix")
	_, err := prepareConfig(c, io.Discard)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "a cache-bust marker cannot go into it") {
		t.Errorf("raw payload: %v", err)
	}
	weka := filepath.Join("..", "..", "datasets", "testdata", "weka")
	c = parseArgs(t, "--ui", "none", "--tokenizer", "builtin", "--input-file", weka, "--custom-dataset-type", "weka", "--no-fixed-schedule", "--concurrency", "5", "--cache-bust", "first_turn_prefix")
	if _, err := prepareConfig(c, io.Discard); err != nil {
		t.Errorf("weka wrap with --cache-bust: %v", err)
	}
}

// TestUserContextEndToEnd: --user-context-prompt-length gives each of
// the 3 synthetic conversations a user message of its own after the
// system prompt and before the turns, in every request (a later turn's
// too); with a file it is refused.
func TestUserContextEndToEnd(t *testing.T) {
	t.Parallel()
	s := traceRun(t, 0, "--user-context-prompt-length", "20", "--num-dataset-entries", "3", "--request-count", "12", "--conversation-turn-mean", "2",
		"--system-prompt", "be brief", "--isl", "8", "--osl", "2")
	contexts := map[string]int{}
	for _, b := range s.body {
		msgs := b["messages"].([]any)
		roles := ""
		for _, m := range msgs {
			roles += m.(map[string]any)["role"].(string)[:1]
		}
		if roles != "suu" && roles != "suuau" {
			t.Errorf("message roles %q, want system, user context, then the turns", roles)
			continue
		}
		contexts[msgs[1].(map[string]any)["content"].(string)]++
	}
	if len(contexts) != 3 {
		t.Errorf("%d distinct user contexts over 3 conversations", len(contexts))
	}
	for ctx := range contexts {
		if n := len(strings.Fields(ctx)); n < 8 {
			t.Errorf("a user context of %d words, want about 20 tokens: %q", n, ctx)
		}
	}
	mc := writeTrace(t, "m.jsonl", `{"timestamp": 0, "input_length": 20, "output_length": 2}`+"\n")
	_, err := spec.Parse(parseArgs(t, "--input-file", mc, "--user-context-prompt-length", "20"))
	if err == nil || !strings.Contains(err.Error(), "shapes synthetic prompts") {
		t.Errorf("with a file: %v", err)
	}
	if _, err := spec.Parse(parseArgs(t, "--user-context-prompt-length", "20", "--prompt-prefix-pool-size", "2", "--prompt-prefix-length", "4")); err == nil {
		t.Errorf("with a prefix pool: no error")
	}
}

// TestTextBatchEndToEnd: --batch-size-text 3 sends every embeddings
// request with three texts; a chat endpoint refuses it.
func TestTextBatchEndToEnd(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var inputs []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var b struct {
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		inputs = append(inputs, len(b.Input))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"data": [{"embedding": [0.1]}, {"embedding": [0.2]}, {"embedding": [0.3]}]}`)
	}))
	defer srv.Close()
	c := parseArgs(t, "--url", srv.URL, "--skip-preflight", "--model", "m", "--endpoint-type", "embeddings", "--ui", "none", "--tokenizer", "builtin", "--request-count", "4",
		"--isl", "8", "--batch-size-text", "3", "--output-artifact-dir", t.TempDir(), "--no-gpu-telemetry", "--no-server-metrics")
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(inputs) != "[3 3 3 3]" {
		t.Errorf("inputs a request %v, want 3 each", inputs)
	}
	if _, err := spec.Parse(parseArgs(t, "-b", "2")); err == nil || !strings.Contains(err.Error(), "batches the texts of an embeddings request") {
		t.Errorf("chat with a batch: %v", err)
	}
}
