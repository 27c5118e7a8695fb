package report

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/surgebench/surge/metrics/artifact"
)

// sessionsJSON is the summary export's "sessions" section, the part the
// report shows.
type sessionsJSON struct {
	Count     float64 `json:"count"`
	Completed float64 `json:"completed"`
	Rejected  float64 `json:"rejected_starts"`
	Duration  struct {
		P50, P90 float64
	} `json:"duration"`
	Requests struct {
		Avg, Max float64
	} `json:"requests_per_session"`
	Context struct {
		P50, Max float64
	} `json:"context_tokens"`
	TTFT map[string]struct {
		P50, P90 float64
		Count    float64
	} `json:"ttft_by_turn_kind"`
	ByContext []struct {
		From    float64  `json:"context_from"`
		To      float64  `json:"context_to"`
		Count   float64  `json:"count"`
		Context float64  `json:"context_avg"`
		P50     *float64 `json:"ttft_p50_ms"`
		P90     *float64 `json:"ttft_p90_ms"`
	} `json:"ttft_by_context"`
	Cached       *float64            `json:"cached_token_fraction"`
	CachedByKind map[string]*float64 `json:"cached_token_fraction_by_turn_kind"`
	ToolCalls    float64             `json:"tool_calls"`
	ToolErrors   float64             `json:"tool_call_argument_errors"`
	ToolResults  float64             `json:"tool_result_requests"`
	Unknown      float64             `json:"unknown_tool_results"`
	Overflows    float64             `json:"context_overflows"`
	ToolMs       float64             `json:"tool_time_ms"`
	ServerMs     float64             `json:"server_time_ms"`
}

// sessionsOf reads a run's sessions section (nil: none).
func sessionsOf(r *artifact.Run) *sessionsJSON {
	if r.Summary == nil {
		return nil
	}
	raw, ok := r.Summary.Raw["sessions"]
	if !ok {
		return nil
	}
	var s sessionsJSON
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

var kindNames = map[string]string{"first": "first turn", "user": "after a user turn", "tool_result": "after tool results"}

// sessionRows are a run's sessions as the report's table shows them.
func sessionRows(s *sessionsJSON) []KV {
	n := func(v float64) string { return fmt.Sprint(Num(v)) }
	pct := func(p *float64) string {
		if p == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%%", 100**p)
	}
	rows := []KV{
		{"sessions", fmt.Sprintf("%s (%s completed, %s starts rejected)", n(s.Count), n(s.Completed), n(s.Rejected))},
		{"session duration", fmt.Sprintf("p50 %s ms, p90 %s ms", n(s.Duration.P50), n(s.Duration.P90))},
		{"requests per session", fmt.Sprintf("avg %s, max %s", n(s.Requests.Avg), n(s.Requests.Max))},
		{"context length", fmt.Sprintf("p50 %s tokens, max %s", n(s.Context.P50), n(s.Context.Max))},
	}
	for _, k := range []string{"first", "user", "tool_result"} {
		if d, ok := s.TTFT[k]; ok {
			rows = append(rows, KV{"TTFT " + kindNames[k], fmt.Sprintf("p50 %s ms, p90 %s ms (%s requests)", n(d.P50), n(d.P90), n(d.Count))})
		}
	}
	rows = append(rows, KV{"cached prompt tokens", pct(s.Cached)})
	for _, k := range []string{"first", "user", "tool_result"} {
		if p, ok := s.CachedByKind[k]; ok {
			rows = append(rows, KV{"cached prompt tokens " + kindNames[k], pct(p)})
		}
	}
	success := "n/a"
	if s.ToolCalls > 0 {
		success = fmt.Sprintf("%.1f%%", 100*(1-s.ToolErrors/s.ToolCalls))
	}
	return append(rows,
		KV{"tool calls", fmt.Sprintf("%s (arguments parsed: %s)", n(s.ToolCalls), success)},
		KV{"requests sending tool results", n(s.ToolResults)},
		KV{"tool results for unknown calls", n(s.Unknown)},
		KV{"context overflows", n(s.Overflows)},
		KV{"time in tools / on the server", fmt.Sprintf("%s ms / %s ms", n(s.ToolMs), n(s.ServerMs))},
	)
}

// contextChart draws each run's TTFT against the context its requests
// carried, band by band: p50 as a line, p90 as points.
func contextChart(runs []*artifact.Run) (Chart, bool) {
	c := Chart{ID: "ttft-context", Group: "sessions", Title: "TTFT by context length", XLabel: "context (tokens)", YLabel: "TTFT (ms)", LogX: true}
	for i, r := range runs {
		s := sessionsOf(r)
		if s == nil || len(s.ByContext) == 0 {
			continue
		}
		p50 := Series{Label: r.Name + " p50", Run: i, Style: Line}
		p90 := Series{Label: r.Name + " p90", Run: i, Style: Points}
		for _, b := range s.ByContext {
			x := Num(b.Context)
			p50.X, p50.Y = append(p50.X, x), append(p50.Y, numOrGap(b.P50))
			p90.X, p90.Y = append(p90.X, x), append(p90.Y, numOrGap(b.P90))
		}
		c.Series = append(c.Series, p50, p90)
	}
	return c, len(c.Series) > 0
}

// numOrGap is *p, or a gap.
func numOrGap(p *float64) Num {
	if p == nil {
		return Num(math.NaN())
	}
	return Num(*p)
}
