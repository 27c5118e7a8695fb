package datasets

import (
	"context"
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
	ID            string            `json:"id"`
	Conversations []ShareGPTMessage `json:"conversations"`
}

// ShareGPTMessage is one message of a ShareGPT conversation.
type ShareGPTMessage struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

// ShareGPTStats counts what the filter kept and why it dropped the rest.
type ShareGPTStats struct {
	Total, Kept int
	// Turns counts the kept conversations' turns (their human→gpt pairs).
	Turns int
	// NoReply counts entries without a human message followed by a gpt one.
	NoReply int
	// PromptShort, PromptLong, TotalLong and CompletionShort count the
	// entries dropped by each bound, checked in that order.
	PromptShort, PromptLong, TotalLong, CompletionShort int
}

// String is the line the run prints about the filter.
func (s ShareGPTStats) String() string {
	line := fmt.Sprintf("sharegpt: kept %d of %d, %d turns (filtered: prompt too short %d, too long %d, total > %d %d, completion < %d %d",
		s.Kept, s.Total, s.Turns, s.PromptShort, s.PromptLong, ShareGPTMaxTotal, s.TotalLong, ShareGPTMinCompletion, s.CompletionShort)
	if s.NoReply > 0 {
		line += fmt.Sprintf(", no human→gpt pair %d", s.NoReply)
	}
	return line + ")"
}

// sharegptPairs pairs prompts with completions as AIPerf does: when any
// message is from "human" or "gpt", every human message directly followed
// (among those two roles) by a gpt one is a pair, empty ones left out;
// otherwise the first two messages are the one pair.
func sharegptPairs(msgs []ShareGPTMessage) [][2]string {
	if len(msgs) < 2 {
		return nil
	}
	roles := false
	for _, m := range msgs {
		roles = roles || m.From == "human" || m.From == "gpt"
	}
	if !roles {
		if msgs[0].Value == "" || msgs[1].Value == "" {
			return nil
		}
		return [][2]string{{msgs[0].Value, msgs[1].Value}}
	}
	var rm []ShareGPTMessage
	for _, m := range msgs {
		if m.From == "human" || m.From == "gpt" {
			rm = append(rm, m)
		}
	}
	var pairs [][2]string
	for i := 0; i+1 < len(rm); {
		if rm[i].From == "human" && rm[i+1].From == "gpt" {
			if rm[i].Value != "" && rm[i+1].Value != "" {
				pairs = append(pairs, [2]string{rm[i].Value, rm[i+1].Value})
			}
			i += 2
			continue
		}
		i++
	}
	return pairs
}

// readShareGPT streams a ShareGPT JSON array. Every human→gpt pair of an
// entry is a turn of its conversation (AIPerf's rule): the human message
// is the prompt and the gpt message's token count the turn's output cap.
// An entry is kept only when every pair passes the filter (prompts of
// 4–1024 tokens, completions ≥ 4 tokens, prompt + completion ≤ 2048);
// the stats count each dropped entry under the first bound a pair broke.
func readShareGPT(ctx context.Context, r io.Reader, file string, tok Tokenizer) (*Dataset, ShareGPTStats, error) {
	var st ShareGPTStats
	s := newJSONStream(r, file)
	if err := s.delim('[', "want a JSON array of conversations"); err != nil {
		return nil, st, err
	}
	d := &Dataset{Name: file}
	for s.dec.More() {
		var e ShareGPTEntry
		line, err := s.value(&e)
		if err != nil {
			return nil, st, err
		}
		if err := canceled(ctx, st.Total, file); err != nil {
			return nil, st, err
		}
		st.Total++
		if e.Conversations == nil {
			return nil, st, inputErrorf(file, line, `missing required field "conversations"`)
		}
		pairs := sharegptPairs(e.Conversations)
		if len(pairs) == 0 {
			st.NoReply++
			continue
		}
		turns := make([]Turn, 0, len(pairs))
		for _, p := range pairs {
			pl, cl := len(tok.Encode(p[0])), len(tok.Encode(p[1]))
			bad := &st.Kept
			switch {
			case pl < ShareGPTMinPrompt:
				bad = &st.PromptShort
			case cl < ShareGPTMinCompletion:
				bad = &st.CompletionShort
			case pl > ShareGPTMaxPrompt:
				bad = &st.PromptLong
			case pl+cl > ShareGPTMaxTotal:
				bad = &st.TotalLong
			}
			if bad != &st.Kept {
				*bad++
				turns = nil
				break
			}
			turns = append(turns, Turn{Text: p[0], InputTokens: pl, MaxTokens: cl})
		}
		if turns == nil {
			continue
		}
		st.Kept++
		st.Turns += len(turns)
		id := e.ID
		if id == "" {
			id = fmt.Sprintf("sharegpt-%d", st.Total-1)
		}
		d.Conversations = append(d.Conversations, Conversation{ID: id, Turns: turns})
	}
	if err := s.delim(']', "want the end of the array"); err != nil {
		return nil, st, err
	}
	if err := s.end(); err != nil {
		return nil, st, err
	}
	if st.Total == 0 {
		return nil, st, inputErrorf(file, 1, "no conversations")
	}
	if st.Kept == 0 {
		return nil, st, inputErrorf(file, 0, "the filter kept no conversation: %s", st)
	}
	return d, st, nil
}
