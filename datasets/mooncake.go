package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"
)

// DefaultISLBlockSize is the Mooncake trace's prefix block size in tokens.
const DefaultISLBlockSize = 512

// MooncakeRow is one line of a Mooncake trace (AIPerf's mooncake_trace).
// Its input is exactly one of: InputLength (a generated prompt, its blocks
// named by HashIDs), Text, Messages or Payload.
type MooncakeRow struct {
	// Line is the 1-based line number in the file.
	Line int
	// Timestamp is the arrival offset in milliseconds (HasTimestamp).
	Timestamp    float64
	HasTimestamp bool
	// Delay is the think time in milliseconds before this turn (HasDelay).
	Delay    float64
	HasDelay bool
	// InputLength is the prompt length in tokens (0 with Text set: unknown).
	InputLength int
	// OutputLength is the output cap in tokens; 0 sends none.
	OutputLength int
	// HashIDs name the prompt's blocks; equal ids are equal text.
	HashIDs []int64
	// SessionID groups rows into one multi-turn conversation.
	SessionID string
	// Text, when set, is the literal prompt ("text_input"; surge also reads
	// "text") instead of generated blocks.
	Text    string
	HasText bool
	// Messages are OpenAI chat messages sent as given, with Tools; with
	// Delta (message_mode "delta") they are only the turn's new messages.
	Messages []map[string]any
	Tools    []map[string]any
	Delta    bool
	// Payload is a whole request body, sent verbatim.
	Payload map[string]any
	// Extra holds request body fields merged into this row's request.
	Extra map[string]any
	// AfterToolUse marks a WEKA call whose session's call before it
	// stopped to use a tool: its new context is that tool's result.
	AfterToolUse bool
}

type mooncakeJSON struct {
	Timestamp    *float64         `json:"timestamp"`
	Delay        *float64         `json:"delay"`
	InputLength  *int             `json:"input_length"`
	OutputLength *int             `json:"output_length"`
	HashIDs      []int64          `json:"hash_ids"`
	SessionID    *string          `json:"session_id"`
	TextInput    *string          `json:"text_input"`
	Text         *string          `json:"text"`
	Messages     []map[string]any `json:"messages"`
	Tools        []map[string]any `json:"tools"`
	Payload      map[string]any   `json:"payload"`
	MessageMode  *string          `json:"message_mode"`
	Extra        map[string]any   `json:"extra"`
	// hasX record which keys were present (null included), for AIPerf's
	// "exactly one input" rule.
	hasMessages, hasTools, hasPayload bool
}

// UnmarshalJSON notes which of messages, tools and payload were given:
// an explicit null or [] must not pass for "absent".
func (j *mooncakeJSON) UnmarshalJSON(b []byte) error {
	type plain mooncakeJSON
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	if err := json.Unmarshal(b, (*plain)(j)); err != nil {
		return err
	}
	_, j.hasMessages = keys["messages"]
	_, j.hasTools = keys["tools"]
	_, j.hasPayload = keys["payload"]
	return nil
}

// ParseMooncakeLine parses one Mooncake trace line. blockSize checks that
// input_length fits its hash_ids: (len-1)*blockSize < input_length ≤
// len*blockSize. Errors are *InputError for file:line.
func ParseMooncakeLine(file string, line int, b []byte, blockSize int) (MooncakeRow, error) {
	var j mooncakeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return MooncakeRow{}, jsonLineError(file, line, err)
	}
	r := MooncakeRow{Line: line, HashIDs: j.HashIDs, Extra: j.Extra}
	if j.Timestamp != nil {
		if err := checkMillis(*j.Timestamp); err != "" {
			return r, inputErrorf(file, line, "timestamp %v: %s", *j.Timestamp, err)
		}
		r.Timestamp, r.HasTimestamp = *j.Timestamp, true
	}
	if j.Delay != nil {
		if err := checkMillis(*j.Delay); err != "" {
			return r, inputErrorf(file, line, "delay %v: %s", *j.Delay, err)
		}
		r.Delay, r.HasDelay = *j.Delay, true
	}
	if j.SessionID != nil {
		if *j.SessionID == "" {
			return r, inputErrorf(file, line, "session_id is empty")
		}
		r.SessionID = *j.SessionID
	}
	if j.OutputLength != nil {
		if *j.OutputLength < 0 {
			return r, inputErrorf(file, line, "output_length must not be negative, got %d", *j.OutputLength)
		}
		if err := tokensInput(file, line, "output_length", *j.OutputLength); err != nil {
			return r, err
		}
		r.OutputLength = *j.OutputLength
	}
	if j.InputLength != nil {
		if err := tokensInput(file, line, "input_length", *j.InputLength); err != nil {
			return r, err
		}
	}
	if j.TextInput != nil && j.Text != nil {
		return r, inputErrorf(file, line, `give "text_input" or "text", not both`)
	}
	if j.Text != nil {
		j.TextInput = j.Text
	}
	inputs := 0
	for _, given := range []bool{j.TextInput != nil, j.hasMessages, j.hasPayload} {
		if given {
			inputs++
		}
	}
	switch {
	case inputs == 0 && j.InputLength == nil:
		return r, inputErrorf(file, line, `missing an input: give "input_length" (with optional "hash_ids"), "text_input", "messages" or "payload"`)
	case inputs > 1 || (inputs == 1 && j.InputLength != nil && j.TextInput == nil):
		return r, inputErrorf(file, line, `"input_length", "text_input", "messages" and "payload" exclude each other: give one`)
	case j.HashIDs != nil && (j.InputLength == nil || inputs > 0):
		return r, inputErrorf(file, line, `"hash_ids" needs "input_length" (and no text_input, messages or payload)`)
	case j.hasTools && !j.hasMessages:
		return r, inputErrorf(file, line, `"tools" needs "messages"`)
	case j.MessageMode != nil && *j.MessageMode != "history" && *j.MessageMode != "delta":
		return r, inputErrorf(file, line, `message_mode %q: want "history" or "delta"`, *j.MessageMode)
	}
	if j.MessageMode != nil && *j.MessageMode == "delta" {
		if !j.hasMessages {
			return r, inputErrorf(file, line, `message_mode "delta" needs "messages"`)
		}
		if _, ok := j.Extra["messages"]; ok {
			return r, inputErrorf(file, line, `message_mode "delta": "extra" must not hold "messages" (it would replace the conversation)`)
		}
		r.Delta = true
	}
	switch {
	case j.hasPayload:
		if len(j.Payload) == 0 {
			return r, inputErrorf(file, line, `"payload" must be a non-empty object`)
		}
		r.Payload = j.Payload
		return r, nil
	case j.hasMessages:
		if err := checkMessages(j.Messages); err != nil {
			return r, inputErrorf(file, line, "%v", err)
		}
		if j.hasTools {
			if err := checkTools(j.Tools); err != nil {
				return r, inputErrorf(file, line, "%v", err)
			}
		}
		r.Messages, r.Tools = j.Messages, j.Tools
		return r, nil
	case j.TextInput != nil:
		r.Text, r.HasText = *j.TextInput, true
		if j.InputLength != nil {
			// surge's extension: the text's length when it is known.
			if *j.InputLength < 0 {
				return r, inputErrorf(file, line, "input_length must not be negative, got %d", *j.InputLength)
			}
			r.InputLength = *j.InputLength
		}
		return r, nil
	}
	r.InputLength = *j.InputLength
	if r.InputLength <= 0 {
		return r, inputErrorf(file, line, "input_length must be positive, got %d", r.InputLength)
	}
	for i, h := range r.HashIDs {
		if h < 0 {
			return r, inputErrorf(file, line, "hash_ids[%d] is negative (%d)", i, h)
		}
	}
	if n := len(r.HashIDs); n > 0 {
		lo, hi := (n-1)*blockSize, n*blockSize
		if r.InputLength <= lo || r.InputLength > hi {
			return r, inputErrorf(file, line, "input_length %d does not fit %d hash_ids of %d tokens (want %d..%d)",
				r.InputLength, n, blockSize, lo+1, hi)
		}
	}
	return r, nil
}

// generated reports whether the row's prompt is built from blocks.
func (r *MooncakeRow) generated() bool {
	return !r.HasText && r.Messages == nil && r.Payload == nil
}

// checkMillis validates a millisecond offset; it returns why it is bad.
func checkMillis(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "not a finite number"
	case v < 0:
		return "must not be negative"
	case v > float64(math.MaxInt64/int64(time.Millisecond)):
		return "too large"
	}
	return ""
}

// millis converts milliseconds to a Duration, rounding to the nanosecond.
func millis(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }

// readMooncake parses every line of a Mooncake trace, and refuses one
// that names more than MaxTraceBlocks prompt blocks in all.
func readMooncake(r io.Reader, file string, blockSize int) ([]MooncakeRow, error) {
	var rows []MooncakeRow
	blocks := 0
	err := eachLine(r, file, func(line int, b []byte) error {
		row, err := ParseMooncakeLine(file, line, b, blockSize)
		if err != nil {
			return err
		}
		if row.generated() {
			if blocks += max(len(row.HashIDs), (row.InputLength+blockSize-1)/blockSize); blocks > MaxTraceBlocks {
				le := &LimitError{What: "prompt blocks in the trace", Got: int64(blocks), Limit: MaxTraceBlocks, Unit: "blocks"}
				return &InputError{File: file, Line: line, Msg: le.Error(), Err: le}
			}
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// block is one generated prefix block: a unique head and a body that
// points into the prompter's ring.
type block struct {
	head   string
	b0, b1 string
}

func (b *block) appendTo(parts []string) []string {
	parts = append(parts, b.head)
	if b.b0 != "" {
		parts = append(parts, b.b0)
	}
	if b.b1 != "" {
		parts = append(parts, b.b1)
	}
	return parts
}

// blockBuilder builds Mooncake blocks: each distinct hash id's full block
// once (deterministic from the id and the seed), shared by every row that
// names it.
type blockBuilder struct {
	p      *prompter
	size   int
	digits int
	seed   uint64
	full   map[int64]*block
	// short counts blocks that came out a token short (no clean cut).
	short int
}

// build returns the block for id cut to n ≤ size tokens. A full block is
// cached; a cut one is built for the row.
func (bb *blockBuilder) build(id int64, n int) *block {
	if n == bb.size {
		if b, ok := bb.full[id]; ok {
			return b
		}
	}
	start := int(mix64(uint64(id)^bb.seed) % uint64(len(bb.p.starts)))
	var buf [6]string
	parts, got := bb.p.prompt(buf[:0], id, bb.digits, n, start)
	if got != n {
		bb.short++
	}
	b := &block{head: parts[0]}
	rest := parts[1:]
	if len(rest) > 0 {
		b.b0 = rest[0]
	}
	if len(rest) > 1 {
		b.b1 = rest[1]
	}
	if len(rest) > 2 {
		// A block longer than the ring (huge --isl-block-size): keep it whole.
		b.b0, b.b1 = joinParts(rest), ""
	}
	if n == bb.size {
		bb.full[id] = b
	}
	return b
}

func joinParts(p []string) string {
	n := 0
	for _, s := range p {
		n += len(s)
	}
	b := make([]byte, 0, n)
	for _, s := range p {
		b = append(b, s...)
	}
	return string(b)
}

// mooncakeDataset turns trace rows into conversations. Rows with a
// session_id become the turns of one conversation, in file order; the
// conversations are in the order of their first rows.
//
// Prompt lengths: every block is exactly its token count on its own and
// blocks meet at a space before a word, so the prompt's total matches
// input_length; where a tokenizer merges across a block boundary anyway the
// total can drift by a token or so (measured in the tests).
func mooncakeDataset(ctx context.Context, file string, rows []MooncakeRow, blockSize int, p *prompter, seed uint64) (*Dataset, *blockBuilder, error) {
	var maxID int64 = -1
	fresh := 0
	for i := range rows {
		r := &rows[i]
		for _, h := range r.HashIDs {
			maxID = max(maxID, h)
		}
		if r.generated() && len(r.HashIDs) == 0 {
			fresh += (r.InputLength + blockSize - 1) / blockSize
		}
	}
	next := maxID + 1
	bb := &blockBuilder{p: p, size: blockSize, digits: p.digits(next + int64(fresh)), seed: seed,
		full: make(map[int64]*block, int(min(next, 1<<20)))}

	d := &Dataset{Name: file}
	sessions := map[string]int{}
	ids := make([]int64, 0, 64)
	for i := range rows {
		if err := canceled(ctx, i, file); err != nil {
			return nil, nil, err
		}
		r := &rows[i]
		t := Turn{InputTokens: r.InputLength, MaxTokens: r.OutputLength, Extra: r.Extra,
			Messages: r.Messages, MessagesDelta: r.Delta, Tools: r.Tools, Payload: r.Payload}
		if r.HasTimestamp {
			t.Timestamp, t.HasTimestamp = millis(r.Timestamp), true
		}
		if r.HasDelay {
			t.Delay = millis(r.Delay)
		}
		switch {
		case r.HasText:
			t.Text = r.Text
		case !r.generated():
		default:
			ids = append(ids[:0], r.HashIDs...)
			if len(ids) == 0 {
				for n := (r.InputLength + blockSize - 1) / blockSize; n > 0; n-- {
					ids = append(ids, next)
					next++
				}
			}
			parts := make([]string, 0, 2*len(ids)+1)
			for j, h := range ids {
				n := blockSize
				if j == len(ids)-1 {
					n = r.InputLength - (len(ids)-1)*blockSize
				}
				parts = bb.build(h, n).appendTo(parts)
			}
			t.Parts = parts
		}
		if r.SessionID != "" {
			if ci, ok := sessions[r.SessionID]; ok {
				d.Conversations[ci].Turns = append(d.Conversations[ci].Turns, t)
				continue
			}
			sessions[r.SessionID] = len(d.Conversations)
			d.Conversations = append(d.Conversations, Conversation{ID: r.SessionID, Turns: []Turn{t}})
			continue
		}
		d.Conversations = append(d.Conversations, Conversation{ID: fmt.Sprintf("trace-%d", r.Line), Turns: []Turn{t}})
	}
	return d, bb, nil
}
