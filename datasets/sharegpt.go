package datasets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ShareGPT filter bounds (vLLM's and AIPerf's usual ones).
const (
	ShareGPTMinPrompt     = 4
	ShareGPTMaxPrompt     = 1024
	ShareGPTMaxTotal      = 2048
	ShareGPTMinCompletion = 4
)

// ShareGPTEntry is one element of a ShareGPT JSON array.
type ShareGPTEntry struct {
	ID            string `json:"id"`
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// ShareGPTStats counts what the filter kept and why it dropped the rest.
type ShareGPTStats struct {
	Total, Kept int
	// NoReply counts entries without a human turn followed by a gpt turn.
	NoReply int
	// PromptShort, PromptLong, TotalLong and CompletionShort count the
	// entries dropped by each bound, checked in that order.
	PromptShort, PromptLong, TotalLong, CompletionShort int
}

// String is the line the run prints about the filter.
func (s ShareGPTStats) String() string {
	line := fmt.Sprintf("sharegpt: kept %d of %d (filtered: prompt too short %d, too long %d, total > %d %d, completion < %d %d",
		s.Kept, s.Total, s.PromptShort, s.PromptLong, ShareGPTMaxTotal, s.TotalLong, ShareGPTMinCompletion, s.CompletionShort)
	if s.NoReply > 0 {
		line += fmt.Sprintf(", no human→gpt pair %d", s.NoReply)
	}
	return line + ")"
}

// isHuman and isGPT name the ShareGPT roles.
func isHuman(from string) bool { return from == "human" || from == "user" }
func isGPT(from string) bool   { return from == "gpt" || from == "chatgpt" || from == "assistant" }

// readShareGPT streams a ShareGPT JSON array. Each entry's first human turn
// is the prompt and the next gpt turn's token count its output cap; the
// filter keeps prompts of 4–1024 tokens with a completion ≥ 4 tokens and a
// total ≤ 2048. data is the whole file (for line numbers in errors).
func readShareGPT(ctx context.Context, data []byte, file string, tok Tokenizer) (*Dataset, ShareGPTStats, error) {
	var st ShareGPTStats
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n")) }
	fail := func(off int64, err error) error {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return &InputError{File: file, Line: lineAt(syn.Offset), Msg: "malformed JSON: " + syn.Error(), Err: err}
		case errors.As(err, &typ):
			where := "entry"
			if typ.Field != "" {
				where = fmt.Sprintf("field %q", typ.Field)
			}
			return &InputError{File: file, Line: lineAt(typ.Offset), Msg: fmt.Sprintf("%s: want %s, got %s", where, jsonKind(typ.Type.String()), typ.Value), Err: err}
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return &InputError{File: file, Line: lineAt(off), Msg: "malformed JSON: unexpected end of file", Err: err}
		}
		return &InputError{File: file, Line: lineAt(off), Msg: "malformed JSON: " + err.Error(), Err: err}
	}
	t, err := dec.Token()
	if err != nil {
		return nil, st, fail(dec.InputOffset(), err)
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return nil, st, inputErrorf(file, 1, "want a JSON array of conversations")
	}
	d := &Dataset{Name: file}
	for dec.More() {
		if err := canceled(ctx, st.Total, file); err != nil {
			return nil, st, err
		}
		start := dec.InputOffset()
		var e ShareGPTEntry
		if err := dec.Decode(&e); err != nil {
			return nil, st, fail(start, err)
		}
		st.Total++
		line := lineAt(start + int64(leadingSpace(data[start:])))
		if e.Conversations == nil {
			return nil, st, inputErrorf(file, line, `missing required field "conversations"`)
		}
		prompt, reply, ok := "", "", false
		for i := 0; i+1 < len(e.Conversations); i++ {
			if isHuman(e.Conversations[i].From) && isGPT(e.Conversations[i+1].From) {
				prompt, reply, ok = e.Conversations[i].Value, e.Conversations[i+1].Value, true
				break
			}
		}
		if !ok {
			st.NoReply++
			continue
		}
		pl, cl := len(tok.Encode(prompt)), len(tok.Encode(reply))
		switch {
		case pl < ShareGPTMinPrompt:
			st.PromptShort++
		case cl < ShareGPTMinCompletion:
			st.CompletionShort++
		case pl > ShareGPTMaxPrompt:
			st.PromptLong++
		case pl+cl > ShareGPTMaxTotal:
			st.TotalLong++
		default:
			st.Kept++
			id := e.ID
			if id == "" {
				id = fmt.Sprintf("sharegpt-%d", st.Total-1)
			}
			d.Conversations = append(d.Conversations, Conversation{ID: id, Turns: []Turn{{Text: prompt, InputTokens: pl, MaxTokens: cl}}})
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, st, fail(dec.InputOffset(), err)
	}
	if dec.More() {
		return nil, st, inputErrorf(file, lineAt(dec.InputOffset()), "data after the JSON array")
	}
	if st.Total == 0 {
		return nil, st, inputErrorf(file, 1, "no conversations")
	}
	if st.Kept == 0 {
		return nil, st, inputErrorf(file, 0, "the filter kept no conversation: %s", st)
	}
	return d, st, nil
}

func leadingSpace(b []byte) int {
	n := 0
	for n < len(b) && (b[n] == ' ' || b[n] == '\n' || b[n] == '\r' || b[n] == '\t' || b[n] == ',') {
		n++
	}
	return n
}
