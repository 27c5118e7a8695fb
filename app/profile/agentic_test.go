package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics"
)

// agentMock starts a mock of cfg for one test.
func agentMock(t *testing.T, cfg mockserver.Config) *mockserver.Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m, err := mockserver.Start(ctx, "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = m.Close(context.Background()) })
	return m
}

// payloads are every request body of a run's inputs.json, by session.
func payloads(t *testing.T, dir string) [][]map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileInputs))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data []struct {
			Payloads []map[string]any `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out [][]map[string]any
	for _, d := range doc.Data {
		out = append(out, d.Payloads)
	}
	return out
}

// roles lists a chat body's message roles, a * after an assistant's that
// calls tools.
func roles(body map[string]any) string {
	var b strings.Builder
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		m := m.(map[string]any)
		b.WriteString(m["role"].(string)[:1])
		if _, ok := m["tool_calls"]; ok {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// TestToolLoopRun: --tool-loop answers the mock's calls with results of
// --tool-result-tokens words after --tool-delay, at most
// --tool-loop-max-rounds rounds a turn; the bodies carry the calls and
// their results, the mock counts each result, and the exports say what
// the sessions did.
func TestToolLoopRun(t *testing.T) {
	t.Parallel()
	m := agentMock(t, mockserver.Config{ToolCallRate: 1, PrefixCache: true, DefaultOutputTokens: 8})
	dir := t.TempDir()
	c := apptest.RunConfig(m.URL(), dir)
	c.Concurrency, c.RequestCount, c.ConversationNum, c.TurnsMean = "2", 0, 4, 2
	c.ToolLoop, c.ToolResultTokens, c.ToolDelay, c.ToolLoopRounds = true, 24, 15*time.Millisecond, 2
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	// 4 sessions of 2 turns, each answered twice: 24 requests.
	recs := apptest.RecordLines(t, dir)
	if len(recs) != 24 {
		t.Fatalf("%d records, want 24", len(recs))
	}
	for _, r := range recs {
		sg := r["surge"].(map[string]any)
		round, _ := sg["tool_round"].(float64)
		wait, _ := sg["tool_wait_ns"].(float64)
		if round > 2 || round > 0 && (sg["turn_kind"] != "tool_result" || time.Duration(wait) < 15*time.Millisecond) {
			t.Errorf("record %v", sg)
		}
	}
	for _, ps := range payloads(t, dir) {
		if len(ps) != 6 {
			t.Fatalf("a session sent %d bodies, want 6", len(ps))
		}
		// The second round's calls are answered too before the next turn,
		// though no request carries them alone (the loop's bound).
		if got := roles(ps[5]); got != "ua*ta*ta*tua*ta*t" {
			t.Errorf("the last body's messages: %s", got)
		}
		msgs := ps[5]["messages"].([]any)
		result := msgs[len(msgs)-1].(map[string]any)
		if n := len(strings.Fields(result["content"].(string))); n < 12 || n > 24 || result["tool_call_id"] == "" {
			t.Errorf("a tool result of %d words (24 tokens asked): %v", n, result)
		}
		if tools, _ := ps[0]["tools"].([]any); len(tools) != 3 {
			t.Errorf("a turn offers %d tools, want surge's 3", len(tools))
		}
	}
	st := m.Server().Stats()
	if st.ToolResults == 0 || st.ToolRejected != 0 || st.ToolCalls != 24 {
		t.Errorf("mock stats %+v", st)
	}
	ex := apptest.ReadExport(t, dir)
	ss := ex["sessions"].(map[string]any)
	if ss["count"] != 4.0 || ss["tool_calls"] != 24.0 || ss["tool_result_requests"] != 16.0 || ss["cached_token_fraction"] == nil {
		t.Errorf("sessions %v", ss)
	}
	if tl := ex["run_info"].(map[string]any)["tool_loop"].(map[string]any); tl["requests"] != 16.0 || tl["result_tokens"] != 24.0 {
		t.Errorf("run_info tool_loop %v", tl)
	}
}

// TestWekaRunToolMessages: a WEKA trace replays its tool uses as tool
// calls and results, which the mock checks and counts.
func TestWekaRunToolMessages(t *testing.T) {
	t.Parallel()
	m := agentMock(t, mockserver.Config{DefaultOutputTokens: 4})
	dir := t.TempDir()
	c := apptest.RunConfig(m.URL(), dir)
	c.InputFile, c.CustomDatasetType, c.RequestCount, c.Concurrency, c.NoFixedSchedule = "../../datasets/testdata/weka", "weka", 24, "5", true
	c.TurnDelayRatio, c.AllowWrap = 0.01, true // 5 lanes replay 2 traces
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	st := m.Server().Stats()
	if st.ToolResults == 0 || st.ToolRejected != 0 || st.BadRequests != 0 {
		t.Fatalf("mock stats %+v", st)
	}
	tools := 0
	for _, ps := range payloads(t, dir) {
		for _, p := range ps {
			if strings.HasSuffix(roles(p), "a*t") {
				tools++
			}
		}
	}
	if tools != 13 {
		t.Errorf("%d bodies end in a tool result, want the trace's 13 calls after a tool use", tools)
	}
}

// TestSessionArrivalRun: sessions start on their own clock, turned away
// at the --concurrency ceiling; --session-arrival-pattern constant spaces
// them exactly; each session's first turn opens with its own marker
// (first_turn_prefix).
func TestSessionArrivalRun(t *testing.T) {
	t.Parallel()
	m := agentMock(t, mockserver.Config{TTFT: 60 * time.Millisecond, DefaultOutputTokens: 4})
	dir := t.TempDir()
	c := apptest.RunConfig(m.URL(), dir)
	c.Concurrency, c.RequestCount = "1", 10
	c.SessionArrivalRate, c.SessionArrivalPattern = 50, "constant"
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	ex := apptest.ReadExport(t, dir)
	info := ex["run_info"].(map[string]any)
	rejected := info["session_starts_rejected"].(float64)
	recs := apptest.RecordLines(t, dir)
	if info["mode"] != ModeSessionArrival || rejected < 5 || len(recs)+int(rejected) != 10 {
		t.Fatalf("mode %v: %d sent, %v rejected of 10 starts", info["mode"], len(recs), rejected)
	}
	var intended []float64
	for _, r := range recs {
		intended = append(intended, r["surge"].(map[string]any)["intended_ns"].(float64))
	}
	for i := 1; i < len(intended); i++ {
		if gap := time.Duration(intended[i] - intended[i-1]); gap%(20*time.Millisecond) > time.Millisecond && gap%(20*time.Millisecond) < 19*time.Millisecond {
			t.Errorf("constant arrivals %v apart, not a multiple of 20 ms", gap)
		}
	}
	seen := map[string]bool{}
	for _, ps := range payloads(t, dir) {
		msgs := ps[0]["messages"].([]any)
		first := msgs[len(msgs)-1].(map[string]any)
		text, _ := first["content"].(string)
		marker, _, _ := strings.Cut(text, "\n\n")
		if first["role"] != "user" || !strings.HasPrefix(marker, "[rid:") || seen[marker] {
			t.Errorf("a session opens with %v", first)
		}
		seen[marker] = true
	}
}

// TestReplayPlan: the replay flags build agentic replay's stages: the
// priming when lanes start part-way (--trajectory-start-*), the
// cache-pressure warmup (--agentic-cache-warmup-duration), and the
// profile; --burst-phase-starts, --agentic-warmup-grace-period and
// --system-idle-gap-cap-seconds reach the lanes.
func TestReplayPlan(t *testing.T) {
	t.Parallel()
	base := func() cmdline.Config {
		c := apptest.RunConfig("", t.TempDir())
		c.InputFile, c.CustomDatasetType, c.Concurrency, c.RequestCount = "../../datasets/testdata/weka", "weka", "3", 0
		return c
	}
	c := base()
	c.TrajectoryMax, c.TrajectoryMaxSet, c.BurstPhaseStarts = 0.5, true, true
	c.AgenticWarmupGrace, c.AgenticGraceSet = 2*time.Second, true
	c.SystemIdleGapCap, c.IdleGapCapSet, c.AgenticCacheWarmup = time.Second, true, 300*time.Millisecond
	p, err := prepareConfig(c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	st := p.plan.stages
	if len(st) != 3 || st[0].Lanes.Part != loadgen.Prime || st[1].Lanes.Part != loadgen.Pressure || st[1].Duration != 300*time.Millisecond ||
		st[2].Lanes.Part != loadgen.Profile || st[2].Phase != metrics.Profile || p.plan.mode != ModeAgenticReplay {
		t.Fatalf("stages %+v", st)
	}
	r := p.replay
	if !r.Burst || r.Grace != 2*time.Second || r.IdleGapCap != time.Second || len(r.Starts) != 3 {
		t.Fatalf("replay %+v", r)
	}
	for _, s := range r.Starts {
		// Between 0.25 (the default lower bound) and 0.5 of the turns.
		n := len(p.ds.Conversations[s.Conversation].Turns)
		if s.Turn < n/4+1 || s.Turn > n/2+1 {
			t.Errorf("a lane of %d turns starts at %d", n, s.Turn)
		}
	}
	// One pass over the traces without a bound.
	if st[2].SessionCount != len(p.ds.Conversations) || st[2].Count != 0 {
		t.Errorf("profile bounds %+v", st[2])
	}
	// No window: the lanes start at their first turns, with no priming.
	c = base()
	c.BurstPhaseStarts = true
	if p, err = prepareConfig(c, io.Discard); err != nil {
		t.Fatal(err)
	}
	if len(p.plan.stages) != 1 || p.replay.Primed() {
		t.Fatalf("no window: %d stages, primed %v", len(p.plan.stages), p.replay.Primed())
	}
}

// TestReplayRun: a replay run primes its lanes' turns before their
// starts with one output token (warmup records), then profiles from the
// starts.
func TestReplayRun(t *testing.T) {
	t.Parallel()
	m := agentMock(t, mockserver.Config{DefaultOutputTokens: 4})
	dir := t.TempDir()
	c := apptest.RunConfig(m.URL(), dir)
	c.InputFile, c.CustomDatasetType, c.Concurrency, c.RequestCount = "../../datasets/testdata/weka", "weka", "2", 6
	c.TrajectoryMin, c.TrajectoryMax, c.TrajectoryMinSet, c.TrajectoryMaxSet = 0.5, 0.5, true, true
	c.BurstPhaseStarts, c.TurnDelayRatio = true, 0.01
	var out bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	ex := apptest.ReadExport(t, dir)
	if w, ok := ex["warmup_metrics"].(map[string]any); !ok || apptest.RunAvg(t, w, "request_count") != 2 {
		t.Fatalf("warmup %v", ex["warmup_metrics"])
	}
	phases := map[any]int{}
	for _, r := range apptest.RecordLines(t, dir) {
		phases[r["metadata"].(map[string]any)["benchmark_phase"]]++
	}
	if phases["profiling"] != 6 || phases["warmup"] != 2 {
		t.Fatalf("records by phase %v, want 6 profile and 2 warmup", phases)
	}
	lanes := ex["run_info"].(map[string]any)["agentic_replay"].(map[string]any)["lanes"].([]any)
	if len(lanes) != 2 || lanes[0].(map[string]any)["turn"].(float64) < 1 {
		t.Errorf("lanes %v", lanes)
	}
}

// TestScenarioRun: --scenario inferencex-agentx-mvp refuses a run that
// breaks its locks; --unsafe-override runs it, warns, marks it not a
// valid submission, and it sends ignore_eos with a cache-busted context.
func TestScenarioRun(t *testing.T) {
	t.Parallel()
	m := agentMock(t, mockserver.Config{DefaultOutputTokens: 4})
	dir := t.TempDir()
	c := apptest.RunConfig(m.URL(), dir)
	c.InputFile, c.CustomDatasetType, c.Concurrency, c.RequestCount = "../../datasets/testdata/weka", "weka", "2", 4
	c.Scenario, c.TurnDelayRatio = "inferencex-agentx-mvp", 0.01
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "at least 900 s") {
		t.Fatalf("a 4-request run under the scenario: %v", err)
	}
	c.UnsafeOverride = true
	var out bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	ex := apptest.ReadExport(t, dir)
	info := ex["run_info"].(map[string]any)
	if info["scenario"] != "inferencex-agentx-mvp" || info["submission_valid"] != false || !strings.Contains(out.String(), "not a valid submission") {
		t.Fatalf("run_info %v\n%s", info, out.String())
	}
	for _, ps := range payloads(t, dir) {
		for _, p := range ps {
			if p["ignore_eos"] != true || !strings.Contains(fmt.Sprint(p["messages"]), "[rid:") {
				t.Fatalf("body without ignore_eos or its session marker: %v", p)
			}
		}
	}
}

// toolFlood is a chat server whose replies to requests that offer tools
// call three tools with no ids: arguments small when the request carries
// no tool result yet, big after; it counts the requests that offer tools.
type toolFlood struct {
	small, big string
	requests   atomic.Int64
}

func (f *toolFlood) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	if bytes.Contains(body, []byte(`"tools"`)) {
		f.requests.Add(1)
		args := f.small
		if bytes.Contains(body, []byte(`"role":"tool"`)) {
			args = f.big
		}
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":%q}}]}}]}\n\n", i, args)
		}
	} else {
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n")
	}
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n")
}

// TestSessionLimitRun: through the composer, a server whose second reply
// in each session sends 2 MB of arguments (past --tool-max-argument-bytes
// 1MiB) ends each session with one session_limit error, the error
// summary and a warning saying so; the calls it sent without ids went
// back with surge's, one warning counting them; run_info has the limits.
func TestSessionLimitRun(t *testing.T) {
	t.Parallel()
	big := `{"path":"` + strings.Repeat("x", 2<<20) + `"}`
	flood := &toolFlood{small: `{"path":"a"}`, big: big}
	srv := httptest.NewServer(flood)
	defer srv.Close()
	dir := t.TempDir()
	c := apptest.RunConfig(srv.URL, dir)
	c.Concurrency, c.RequestCount, c.ConversationNum = "1", 0, 2
	c.ToolLoop, c.ToolResultTokens, c.ToolLoopRounds = true, 8, 4
	c.ToolMaxArgumentBytes = "1MiB"
	var log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &log, &log); err != nil {
		t.Fatal(err)
	}
	// Each session: a reply of 3 calls, their round, a reply of 2 MB
	// arguments; the round after it is not sent.
	if got := flood.requests.Load(); got != 4 {
		t.Errorf("the server saw %d requests, want 4", got)
	}
	ex := apptest.ReadExport(t, dir)
	var limits float64
	for _, e := range ex["error_summary"].([]any) {
		e := e.(map[string]any)
		if d := e["error_details"].(map[string]any); d["type"] == loadgen.ErrSessionLimit {
			limits = e["count"].(float64)
			if msg := d["message"].(string); !strings.Contains(msg, "more than 1 MiB (tool max argument bytes)") {
				t.Errorf("message %q", msg)
			}
		}
	}
	if limits != 2 {
		t.Errorf("%v session_limit errors, want 2: %v", limits, ex["error_summary"])
	}
	out := strings.Join(strings.Fields(log.String()), " ") // warnings wrap to the terminal
	for _, w := range []string{"warning [session-limit]: 2 sessions ended at a limit: arguments 1 MiB, 128 calls", "warning [tool-ids]: 12 tool-call ids missing"} {
		if !strings.Contains(out, w) {
			t.Errorf("the console lacks %q:\n%s", w, out)
		}
	}
	sl, _ := ex["run_info"].(map[string]any)["session_limits"].(map[string]any)
	if sl["tool_max_argument_bytes"] != float64(1<<20) || sl["tool_max_calls_per_reply"] != 128.0 {
		t.Errorf("run_info session_limits %v", sl)
	}
}

// TestSessionLimitsCountTowardMemory: the context's bytes left unset
// are the default, or less so that the sessions in flight fit in
// --max-memory; a size given that does not fit is refused naming both.
func TestSessionLimitsCountTowardMemory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want int64
		err  string
	}{
		{[]string{"--concurrency", "2", "--max-memory", "64GiB"}, loadgen.DefaultContextBytes, ""},
		{[]string{"--concurrency", "16", "--max-memory", "96MiB"}, 2 << 20, ""},
		{[]string{"--concurrency", "1000", "--max-memory", "96MiB"}, 1 << 20, ""},
		{[]string{"--concurrency", "16", "--max-memory", "96MiB", "--session-max-context-bytes", "32MiB"}, 0,
			"--session-max-context-bytes 33.6 MB: 16 sessions in flight holding 3 copies of their context need 1.61 GB, more than the memory budget of 101 MB (--max-memory)"},
	} {
		c, err := cmdline.ParseProfile(tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		l, err := sessionLimits(apptest.Spec(t, c))
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && (err != nil || l.ContextBytes != tc.want):
			t.Errorf("%v: context bytes %d (%v), want %d", tc.args, l.ContextBytes, err, tc.want)
		}
	}
}
