package datasets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// BasetenRow is one Baseten completion-trace record (AIPerf's baseten):
// a row of the Parquet file Baseten publishes, or a line of JSON Lines with
// the same column names.
type BasetenRow struct {
	Line int
	// StartMs is timestamp_start_unix_ms, the request's start.
	StartMs int64
	// Prompt is the literal completion prompt sent.
	Prompt string
	// InputTokens and OutputTokens are the recorded token counts.
	InputTokens, OutputTokens int
	// ProvidedSessionID and PoorManSessionID group rows into sessions;
	// empty when absent.
	ProvidedSessionID, PoorManSessionID string
	// DurationE2EMs is the recorded end-to-end duration (-1: unknown).
	DurationE2EMs int64
	// TotalHashes and BlockSize are the recorded KV-cache block hashes
	// and their block size (0: none), sent with the row as routing hints.
	TotalHashes []int64
	BlockSize   int
}

type basetenJSON struct {
	StartMs           *int64          `json:"timestamp_start_unix_ms"`
	Prompt            *string         `json:"prompt"`
	InputTokens       *int            `json:"input_tokens"`
	OutputTokens      *int            `json:"output_tokens"`
	ProvidedSessionID json.RawMessage `json:"provided_session_id"`
	PoorManSessionID  *int64          `json:"poor_man_session_id"`
	DurationE2EMs     *int64          `json:"duration_e2e_ms"`
	TotalHashes       []int64         `json:"total_hashes"`
	BlockSize         *int            `json:"block_size"`
}

// ParseBasetenLine parses one Baseten record. Errors are *InputError for
// file:line.
func ParseBasetenLine(file string, line int, b []byte) (BasetenRow, error) {
	var j basetenJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return BasetenRow{}, jsonLineError(file, line, err)
	}
	return j.row(file, line)
}

// row validates a record's fields.
func (j *basetenJSON) row(file string, line int) (BasetenRow, error) {
	r := BasetenRow{Line: line, DurationE2EMs: -1}
	for _, f := range []struct {
		name string
		set  bool
	}{{"timestamp_start_unix_ms", j.StartMs != nil}, {"prompt", j.Prompt != nil},
		{"input_tokens", j.InputTokens != nil}, {"output_tokens", j.OutputTokens != nil}} {
		if !f.set {
			return r, inputErrorf(file, line, "missing required field %q", f.name)
		}
	}
	r.StartMs, r.Prompt, r.InputTokens, r.OutputTokens = *j.StartMs, *j.Prompt, *j.InputTokens, *j.OutputTokens
	switch {
	case r.StartMs < 0:
		return r, inputErrorf(file, line, "timestamp_start_unix_ms must not be negative, got %d", r.StartMs)
	case r.InputTokens < 0:
		return r, inputErrorf(file, line, "input_tokens must not be negative, got %d", r.InputTokens)
	case r.OutputTokens < 0:
		return r, inputErrorf(file, line, "output_tokens must not be negative, got %d", r.OutputTokens)
	case j.PoorManSessionID != nil && *j.PoorManSessionID < 0:
		return r, inputErrorf(file, line, "poor_man_session_id must not be negative, got %d", *j.PoorManSessionID)
	case j.BlockSize != nil && *j.BlockSize <= 0:
		return r, inputErrorf(file, line, "block_size must be positive, got %d", *j.BlockSize)
	}
	for i, h := range j.TotalHashes {
		if h < 0 {
			return r, inputErrorf(file, line, "total_hashes[%d] is negative (%d)", i, h)
		}
	}
	if j.DurationE2EMs != nil {
		if *j.DurationE2EMs < 0 {
			return r, inputErrorf(file, line, "duration_e2e_ms must not be negative, got %d", *j.DurationE2EMs)
		}
		r.DurationE2EMs = *j.DurationE2EMs
	}
	r.TotalHashes = j.TotalHashes
	if j.BlockSize != nil {
		r.BlockSize = *j.BlockSize
	}
	if j.PoorManSessionID != nil {
		r.PoorManSessionID = strconv.FormatInt(*j.PoorManSessionID, 10)
	}
	// provided_session_id is a string or a non-negative integer (or null).
	if raw := bytes.TrimSpace(j.ProvidedSessionID); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		var s string
		var n int64
		switch {
		case json.Unmarshal(raw, &s) == nil:
			r.ProvidedSessionID = s
		case json.Unmarshal(raw, &n) == nil && n >= 0:
			r.ProvidedSessionID = strconv.FormatInt(n, 10)
		default:
			return r, inputErrorf(file, line, "provided_session_id: want a string or a non-negative integer, got %s", raw)
		}
	}
	return r, nil
}

// readBaseten parses every record of a Baseten trace in JSON Lines.
func readBaseten(r io.Reader, file string) ([]BasetenRow, error) {
	var rows []BasetenRow
	err := eachLine(r, file, func(line int, b []byte) error {
		row, err := ParseBasetenLine(file, line, b)
		rows = append(rows, row)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// basetenSessionKey picks the session column as AIPerf does: the provided
// id when some value repeats, else the poor man's id when some value
// repeats, else whichever is present ("" when neither: a row per session).
func basetenSessionKey(rows []BasetenRow) string {
	prov, poor := map[string]int{}, map[string]int{}
	for _, r := range rows {
		if r.ProvidedSessionID != "" {
			prov[r.ProvidedSessionID]++
		}
		if r.PoorManSessionID != "" {
			poor[r.PoorManSessionID]++
		}
	}
	repeats := func(m map[string]int) bool {
		for _, n := range m {
			if n > 1 {
				return true
			}
		}
		return false
	}
	switch {
	case repeats(prov):
		return "provided_session_id"
	case repeats(poor):
		return "poor_man_session_id"
	case len(prov) > 0:
		return "provided_session_id"
	case len(poor) > 0:
		return "poor_man_session_id"
	}
	return ""
}

// basetenDataset groups rows into sessions (basetenSessionKey; a row
// without the chosen id falls back to the other, then to a session of its
// own), turns in start order, sessions in the order of their first start.
// Timestamps count from the trace's first start. Each turn sends its
// literal prompt, which holds the session's history, standalone, capped at
// its recorded output (at least 1), with min_tokens pinned to that cap and
// the recorded total_hashes and block_size as KV-cache hints, as AIPerf
// sends them (r.NoMinTokens, r.OmitKVHints leave them out).
//
// As AIPerf replays it, a session is open loop by default: every turn keeps
// its recorded time (a later one waits for the previous reply if that comes
// later). r.ClosedLoop sends a later turn a think time after the previous
// reply instead: the gap from the previous request's recorded end (its
// start when the duration is unknown) to its start. r.Strict sends every
// row as a session of its own.
func basetenDataset(file string, rows []BasetenRow, r *ReplayOptions) (*Dataset, string) {
	key := basetenSessionKey(rows)
	t0 := rows[0].StartMs
	for _, r := range rows {
		t0 = min(t0, r.StartMs)
	}
	groups := map[string][]int{}
	var ids []string
	for i, r := range rows {
		id := ""
		switch {
		case key == "provided_session_id" && r.ProvidedSessionID != "":
			id = "p:" + r.ProvidedSessionID
		case key == "poor_man_session_id" && r.PoorManSessionID != "":
			id = "m:" + r.PoorManSessionID
		case r.ProvidedSessionID != "":
			id = "p:" + r.ProvidedSessionID
		case r.PoorManSessionID != "":
			id = "m:" + r.PoorManSessionID
		default:
			id = fmt.Sprintf("line:%d", r.Line)
		}
		if _, ok := groups[id]; !ok {
			ids = append(ids, id)
		}
		groups[id] = append(groups[id], i)
	}
	for _, id := range ids {
		g := groups[id]
		sort.SliceStable(g, func(a, b int) bool { return rows[g[a]].StartMs < rows[g[b]].StartMs })
	}
	sort.SliceStable(ids, func(a, b int) bool {
		fa, fb := rows[groups[ids[a]][0]].StartMs, rows[groups[ids[b]][0]].StartMs
		if fa != fb {
			return fa < fb
		}
		return ids[a] < ids[b]
	})
	d := &Dataset{Name: file, Conversations: make([]Conversation, 0, len(ids))}
	for _, id := range ids {
		g := groups[id]
		c := Conversation{ID: "baseten-" + id, Turns: make([]Turn, len(g)), OpenLoop: !r.ClosedLoop && len(g) > 1}
		for k, i := range g {
			row := &rows[i]
			t := Turn{Text: row.Prompt, InputTokens: row.InputTokens, MaxTokens: max(row.OutputTokens, 1), Standalone: true,
				Timestamp: millis(float64(row.StartMs - t0)), HasTimestamp: true, Extra: basetenExtra(row, r)}
			if k > 0 && r.ClosedLoop {
				p := &rows[g[k-1]]
				end := p.StartMs + max(p.DurationE2EMs, 0)
				t.Delay = millis(float64(max(row.StartMs-end, 0)))
			}
			c.Turns[k] = t
		}
		if r.Strict {
			for k := range c.Turns {
				d.Conversations = append(d.Conversations, Conversation{ID: fmt.Sprintf("%s#%d", c.ID, k), Turns: c.Turns[k : k+1 : k+1]})
			}
			continue
		}
		d.Conversations = append(d.Conversations, c)
	}
	return d, key
}

// basetenExtra is what a row adds to its request body: min_tokens (its
// output cap) and its KV-cache hints, unless r leaves them out.
func basetenExtra(row *BasetenRow, r *ReplayOptions) map[string]any {
	e := map[string]any{}
	if !r.NoMinTokens {
		e["min_tokens"] = max(row.OutputTokens, 1)
	}
	if !r.OmitKVHints {
		if len(row.TotalHashes) > 0 {
			e["hash_ids"] = row.TotalHashes
		}
		if row.BlockSize > 0 {
			e["block_size"] = row.BlockSize
		}
	}
	if len(e) == 0 {
		return nil
	}
	return e
}
