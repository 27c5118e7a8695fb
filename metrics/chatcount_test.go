package metrics

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
)

// messageCounter is a ChatCounter whose template adds 3 tokens a message
// and 2 a request, on top of wordCounter's count; it fails on a message
// saying "fail" and counts its calls.
type messageCounter struct {
	wordCounter
	calls *atomic.Int64
}

func (m messageCounter) CountChat(msgs []ChatMessage) (int, error) {
	m.calls.Add(1)
	n := 2
	for _, msg := range msgs {
		if msg.Content == "fail" {
			return 0, errors.New("the template raised")
		}
		n += 3 + len(strings.Fields(msg.Content))
	}
	return n, nil
}

// TestChatISL: with messages and a ChatCounter the ISL is the templated
// count of all of them (the dataset's bare count of the turn is not used),
// counted once a record however many checks read it; a template that fails
// leaves the server's count or NaN, never the bare text's.
func TestChatISL(t *testing.T) {
	calls := &atomic.Int64{}
	cc := messageCounter{calls: calls}
	chat := []ChatMessage{{"system", "be brief"}, {"user", "one two"}, {"assistant", "three"}, {"user", "four five six"}}
	base := func() *Record {
		return &Record{SentNs: ms, EndNs: 3 * ms, TokenNs: []int64{2 * ms}, Streamed: true, Text: "a b",
			InputTokens: 3, InputText: "four five six", Chat: chat}
	}
	want := float64(2 + 4*3 + 2 + 2 + 1 + 3)

	r := base()
	v := Compute(r, cc)
	if v.ISL != want || v.InputSource != InputFromTokenizer {
		t.Errorf("ISL = %g from %q, want %g from the tokenizer", v.ISL, v.InputSource, want)
	}
	if got := sentLength(r, cc); got != want {
		t.Errorf("sentLength = %g, want %g", got, want)
	}
	if calls.Load() != 1 {
		t.Errorf("the template counted %d times for one record, want once", calls.Load())
	}

	// Without a ChatCounter the messages are not counted: the dataset's.
	if v := Compute(base(), wordCounter{}); v.ISL != 3 || v.InputSource != InputFromDataset {
		t.Errorf("plain counter: ISL = %g from %q, want 3 from the dataset", v.ISL, v.InputSource)
	}

	// --use-server-token-count: the server's count first.
	r = base()
	r.Usage = Usage{Present: true, PromptTokens: 40}
	if v := ComputeWith(r, cc, Counting{ServerInput: true}); v.ISL != 40 || v.InputSource != InputFromUsage {
		t.Errorf("server input: ISL = %g from %q", v.ISL, v.InputSource)
	}

	// A failing template: the server's usage, else unknown.
	r = base()
	r.Chat = []ChatMessage{{"user", "fail"}}
	if v := Compute(r, cc); !math.IsNaN(v.ISL) || v.InputSource != "" {
		t.Errorf("failed template: ISL = %g from %q, want NaN", v.ISL, v.InputSource)
	}
	if !math.IsNaN(sentLength(r, cc)) {
		t.Error("failed template: sentLength is not NaN")
	}
	r = base()
	r.Chat = []ChatMessage{{"user", "fail"}}
	r.Usage = Usage{Present: true, PromptTokens: 40}
	if v := Compute(r, cc); v.ISL != 40 || v.InputSource != InputFromUsage {
		t.Errorf("failed template with usage: ISL = %g from %q", v.ISL, v.InputSource)
	}
}
