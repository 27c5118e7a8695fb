package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// BailianBlockSize is the Bailian traces' prefix block size in tokens (one
// salted SipHash per 16 tokens).
const BailianBlockSize = 16

// BailianRow is one line of an Alibaba Bailian trace (AIPerf's
// bailian_trace; github.com/alibaba-edu/qwen-bailian-usagetraces-anon).
// Every row is a whole request: a follow-up's InputLength and HashIDs
// cover the history the service kept, not only the new text.
type BailianRow struct {
	// Line is the 1-based line number in the file.
	Line int
	// ChatID names the request; ParentChatID the request it follows (-1:
	// it opens a conversation).
	ChatID, ParentChatID int64
	// Timestamp is the arrival time in seconds.
	Timestamp float64
	// InputLength and OutputLength are the request's token counts.
	InputLength, OutputLength int
	// Type is the request type ("text", …), kept for reports.
	Type string
	// Turn is the request's position in its conversation (1 first).
	Turn int
	// HashIDs name the prompt's 16-token blocks.
	HashIDs []int64
}

type bailianJSON struct {
	ChatID       *int64   `json:"chat_id"`
	ParentChatID *int64   `json:"parent_chat_id"`
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	Type         string   `json:"type"`
	Turn         *int     `json:"turn"`
	HashIDs      []int64  `json:"hash_ids"`
}

// ParseBailianLine parses one Bailian trace line. Errors are *InputError
// for file:line.
func ParseBailianLine(file string, line int, b []byte) (BailianRow, error) {
	var j bailianJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return BailianRow{}, jsonLineError(file, line, err)
	}
	r := BailianRow{Line: line, Type: j.Type, HashIDs: j.HashIDs}
	for _, f := range []struct {
		name string
		set  bool
	}{{"chat_id", j.ChatID != nil}, {"parent_chat_id", j.ParentChatID != nil}, {"timestamp", j.Timestamp != nil},
		{"input_length", j.InputLength != nil}, {"output_length", j.OutputLength != nil}, {"turn", j.Turn != nil}} {
		if !f.set {
			return r, inputErrorf(file, line, "missing required field %q", f.name)
		}
	}
	r.ChatID, r.ParentChatID, r.Timestamp = *j.ChatID, *j.ParentChatID, *j.Timestamp
	r.InputLength, r.OutputLength, r.Turn = *j.InputLength, *j.OutputLength, *j.Turn
	switch {
	case r.ChatID < 0:
		return r, inputErrorf(file, line, "chat_id must not be negative, got %d", r.ChatID)
	case r.ParentChatID < -1:
		return r, inputErrorf(file, line, "parent_chat_id must be -1 (no parent) or a chat_id, got %d", r.ParentChatID)
	case r.ParentChatID == r.ChatID:
		return r, inputErrorf(file, line, "parent_chat_id is the row's own chat_id %d", r.ChatID)
	case r.InputLength <= 0:
		return r, inputErrorf(file, line, "input_length must be positive, got %d", r.InputLength)
	case r.OutputLength < 0:
		return r, inputErrorf(file, line, "output_length must not be negative, got %d", r.OutputLength)
	case r.Turn < 0:
		return r, inputErrorf(file, line, "turn must not be negative, got %d", r.Turn)
	}
	if msg := checkSeconds(r.Timestamp); msg != "" {
		return r, inputErrorf(file, line, "timestamp %v: %s", r.Timestamp, msg)
	}
	for i, h := range r.HashIDs {
		if h < 0 {
			return r, inputErrorf(file, line, "hash_ids[%d] is negative (%d)", i, h)
		}
	}
	return r, nil
}

// checkSeconds validates an offset in seconds; it returns why it is bad.
func checkSeconds(v float64) string {
	if msg := checkMillis(v); msg != "" {
		return msg
	}
	return checkMillis(v * 1000)
}

// readBailian parses every line of a Bailian trace; a chat_id used twice
// is an error.
func readBailian(r io.Reader, file string) ([]BailianRow, error) {
	var rows []BailianRow
	seen := map[int64]int{}
	err := eachLine(r, file, func(line int, b []byte) error {
		row, err := ParseBailianLine(file, line, b)
		if err != nil {
			return err
		}
		if first, dup := seen[row.ChatID]; dup {
			return inputErrorf(file, line, "chat_id %d already used on line %d", row.ChatID, first)
		}
		seen[row.ChatID] = line
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// bailianSessions groups rows into conversations as AIPerf does: a row
// belongs to the conversation of the root its parent_chat_id chain leads
// to (a parent missing from the file, or a loop, ends the chain there),
// conversations in the order of their first rows, turns ordered by "turn"
// (file order among equal turns). It returns the rows in that order as
// Mooncake rows, each conversation's rows together under one session id.
func bailianSessions(rows []BailianRow) []MooncakeRow {
	byID := make(map[int64]int, len(rows))
	for i := range rows {
		byID[rows[i].ChatID] = i
	}
	root := make(map[int64]int64, len(rows))
	find := func(id int64) int64 {
		if r, ok := root[id]; ok {
			return r
		}
		var path []int64
		seen := map[int64]bool{}
		cur := id
		for {
			i, ok := byID[cur]
			if !ok || rows[i].ParentChatID == -1 || seen[cur] {
				break
			}
			if r, ok := root[cur]; ok {
				cur = r
				break
			}
			seen[cur] = true
			p := rows[i].ParentChatID
			if _, ok := byID[p]; !ok {
				break
			}
			path = append(path, cur)
			cur = p
		}
		for _, n := range path {
			root[n] = cur
		}
		root[id] = cur
		return cur
	}
	order := map[int64]int{} // root → session index
	idx := make([]int, len(rows))
	for i := range rows {
		r := find(rows[i].ChatID)
		s, ok := order[r]
		if !ok {
			s = len(order)
			order[r] = s
		}
		idx[i] = s
	}
	perm := make([]int, len(rows))
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(a, b int) bool {
		ra, rb := perm[a], perm[b]
		if idx[ra] != idx[rb] {
			return idx[ra] < idx[rb]
		}
		return rows[ra].Turn < rows[rb].Turn
	})
	out := make([]MooncakeRow, len(rows))
	var prev *BailianRow
	for k, i := range perm {
		r := &rows[i]
		m := MooncakeRow{Line: r.Line, InputLength: r.InputLength, OutputLength: r.OutputLength, HashIDs: r.HashIDs,
			Timestamp: r.Timestamp * 1000, HasTimestamp: true,
			SessionID: fmt.Sprintf("bailian-%d", find(r.ChatID))}
		if prev != nil && idx[i] == idx[perm[k-1]] {
			// The gap between the two requests' arrivals, waited after the
			// earlier one's reply (the trace does not say how long that took).
			m.Delay, m.HasDelay = max(r.Timestamp-prev.Timestamp, 0)*1000, true
		}
		out[k] = m
		prev = r
	}
	return out
}

// fitBlocks makes every generated row's hash ids cover its input length
// exactly as the block builder needs, (n-1)·size < input_length ≤ n·size:
// ids past the length are dropped, and a length longer than its ids gets
// fresh ids of its own (unseen anywhere in rows) for the rest. Traces whose
// hash ids cover only part of a prompt (Bailian's, a Weka request's) load
// this way instead of failing the Mooncake rule.
func fitBlocks(rows []MooncakeRow, size int) {
	var next int64
	for i := range rows {
		for _, h := range rows[i].HashIDs {
			next = max(next, h+1)
		}
	}
	for i := range rows {
		r := &rows[i]
		if !r.generated() || len(r.HashIDs) == 0 {
			continue
		}
		n := (r.InputLength + size - 1) / size
		switch {
		case len(r.HashIDs) > n:
			r.HashIDs = r.HashIDs[:n:n]
		case len(r.HashIDs) < n:
			ids := make([]int64, n)
			k := copy(ids, r.HashIDs)
			for ; k < n; k++ {
				ids[k] = next
				next++
			}
			r.HashIDs = ids
		}
	}
}

// traceBlocksDataset builds a trace's conversations from Mooncake-shaped
// rows (prompts of prefix blocks shared by hash id), every turn standalone:
// each row's length already counts its conversation's history.
func traceBlocksDataset(ctx context.Context, file string, rows []MooncakeRow, size int, p *prompter, seed uint64) (*Dataset, *blockStats, error) {
	fitBlocks(rows, size)
	d, bb, err := mooncakeDataset(ctx, file, rows, size, p, seed)
	if err != nil {
		return nil, nil, err
	}
	for i := range d.Conversations {
		for j := range d.Conversations[i].Turns {
			d.Conversations[i].Turns[j].Standalone = true
		}
	}
	return d, bb, nil
}
