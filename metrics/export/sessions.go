package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// turnKinds are the turn kinds in the order the exports list them.
var turnKinds = []string{"first", "user", "tool_result"}

// orNull is v rounded, or null when it is not a number.
func orNull(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return roundTo(v)
}

// sessionsValue is the JSON summary's "sessions" section.
func sessionsValue(s *metrics.Sessions) any {
	o := newObject()
	o.set("count", s.Count)
	o.set("completed", s.Completed)
	o.set("rejected_starts", s.Rejected)
	o.set("duration", distValue(s.Duration))
	o.set("requests_per_session", distValue(s.Requests))
	o.set("turns_per_session", distValue(s.Turns))
	o.set("context_tokens", distValue(s.Context))
	ttft := newObject()
	for _, k := range turnKinds {
		if d, ok := s.TTFT[k]; ok {
			ttft.set(k, distValue(d))
		}
	}
	o.set("ttft_by_turn_kind", ttft)
	var bands []any
	for _, b := range s.ByContext {
		r := newObject()
		r.set("context_from", b.From)
		r.set("context_to", b.To)
		r.set("count", b.Count)
		r.set("context_avg", roundTo(b.Context))
		r.set("ttft_avg_ms", orNull(b.Avg))
		r.set("ttft_p50_ms", orNull(b.P50))
		r.set("ttft_p90_ms", orNull(b.P90))
		r.set("ttft_p99_ms", orNull(b.P99))
		bands = append(bands, r)
	}
	if bands == nil {
		bands = []any{}
	}
	o.set("ttft_by_context", bands)
	o.set("cached_token_fraction", orNull(s.Cached))
	byKind := newObject()
	for _, k := range turnKinds {
		if v, ok := s.CachedByKind[k]; ok {
			byKind.set(k, orNull(v))
		}
	}
	o.set("cached_token_fraction_by_turn_kind", byKind)
	o.set("cache_reports", s.CacheReports)
	o.set("tool_calls", s.ToolCalls)
	o.set("tool_call_argument_errors", s.ToolCallErrors)
	o.set("tool_call_parse_success", orNull(s.ToolCallSuccess()))
	o.set("tool_result_requests", s.ToolResults)
	o.set("unknown_tool_results", s.UnknownToolResults)
	o.set("context_overflows", s.ContextOverflows)
	o.set("tool_time_ms", roundTo(s.ToolTimeMs))
	o.set("server_time_ms", roundTo(s.ServerTimeMs))
	return o
}

// writeSessionsCSV appends the sessions' rows to the CSV summary: their
// distributions, TTFT by turn kind and by context band, then the counts.
func writeSessionsCSV(cw *csv.Writer, s *metrics.Sessions) {
	if s == nil {
		return
	}
	_ = cw.Write(nil)
	_ = cw.Write(append([]string{"Metric"}, statKeys...))
	row := func(label string, d metrics.Distribution) {
		r := []string{label}
		for _, v := range stats(d) {
			r = append(r, csvNum(v))
		}
		_ = cw.Write(r)
	}
	row("Session Duration (ms)", s.Duration)
	row("Requests per Session", s.Requests)
	row("Turns per Session", s.Turns)
	row("Context Length (tokens)", s.Context)
	for _, k := range turnKinds {
		if d, ok := s.TTFT[k]; ok {
			row("TTFT, "+kindLabel(k)+" (ms)", d)
		}
	}
	if len(s.ByContext) > 0 {
		_ = cw.Write(nil)
		_ = cw.Write([]string{"Context From (tokens)", "Context To (tokens)", "Requests", "Context avg", "TTFT avg (ms)", "TTFT p50 (ms)", "TTFT p90 (ms)", "TTFT p99 (ms)"})
		for _, b := range s.ByContext {
			_ = cw.Write([]string{fmt.Sprint(b.From), fmt.Sprint(b.To), fmt.Sprint(b.Count), csvNum(b.Context), csvNum(b.Avg), csvNum(b.P50), csvNum(b.P90), csvNum(b.P99)})
		}
	}
	_ = cw.Write(nil)
	_ = cw.Write([]string{"Metric", "Value"})
	for _, kv := range sessionCounts(s) {
		_ = cw.Write([]string{kv.label, kv.value})
	}
}

// kindLabel names a turn kind for people.
func kindLabel(k string) string {
	switch k {
	case "first":
		return "first turn"
	case "user":
		return "after a user turn"
	}
	return "after tool results"
}

type labelled struct{ label, value string }

// sessionCounts are the sessions' counts and fractions, as the CSV and
// the console show them.
func sessionCounts(s *metrics.Sessions) []labelled {
	pct := func(v float64) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		return csvNum(math.Round(v*1e4) / 100)
	}
	out := []labelled{
		{"Sessions", fmt.Sprint(s.Count)},
		{"Sessions Completed", fmt.Sprint(s.Completed)},
		{"Session Starts Rejected", fmt.Sprint(s.Rejected)},
		{"Cached Prompt Tokens (%)", pct(s.Cached)},
	}
	for _, k := range turnKinds {
		if v, ok := s.CachedByKind[k]; ok {
			out = append(out, labelled{"Cached Prompt Tokens, " + kindLabel(k) + " (%)", pct(v)})
		}
	}
	return append(out,
		labelled{"Tool Calls", fmt.Sprint(s.ToolCalls)},
		labelled{"Tool Call Argument Errors", fmt.Sprint(s.ToolCallErrors)},
		labelled{"Tool Call Parse Success (%)", pct(s.ToolCallSuccess())},
		labelled{"Tool Result Requests", fmt.Sprint(s.ToolResults)},
		labelled{"Unknown Tool Results", fmt.Sprint(s.UnknownToolResults)},
		labelled{"Context Overflows", fmt.Sprint(s.ContextOverflows)},
		labelled{"Time in Tools (ms)", csvNum(roundTo(s.ToolTimeMs))},
		labelled{"Time on the Server (ms)", csvNum(roundTo(s.ServerTimeMs))},
	)
}

// consoleSessions prints the sessions' lines under the console table.
func consoleSessions(w io.Writer, s *metrics.Sessions) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "\nSessions: %d (%d completed", s.Count, s.Completed)
	if s.Rejected > 0 {
		fmt.Fprintf(w, ", %d starts rejected at the concurrency ceiling", s.Rejected)
	}
	fmt.Fprintf(w, "); duration p50 %s ms, requests p50 %s (max %s), context p50 %s tokens (max %s)\n",
		short(s.Duration.P50), short(s.Requests.P50), short(s.Requests.Max), short(s.Context.P50), short(s.Context.Max))
	var ttft []string
	for _, k := range turnKinds {
		if d, ok := s.TTFT[k]; ok {
			ttft = append(ttft, fmt.Sprintf("%s p50 %s ms (%d)", kindLabel(k), short(d.P50), d.Count))
		}
	}
	if len(ttft) > 0 {
		fmt.Fprintf(w, "TTFT by turn: %s\n", strings.Join(ttft, ", "))
	}
	if len(s.ByContext) > 1 {
		var bands []string
		for _, b := range s.ByContext {
			bands = append(bands, fmt.Sprintf("%s–%s: %s", shortInt(b.From), shortInt(b.To), short(b.P50)))
		}
		fmt.Fprintf(w, "TTFT p50 (ms) by context (tokens): %s\n", strings.Join(bands, ", "))
	}
	if !math.IsNaN(s.Cached) {
		fmt.Fprintf(w, "Cached prompt tokens: %.1f%% (server's usage, %d requests)", 100*s.Cached, s.CacheReports)
		if v, ok := s.CachedByKind["tool_result"]; ok {
			fmt.Fprintf(w, "; after tool results %.1f%%", 100*v)
		}
		fmt.Fprintln(w)
	}
	if s.ToolCalls > 0 || s.ToolResults > 0 {
		fmt.Fprintf(w, "Tool calls: %d (%d with arguments that are not JSON); requests sending tool results: %d", s.ToolCalls, s.ToolCallErrors, s.ToolResults)
		if s.UnknownToolResults > 0 {
			fmt.Fprintf(w, ", %d results answering no earlier call", s.UnknownToolResults)
		}
		if total := s.ToolTimeMs + s.ServerTimeMs; total > 0 && s.ToolTimeMs > 0 {
			fmt.Fprintf(w, "; time in tools %s ms vs on the server %s ms (%.0f%% in tools)", short(s.ToolTimeMs), short(s.ServerTimeMs), 100*s.ToolTimeMs/total)
		}
		fmt.Fprintln(w)
	}
	if s.ContextOverflows > 0 {
		fmt.Fprintf(w, "Context overflows: %d (requests past the server's window: context_overflow errors, each ending its session)\n", s.ContextOverflows)
	}
}

// shortInt writes a token count compactly (1.5k, 128k).
func shortInt(n int) string {
	if n >= 10000 {
		return fmt.Sprintf("%dk", n/1000)
	}
	if n >= 1000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}
