package datasets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
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
	Timestamp    *float64       `json:"timestamp"`
	Delay        *float64       `json:"delay"`
	InputLength  *int           `json:"input_length"`
	OutputLength *int           `json:"output_length"`
	HashIDs      []int64        `json:"hash_ids"`
	SessionID    *string        `json:"session_id"`
	TextInput    *string        `json:"text_input"`
	Text         *string        `json:"text"`
	RawMessages  present        `json:"messages"`
	RawTools     present        `json:"tools"`
	RawPayload   present        `json:"payload"`
	MessageMode  *string        `json:"message_mode"`
	Extra        map[string]any `json:"extra"`
	// Messages, Tools and Payload are decoded from the raw values (an
	// explicit null or [] must not pass for "absent": AIPerf's "exactly
	// one input" rule); hasX record which keys were given.
	Messages                          []map[string]any
	Tools                             []map[string]any
	Payload                           map[string]any
	hasMessages, hasTools, hasPayload bool
}

// present is a JSON value kept raw, and whether its key was given at all
// (null included: encoding/json calls UnmarshalJSON for a null too).
type present struct {
	set bool
	raw []byte
}

// UnmarshalJSON keeps the value.
func (p *present) UnmarshalJSON(b []byte) error {
	p.set, p.raw = true, b
	return nil
}

// decodeMooncake reads a line in one pass; the rare rows that give
// messages, tools or a payload decode those values on their own.
func decodeMooncake(b []byte, j *mooncakeJSON) error {
	if err := json.Unmarshal(b, j); err != nil {
		return err
	}
	for _, f := range []struct {
		key string
		p   *present
		has *bool
		v   any
	}{{"messages", &j.RawMessages, &j.hasMessages, &j.Messages}, {"tools", &j.RawTools, &j.hasTools, &j.Tools},
		{"payload", &j.RawPayload, &j.hasPayload, &j.Payload}} {
		if *f.has = f.p.set; !f.p.set {
			continue
		}
		if err := json.Unmarshal(f.p.raw, f.v); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				te.Field = strings.TrimSuffix(f.key+"."+te.Field, ".")
			}
			return err
		}
	}
	return nil
}

// ParseMooncakeLine parses one Mooncake trace line. blockSize checks that
// input_length fits its hash_ids: (len-1)*blockSize < input_length ≤
// len*blockSize. Errors are *InputError for file:line.
func ParseMooncakeLine(file string, line int, b []byte, blockSize int) (MooncakeRow, error) {
	var j mooncakeJSON
	if err := decodeMooncake(b, &j); err != nil {
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

// readMooncake parses every line of a Mooncake trace into conversations
// as it goes (no row is held once it is a turn), and refuses a trace that
// names more than MaxTraceBlocks prompt blocks in all.
func readMooncake(ctx context.Context, r io.Reader, file string, blockSize int, p *prompter, seed uint64, onDemand bool) (*Dataset, *blockStats, int, error) {
	b := newTraceBuilder(file, blockSize, p, seed)
	if onDemand {
		b.store = newTraceStore(b.src)
	}
	rows := 0
	err := eachLine(r, file, func(line int, ln []byte) error {
		row, err := ParseMooncakeLine(file, line, ln, blockSize)
		if err != nil {
			return err
		}
		if row.generated() {
			if b.st.blocks += max(len(row.HashIDs), (row.InputLength+blockSize-1)/blockSize); b.st.blocks > MaxTraceBlocks {
				le := &LimitError{What: "prompt blocks in the trace", Got: int64(b.st.blocks), Limit: MaxTraceBlocks, Unit: "blocks"}
				return &InputError{File: file, Line: line, Msg: le.Error(), Err: le}
			}
		}
		rows++
		return b.add(ctx, &row)
	})
	if err != nil {
		return nil, nil, 0, err
	}
	d, st, err := b.finish(ctx)
	return d, st, rows, err
}

// readMooncakeRows reads every row of a Mooncake trace (for a reshaping
// that needs them all: synthesis), refusing one that names more than
// MaxTraceBlocks prompt blocks in all.
func readMooncakeRows(ctx context.Context, r io.Reader, file string, blockSize int) ([]MooncakeRow, error) {
	var rows []MooncakeRow
	blocks := 0
	err := eachLine(r, file, func(line int, ln []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		row, err := ParseMooncakeLine(file, line, ln, blockSize)
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
	return rows, err
}

// blockStats counts a trace's generated prompt blocks, for the report.
type blockStats struct {
	blocks int // named by its rows (hash ids, or input_length over the size)
	short  int // that come out a token short (no clean cut)
	size   int
}

// line is the report's line about the blocks.
func (st *blockStats) lines(extra string) []string {
	l := []string{fmt.Sprintf("dataset: %d prompt blocks of %d tokens (equal hash ids, equal text), spelled out as each request is sent%s", st.blocks, st.size, extra)}
	if st.short > 0 {
		l = append(l, fmt.Sprintf("dataset: %d blocks come out one token short (no clean cut)", st.short))
	}
	return l
}

// traceBuilder turns trace rows into conversations, one row at a time.
// Rows with a session_id become the turns of one conversation, in file
// order; the conversations are in the order of their first rows. A
// generated prompt is kept as its blocks (Prompt): each distinct hash id
// spells the same text wherever it is named, and rows without hash ids
// get ids of their own, after the trace's largest (known once every row
// was read: finish sets it, before any prompt is spelled).
//
// Prompt lengths: every block is exactly its token count on its own and
// blocks meet at a space before a word, so the prompt's total matches
// input_length; where a tokenizer merges across a block boundary anyway the
// total can drift by a token or so (measured in the tests).
type traceBuilder struct {
	file     string
	d        *Dataset
	src      *blockSource
	st       blockStats
	sessions map[string]int
	maxID    int64
	fresh    []*Prompt // the prompts of blocks of their own, numbered from 0 until finish
	next     int64
	rows     int
	// store, when set, keeps the rows compact instead (Options.OnDemand).
	store *traceStore
}

func newTraceBuilder(file string, blockSize int, p *prompter, seed uint64) *traceBuilder {
	return &traceBuilder{file: file, d: &Dataset{Name: file}, src: &blockSource{p: p, size: blockSize, seed: seed},
		st: blockStats{size: blockSize}, sessions: map[string]int{}, maxID: -1}
}

// add makes row a turn.
func (b *traceBuilder) add(ctx context.Context, r *MooncakeRow) error {
	if err := canceled(ctx, b.rows, b.file); err != nil {
		return err
	}
	b.rows++
	if b.store != nil {
		for _, h := range r.HashIDs {
			b.maxID = max(b.maxID, h)
		}
		b.store.add(r, &b.next)
		return nil
	}
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
		pr := &Prompt{src: b.src, tokens: r.InputLength, ids: r.HashIDs}
		for _, h := range r.HashIDs {
			b.maxID = max(b.maxID, h)
		}
		if len(r.HashIDs) == 0 {
			pr.ids, pr.first = nil, b.next
			b.next += int64(pr.blocks())
			b.fresh = append(b.fresh, pr)
		}
		t.Prompt = pr
	}
	if r.SessionID != "" {
		if ci, ok := b.sessions[r.SessionID]; ok {
			b.d.Conversations[ci].Turns = append(b.d.Conversations[ci].Turns, t)
			return nil
		}
		b.sessions[r.SessionID] = len(b.d.Conversations)
		b.d.Conversations = append(b.d.Conversations, Conversation{ID: r.SessionID, Turns: []Turn{t}})
		return nil
	}
	b.d.Conversations = append(b.d.Conversations, Conversation{ID: "trace-" + strconv.Itoa(r.Line), Turns: []Turn{t}})
	return nil
}

// finish numbers the blocks of the prompts' own after the trace's ids,
// sizes the heads for them all, and counts the blocks.
func (b *traceBuilder) finish(ctx context.Context) (*Dataset, *blockStats, error) {
	base := b.maxID + 1
	if b.store != nil {
		b.src.digits = b.src.p.digits(base + b.next)
		if err := b.store.finish(ctx, base, &b.st); err != nil {
			return nil, nil, err
		}
		return &Dataset{Name: b.file, Source: b.store}, &b.st, nil
	}
	for _, pr := range b.fresh {
		pr.first += base
	}
	b.src.digits = b.src.p.digits(base + b.next)
	b.st.blocks, b.st.short = 0, 0
	for i := range b.d.Conversations {
		if err := canceled(ctx, i, b.file); err != nil {
			return nil, nil, err
		}
		for j := range b.d.Conversations[i].Turns {
			if pr := b.d.Conversations[i].Turns[j].Prompt; pr != nil {
				b.st.blocks += pr.blocks()
				b.st.short += pr.short()
			}
		}
	}
	return b.d, &b.st, nil
}

// mooncakeDataset turns trace rows read by another reader (Bailian,
// WEKA) into conversations.
func mooncakeDataset(ctx context.Context, file string, rows []MooncakeRow, blockSize int, p *prompter, seed uint64) (*Dataset, *blockStats, error) {
	b := newTraceBuilder(file, blockSize, p, seed)
	for i := range rows {
		if err := b.add(ctx, &rows[i]); err != nil {
			return nil, nil, err
		}
	}
	return b.finish(ctx)
}
