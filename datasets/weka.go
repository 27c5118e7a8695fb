package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// WekaTrace is one agentic coding session in the WEKA KV-cache-tester trace
// format (AIPerf's weka; "AgentX" traces): a JSON object per file, its
// requests the agent's model calls in order, each with its whole context
// length and the hash ids of that context's blocks, interleaved with
// subagents that ran their own calls.
type WekaTrace struct {
	// File is the file the trace came from.
	File string
	ID   string
	// BlockSize is the hash blocks' size in tokens.
	BlockSize int
	// ToolTokens and SystemTokens are the declared prefix token counts.
	ToolTokens, SystemTokens int
	// Requests are the top-level calls and subagents, in file order.
	Requests []WekaRequest
}

// WekaRequest is one call ("n" normal, "s" streaming) or, with Type
// "subagent", a subagent and its own calls.
type WekaRequest struct {
	// Line is the line the request starts on.
	Line int
	Type string
	// T is the start in seconds (a subagent's: its spawn).
	T float64
	// Model is the model the call went to.
	Model string
	// In and Out are the call's context and output lengths in tokens.
	In, Out int
	// HashIDs name the context's blocks (local to the trace).
	HashIDs []int64
	// Stop is why the output ended ("tool_use", "end_turn", "").
	Stop string
	// APITime is the server's time for the call in seconds (-1: unknown).
	APITime float64
	// ThinkTime is the client's recorded delay before the call in seconds
	// (-1: not recorded).
	ThinkTime float64
	// AgentID and Calls are a subagent's id and calls.
	AgentID string
	Calls   []WekaRequest
}

// wekaCallJSON holds every field a request of any type may have; which are
// allowed depends on the type (AIPerf's schema forbids the others).
type wekaCallJSON struct {
	T            *float64          `json:"t"`
	Type         string            `json:"type"`
	Model        *string           `json:"model"`
	In           *int              `json:"in"`
	Out          *int              `json:"out"`
	HashIDs      []int64           `json:"hash_ids"`
	InputTypes   []string          `json:"input_types"`
	OutputTypes  []string          `json:"output_types"`
	Stop         string            `json:"stop"`
	APITime      *float64          `json:"api_time"`
	ThinkTime    *float64          `json:"think_time"`
	TTFT         *float64          `json:"ttft"`
	AgentID      *string           `json:"agent_id"`
	SubagentType *string           `json:"subagent_type"`
	DurationMs   *int64            `json:"duration_ms"`
	TotalTokens  *int64            `json:"total_tokens"`
	ToolUseCount *int64            `json:"tool_use_count"`
	Status       *string           `json:"status"`
	Requests     []json.RawMessage `json:"requests"`
	Models       []string          `json:"models"`
	ToolTokens   int               `json:"tool_tokens"`
	SystemTokens int               `json:"system_tokens"`
}

var wekaCallFields = map[string]map[string]bool{
	"n": setOf("t", "type", "model", "in", "out", "hash_ids", "input_types", "output_types", "stop", "api_time", "think_time"),
	"s": setOf("t", "type", "model", "in", "out", "hash_ids", "input_types", "output_types", "stop", "api_time", "think_time", "ttft"),
	"subagent": setOf("t", "type", "agent_id", "subagent_type", "duration_ms", "total_tokens", "tool_use_count", "status",
		"requests", "models", "tool_tokens", "system_tokens"),
}

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// parseWekaRequest validates one request object; where names it in errors
// ("requests[3]").
func parseWekaRequest(file string, line int, raw []byte, where string, nested bool) (WekaRequest, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return WekaRequest{}, inputErrorf(file, line, "%s: want a JSON object", where)
	}
	var j wekaCallJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		e := jsonLineError(file, line, err)
		e.Msg = where + ": " + e.Msg
		return WekaRequest{}, e
	}
	allowed, ok := wekaCallFields[j.Type]
	if !ok || nested && j.Type == "subagent" {
		want := `"n", "s" or "subagent"`
		if nested {
			want = `"n" or "s" (a subagent's calls do not nest)`
		}
		return WekaRequest{}, inputErrorf(file, line, "%s: type %q: want %s", where, j.Type, want)
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !allowed[k] {
			return WekaRequest{}, inputErrorf(file, line, "%s: field %q is not allowed in a %q request", where, k, j.Type)
		}
	}
	if j.T == nil {
		return WekaRequest{}, inputErrorf(file, line, `%s: missing required field "t"`, where)
	}
	r := WekaRequest{Line: line, Type: j.Type, T: *j.T, Stop: j.Stop, APITime: -1, ThinkTime: -1}
	if msg := checkSeconds(r.T); msg != "" {
		return r, inputErrorf(file, line, "%s: t %v: %s", where, r.T, msg)
	}
	if j.Type == "subagent" {
		switch {
		case j.AgentID == nil || *j.AgentID == "":
			return r, inputErrorf(file, line, `%s: missing required field "agent_id"`, where)
		case j.SubagentType == nil:
			return r, inputErrorf(file, line, `%s: missing required field "subagent_type"`, where)
		case j.Status == nil:
			return r, inputErrorf(file, line, `%s: missing required field "status"`, where)
		case j.Models == nil:
			return r, inputErrorf(file, line, `%s: missing required field "models"`, where)
		case j.Requests == nil:
			return r, inputErrorf(file, line, `%s: missing required field "requests"`, where)
		}
		r.AgentID = *j.AgentID
		for i, c := range j.Requests {
			call, err := parseWekaRequest(file, line, c, fmt.Sprintf("%s.requests[%d]", where, i), true)
			if err != nil {
				return r, err
			}
			r.Calls = append(r.Calls, call)
		}
		return r, nil
	}
	switch {
	case j.Model == nil:
		return r, inputErrorf(file, line, `%s: missing required field "model"`, where)
	case j.In == nil:
		return r, inputErrorf(file, line, `%s: missing required field "in"`, where)
	case j.Out == nil:
		return r, inputErrorf(file, line, `%s: missing required field "out"`, where)
	case *j.In <= 0:
		return r, inputErrorf(file, line, "%s: in must be positive, got %d", where, *j.In)
	case *j.Out < 0:
		return r, inputErrorf(file, line, "%s: out must not be negative, got %d", where, *j.Out)
	}
	r.Model, r.In, r.Out, r.HashIDs = *j.Model, *j.In, *j.Out, j.HashIDs
	for i, h := range r.HashIDs {
		if h < 0 {
			return r, inputErrorf(file, line, "%s: hash_ids[%d] is negative (%d)", where, i, h)
		}
	}
	if j.APITime != nil && !math.IsNaN(*j.APITime) && !math.IsInf(*j.APITime, 0) {
		r.APITime = max(*j.APITime, 0)
	}
	if j.ThinkTime != nil && !math.IsNaN(*j.ThinkTime) && !math.IsInf(*j.ThinkTime, 0) {
		r.ThinkTime = max(*j.ThinkTime, 0)
	}
	return r, nil
}

// ParseWekaTrace reads one trace file's JSON object, streaming it: the
// requests are decoded one at a time, each error naming its line.
func ParseWekaTrace(r io.Reader, file string) (*WekaTrace, error) {
	s := newJSONStream(r, file)
	if err := s.delim('{', "want a JSON object (one WEKA trace)"); err != nil {
		return nil, err
	}
	t := &WekaTrace{File: file}
	var scope *string
	var models []string
	seen := map[string]bool{}
	for s.dec.More() {
		k, err := s.key()
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, inputErrorf(file, s.lc.line(s.dec.InputOffset()), "field %q given twice", k)
		}
		seen[k] = true
		switch k {
		case "id":
			_, err = s.value(&t.ID)
		case "models":
			_, err = s.value(&models)
		case "block_size":
			_, err = s.value(&t.BlockSize)
		case "hash_id_scope":
			scope = new(string)
			_, err = s.value(scope)
		case "tool_tokens":
			_, err = s.value(&t.ToolTokens)
		case "system_tokens":
			_, err = s.value(&t.SystemTokens)
		case "totals":
			var skip json.RawMessage
			_, err = s.value(&skip)
		case "requests":
			if err = s.delim('[', `"requests" must be a list`); err != nil {
				return nil, err
			}
			for i := 0; s.dec.More(); i++ {
				var raw json.RawMessage
				line, err := s.value(&raw)
				if err != nil {
					return nil, err
				}
				req, err := parseWekaRequest(file, line, raw, fmt.Sprintf("requests[%d]", i), false)
				if err != nil {
					return nil, err
				}
				t.Requests = append(t.Requests, req)
			}
			err = s.delim(']', `want the end of "requests"`)
		default:
			return nil, inputErrorf(file, s.lc.line(s.dec.InputOffset()), "unknown field %q", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := s.delim('}', "want the end of the trace object"); err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	for _, f := range []string{"id", "models", "block_size", "hash_id_scope", "requests"} {
		if !seen[f] {
			return nil, inputErrorf(file, 0, "missing required field %q", f)
		}
	}
	switch {
	case t.ID == "":
		return nil, inputErrorf(file, 0, "id is empty")
	case t.BlockSize <= 0:
		return nil, inputErrorf(file, 0, "block_size must be positive, got %d", t.BlockSize)
	case *scope != "local":
		return nil, inputErrorf(file, 0, `hash_id_scope %q: only "local" (hash ids scoped to the trace) is supported`, *scope)
	case t.ToolTokens < 0 || t.SystemTokens < 0:
		return nil, inputErrorf(file, 0, "tool_tokens and system_tokens must not be negative")
	}
	return t, nil
}

// readWeka reads a trace file, or every *.json file of a directory in name
// order (one trace each).
func readWeka(ctx context.Context, path string, o Options) ([]*WekaTrace, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &InputError{File: path, Msg: fmt.Sprintf("cannot read the input file: %v", err), Err: err}
	}
	files := []string{path}
	if st.IsDir() {
		if files, err = filepath.Glob(filepath.Join(path, "*.json")); err != nil {
			return nil, &InputError{File: path, Msg: err.Error(), Err: err}
		}
		sort.Strings(files)
		if len(files) == 0 {
			return nil, inputErrorf(path, 0, "no *.json trace files in the directory")
		}
	}
	var traces []*WekaTrace
	ids := map[string]string{}
	for _, name := range files {
		f, closeFile, err := openInput(ctx, name, o)
		if err != nil {
			return nil, err
		}
		t, err := ParseWekaTrace(f, name)
		closeFile()
		if err != nil {
			return nil, err
		}
		if other, dup := ids[t.ID]; dup {
			return nil, inputErrorf(name, 0, "trace id %q is also %s's", t.ID, other)
		}
		ids[t.ID] = name
		if len(traces) > 0 && t.BlockSize != traces[0].BlockSize {
			return nil, inputErrorf(name, 0, "block_size %d differs from %s's %d (load traces of one block size together)", t.BlockSize, traces[0].File, traces[0].BlockSize)
		}
		traces = append(traces, t)
	}
	return traces, nil
}

// wekaStats counts what a WEKA load kept.
type wekaStats struct {
	// Calls counts the model calls read (top-level and subagents').
	Calls int
	// Subagents counts the subagents replayed as conversations; Dropped
	// those AIPerf drops too (no top-level call before them to spawn
	// them).
	Subagents, Dropped int
	// ToolResults counts calls that follow a call that stopped for a tool.
	ToolResults int
	// OverContext counts the traces left out for a call context longer
	// than ReplayOptions.MaxContext; Shortened the idle gaps within a
	// trace that ReplayOptions.TraceIdleGapCap shortened.
	OverContext, Shortened int
}

// wekaPeak is a trace's largest call context: input plus output tokens of
// its longest call, its subagents' included.
func wekaPeak(t *WekaTrace) int {
	peak := 0
	for _, r := range t.Requests {
		peak = max(peak, r.In+r.Out)
		for _, c := range r.Calls {
			peak = max(peak, c.In+c.Out)
		}
	}
	return peak
}

// wekaRows lays the traces out as Mooncake rows, one conversation per agent:
// each trace's top-level calls in order, then each subagent's calls in
// start order. Hash ids are renumbered per trace (their scope is local).
// A conversation's first call carries its start as the replay timestamp;
// the think time before a later call is the idle gap from the previous
// call's end (start + api_time) to its start, as AIPerf replays it (with
// r.ThinkTimeOnly its recorded think_time, where it has one). r.MaxContext
// leaves out the traces whose largest call context exceeds it;
// r.TraceIdleGapCap first shortens the gaps between a trace's call starts.
func wekaRows(traces []*WekaTrace, r *ReplayOptions) ([]MooncakeRow, wekaStats) {
	var rows []MooncakeRow
	var st wekaStats
	var next int64
	agent := func(sid string, calls []WekaRequest, ns map[int64]int64) {
		for k := range calls {
			c := &calls[k]
			st.Calls++
			ids := make([]int64, len(c.HashIDs))
			for i, h := range c.HashIDs {
				g, ok := ns[h]
				if !ok {
					g, next = next, next+1
					ns[h] = g
				}
				ids[i] = g
			}
			m := MooncakeRow{Line: c.Line, SessionID: sid, InputLength: c.In, OutputLength: max(c.Out, 1), HashIDs: ids,
				Timestamp: c.T * 1000, HasTimestamp: true}
			if k > 0 {
				p := &calls[k-1]
				m.Delay, m.HasDelay = max(c.T-(p.T+max(p.APITime, 0)), 0)*1000, true
				if r.ThinkTimeOnly && c.ThinkTime >= 0 {
					m.Delay = c.ThinkTime * 1000
				}
				if p.Stop == "tool_use" {
					st.ToolResults++
					m.AfterToolUse = true
				}
			}
			rows = append(rows, m)
		}
	}
	type child struct {
		sid   string
		calls []WekaRequest
		ns    map[int64]int64
	}
	var children []child
	for _, t := range traces {
		if r.MaxContext > 0 && wekaPeak(t) > r.MaxContext {
			st.OverContext++
			continue
		}
		ns := map[int64]int64{}
		var top []WekaRequest
		var mine []child
		used := map[string]int{}
		for _, q := range t.Requests {
			if q.Type != "subagent" {
				top = append(top, q)
				continue
			}
			if len(top) == 0 {
				st.Dropped++
				continue
			}
			calls := make([]WekaRequest, len(q.Calls))
			copy(calls, q.Calls)
			for i := range calls {
				// Older captures give a subagent's call times from its
				// spawn; current ones from the trace's start.
				if calls[i].T+1e-6 < q.T {
					calls[i].T += q.T
				}
			}
			sort.SliceStable(calls, func(a, b int) bool { return calls[a].T < calls[b].T })
			sid := t.ID + "::sa:" + q.AgentID
			if n := used[sid]; n > 0 {
				sid += fmt.Sprintf("#%d", n+1)
			}
			used[t.ID+"::sa:"+q.AgentID]++
			if len(calls) > 0 {
				st.Subagents++
				mine = append(mine, child{sid, calls, ns})
			}
		}
		if r.TraceIdleGapCapSet {
			lists := [][]WekaRequest{top}
			for _, c := range mine {
				lists = append(lists, c.calls)
			}
			st.Shortened += capTraceGaps(lists, r.TraceIdleGapCap.Seconds())
		}
		children = append(children, mine...)
		agent(t.ID, top, ns)
	}
	for _, c := range children {
		agent(c.sid, c.calls, c.ns)
	}
	return rows, st
}

// capTraceGaps shortens every gap between consecutive call starts of one
// trace (all its agents' calls together) to at most capSec, moving each
// call's start onto the shortened timeline; it counts the gaps shortened.
func capTraceGaps(lists [][]WekaRequest, capSec float64) int {
	var starts []float64
	for _, l := range lists {
		for _, c := range l {
			starts = append(starts, c.T)
		}
	}
	if len(starts) < 2 {
		return 0
	}
	sort.Float64s(starts)
	moved := make(map[float64]float64, len(starts))
	n := 0
	prevOld, prevNew := starts[0], starts[0]
	moved[starts[0]] = starts[0]
	for _, s := range starts[1:] {
		gap := s - prevOld
		if gap > capSec {
			gap = capSec
			n++
		}
		prevOld, prevNew = s, prevNew+gap
		moved[s] = prevNew
	}
	for _, l := range lists {
		for i := range l {
			l[i].T = moved[l[i].T]
		}
	}
	return n
}

// String is the line the run prints about a WEKA load.
func (s wekaStats) String() string {
	line := fmt.Sprintf("weka: %d model calls, %d subagents as conversations of their own, %d calls after a tool use (sent as tool results)", s.Calls, s.Subagents, s.ToolResults)
	if s.Dropped > 0 {
		line += fmt.Sprintf(", %d subagents dropped (no top-level call before them)", s.Dropped)
	}
	if s.OverContext > 0 {
		line += fmt.Sprintf(", %d traces left out for a call context over the limit", s.OverContext)
	}
	if s.Shortened > 0 {
		line += fmt.Sprintf(", %d idle gaps within a trace shortened", s.Shortened)
	}
	return strings.TrimSpace(line)
}

// WekaTraces counts a WEKA dataset's traces: its conversations but the
// subagents' (a subagent replays as a conversation of its own).
func WekaTraces(d *Dataset) int {
	n := 0
	for _, c := range d.Conversations {
		if !strings.Contains(c.ID, "::sa:") {
			n++
		}
	}
	return n
}
