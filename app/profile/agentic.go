package profile

import (
	"context"
	"fmt"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// Load modes of the agent workload, as exports name them.
const (
	ModeSessionArrival = "session_arrival"
	ModeAgenticReplay  = "agentic_replay"
)

// toolResultTexts is how many distinct tool results a tool loop cycles
// through (distinct heads: no two share a cached prefix by chance).
const toolResultTexts = 64

// prepareAgentic readies the dataset for the agent workload: turns that
// offer no tools offer surge's agent tools when the tool loop runs, a
// trace's think times are capped by the scenario's idle-gap cap, and the
// tool loop's results are built.
func (p *prepared) prepareAgentic(ctx context.Context) error {
	a := &p.s.Agentic
	gapCap, l := a.TraceIdleGapCap, a.ToolLoop
	if gapCap <= 0 && l == nil {
		return nil
	}
	var tools []map[string]any
	if l != nil {
		tools = datasets.AgentTools()
	}
	// A held dataset is fixed now and counted; one built on demand is
	// fixed as each conversation is built, concurrently, and not counted.
	held := p.ds.Source == nil
	capped, offered := 0, 0
	p.ds = datasets.Each(p.ds, func(_ int, c *datasets.Conversation) {
		for j := range c.Turns {
			t := &c.Turns[j]
			if gapCap > 0 && t.Delay > gapCap {
				t.Delay = gapCap
				if held {
					capped++
				}
			}
			if tools != nil && t.Tools == nil && t.Body == nil && t.Payload == nil {
				t.Tools = tools
				if held {
					offered++
				}
			}
		}
	})
	switch {
	case capped > 0:
		p.log.Notef("--scenario %s: %d think times longer than %s capped at it", a.Scenario, capped, gapCap)
	case gapCap > 0 && !held:
		p.log.Notef("--scenario %s: think times longer than %s are capped at it", a.Scenario, gapCap)
	}
	if l == nil {
		return nil
	}
	switch {
	case offered > 0:
		p.log.Notef("--tool-loop: %d turns that offered no tools offer surge's agent tools (read_file, search_code, run_command)", offered)
	case !held:
		p.log.Notef("--tool-loop: turns that offer no tools offer surge's agent tools (read_file, search_code, run_command)")
	}
	texts, err := datasets.ToolResults(ctx, p.builder, p.s.Seed(), l.ResultTokens, toolResultTexts)
	if err != nil {
		return &cmdline.UsageError{Err: fmt.Errorf("--tool-result-tokens: %w", err)}
	}
	p.toolResults = texts
	return nil
}

// contextCopies is how many copies of its context a session in flight
// holds at once: its history, the body it sends, the reply's texts.
const contextCopies = 3

// sessionLimits are the generator's session limits: the flags', and the
// context's bytes, when not given, the default or less, so that the
// sessions in flight (contextCopies each) fit in the memory budget
// (--max-memory, else three quarters of the machine's); a size given that
// does not fit is refused.
func sessionLimits(s *spec.Spec) (loadgen.SessionLimits, error) {
	l := s.Agentic.Limits
	out := loadgen.DefaultSessionLimits() // where a Config left them 0
	if l.ToolArgumentBytes > 0 {
		out.ToolArgumentBytes = int(l.ToolArgumentBytes)
	}
	if l.ToolCalls > 0 {
		out.ToolCalls = l.ToolCalls
	}
	if l.ContextTokens > 0 {
		out.ContextTokens = l.ContextTokens
	}
	if l.ContextBytes > 0 {
		out.ContextBytes = l.ContextBytes
	}
	budget := s.Dataset.MaxMemory
	if budget == 0 {
		b, ok := datasets.DefaultMemoryBudget()
		if !ok {
			return out, nil
		}
		budget = b
	}
	inFlight := int64(max(s.Load.MaxConcurrency(), 1))
	fits := budget / (contextCopies * inFlight)
	switch {
	case l.ContextBytes == 0:
		out.ContextBytes = max(min(loadgen.DefaultContextBytes, fits), 1<<20)
	case l.ContextBytes > fits:
		return out, cmdline.Usagef("--session-max-context-bytes %s: %d sessions in flight holding %d copies of their context need %s, more than the memory budget of %s (--max-memory)",
			datasets.Bytes(l.ContextBytes), inFlight, contextCopies, datasets.Bytes(l.ContextBytes*contextCopies*inFlight), datasets.Bytes(budget))
	}
	return out, nil
}

// agenticOptions are the generator's options for the agent workload.
func (p *prepared) agenticOptions() []loadgen.Option {
	a := &p.s.Agentic
	opts := []loadgen.Option{loadgen.WithSessionLimits(p.limits)}
	if l := a.ToolLoop; l != nil {
		opts = append(opts, loadgen.WithToolLoop(loadgen.ToolLoop{Results: p.toolResults, ResultTokens: l.ResultTokens,
			Delay: l.Delay, MaxRounds: l.MaxRounds}))
	}
	return opts
}

// mockAgent is the embedded mock's agent behaviour.
func mockAgent(cfg *mockserver.Config, a *spec.Agentic) {
	cfg.ToolCallRate, cfg.BadToolArgsRate = a.Mock.ToolCallRate, a.Mock.BadToolArgs
	cfg.PrefixCache, cfg.MaxModelLen = a.Mock.PrefixCache, a.Mock.MaxModelLen
}

// sessionArrivalPlan is --session-arrival-rate's stage: sessions start on
// their own clock, the concurrency (when given) an admission ceiling.
func sessionArrivalPlan(p *plan, s *spec.Spec, st loadgen.Stage, ceiling int) error {
	sa := s.Agentic.SessionArrival
	sched, err := schedule.Arrival(sa.Pattern, sa.Rate, sa.Smoothness, s.ValueSeed(0))
	if err != nil {
		return &cmdline.UsageError{Err: err} // the spec checked it
	}
	st.Schedule, st.Admission = sched, true
	if ceiling > 0 {
		st.Limit = schedule.Constant(ceiling)
	}
	p.mode, p.values, p.rateCap = ModeSessionArrival, []float64{sa.Rate}, ceiling
	p.stages = append(p.stages, st)
	return nil
}

// replayPlan is agentic replay's stages: the priming of lanes that start
// part-way, the cache-pressure warmup, then the profile. Without a bound
// the profile replays as many sessions as the dataset has conversations
// (one pass, as AIPerf's bare agentic run).
func replayPlan(p *plan, s *spec.Spec, ds *datasets.Dataset, st loadgen.Stage, lanes int) error {
	r := s.Agentic.Replay
	replay, err := loadgen.NewReplay(ds, lanes, r.MinRatio, r.MaxRatio, s.Seed())
	if err != nil {
		return &cmdline.UsageError{Err: fmt.Errorf("--trajectory-start-*: %w", err)}
	}
	replay.Burst, replay.Grace, replay.IdleGapCap = r.Burst, r.Grace, r.IdleGapCap
	if replay.Primed() {
		p.stages = append(p.stages, loadgen.Stage{Phase: metrics.Warmup, Lanes: &loadgen.LanePart{Replay: replay, Part: loadgen.Prime}})
	}
	if r.CacheWarmup > 0 {
		p.stages = append(p.stages, loadgen.Stage{Phase: metrics.Warmup, Duration: r.CacheWarmup,
			Lanes: &loadgen.LanePart{Replay: replay, Part: loadgen.Pressure}})
	}
	if l := &s.Load; l.RequestCount == 0 && l.Duration == 0 && l.ConversationNum == 0 {
		st.Count, st.SessionCount, p.total = 0, ds.Len(), 0
	}
	st.Lanes = &loadgen.LanePart{Replay: replay, Part: loadgen.Profile}
	p.mode, p.values = ModeAgenticReplay, []float64{float64(lanes)}
	p.stages = append(p.stages, st)
	p.replay = replay
	return nil
}

// agenticRunInfo adds what the agent workload did to run_info, and its
// warnings to the summary.
func (p *prepared) agenticRunInfo(info map[string]any, s *metrics.Summary, o *outcome) {
	a := &p.s.Agentic
	if l := a.ToolLoop; l != nil {
		info["tool_loop"] = map[string]any{"max_rounds": l.MaxRounds, "result_tokens": l.ResultTokens,
			"delay_ms": float64(l.Delay) / float64(time.Millisecond), "requests": o.loopRequests}
	}
	if n := o.rejected; n > 0 || a.SessionArrival != nil {
		info["session_starts_rejected"] = n
		if s.Sessions != nil {
			s.Sessions.Rejected = n
		}
	}
	if r := p.replay; r != nil {
		starts := make([]map[string]any, len(r.Starts))
		for i, t := range r.Starts {
			starts[i] = map[string]any{"conversation": p.ds.Conversation(t.Conversation).ID, "turn": t.Turn}
		}
		info["agentic_replay"] = map[string]any{"lanes": starts, "burst_phase_starts": r.Burst}
	}
	info["session_limits"] = map[string]any{"tool_max_argument_bytes": p.limits.ToolArgumentBytes,
		"tool_max_calls_per_reply": p.limits.ToolCalls, "session_max_context_tokens": p.limits.ContextTokens,
		"session_max_context_bytes": p.limits.ContextBytes}
	if n := s.SessionLimits(); n > 0 {
		l := p.limits
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d %s ended at a session limit: arguments %s, %d calls, context %d tokens or %s (a call's arguments past --tool-max-argument-bytes, a reply's calls past --tool-max-calls-per-reply, the context past --session-max-context-tokens or --session-max-context-bytes; the session_limit errors say which): the server sent what no agent would",
			n, plural(n, "session", "sessions"), bounded.Bytes(int64(l.ToolArgumentBytes)), l.ToolCalls, l.ContextTokens, bounded.Bytes(l.ContextBytes)))
	}
	if n := o.replacedIDs; n > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d tool-call %s the server sent %s missing, repeated or longer than %d bytes: surge sent ids of its own (call_surge_N) in their place, so each tool result answers one call",
			n, plural(n, "id", "ids"), plural(n, "was", "were"), loadgen.MaxToolCallID))
	}
	if a.Scenario != "" {
		info["scenario"] = a.Scenario
		info["submission_valid"] = len(a.Locks) == 0
		s.Warnings = append(s.Warnings, a.ScenarioWarnings()...)
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
