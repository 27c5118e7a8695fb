package mockserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// runeTokenizer counts a token per 4 bytes, and how often it was asked.
type runeTokenizer struct{ calls atomic.Int64 }

func (r *runeTokenizer) Count(s string) int { r.calls.Add(1); return (len(s) + 3) / 4 }

// promptTokens posts body to url and returns the answer's
// usage.prompt_tokens.
func promptTokens(t *testing.T, url, body string) int {
	t.Helper()
	resp := post(t, t.Context(), url, body)
	defer resp.Body.Close()
	var m struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: status %d, %v", url, resp.StatusCode, err)
	}
	return m.Usage.PromptTokens
}

// TestTokenizerCountsUsage: with a Tokenizer, usage.prompt_tokens is its
// count of the prompt's text (each message's, summed), every API's; a
// prompt sent again is counted from the memo, not tokenized again.
func TestTokenizerCountsUsage(t *testing.T) {
	t.Parallel()
	tok := &runeTokenizer{}
	_, ts := newTestServer(t, Config{Tokenizer: tok})
	prompt := strings.Repeat("abcd efgh ", 50) // 500 bytes, 100 words
	body := fmt.Sprintf(`{"messages":[{"role":"system","content":"abcdefgh"},{"role":"user","content":%q}],"max_tokens":2}`, prompt)
	for i := range 3 {
		if got := promptTokens(t, ts.URL+"/v1/chat/completions", body); got != 2+125 {
			t.Errorf("request %d: prompt_tokens %v, want the tokenizer's 2 + 125", i, got)
		}
	}
	if n := tok.calls.Load(); n != 2 {
		t.Errorf("the tokenizer counted %d texts for 3 requests of the same 2, want 2 (the rest from the memo)", n)
	}
	completions := fmt.Sprintf(`{"prompt":%q,"max_tokens":2}`, prompt)
	if got := promptTokens(t, ts.URL+"/v1/completions", completions); got != 125 {
		t.Errorf("completions: prompt_tokens %v, want 125", got)
	}
	// Without one, words.
	_, plain := newTestServer(t, Config{})
	if got := promptTokens(t, plain.URL+"/v1/completions", completions); got != 100 {
		t.Errorf("no tokenizer: prompt_tokens %v, want 100 words", got)
	}
}

// TestCounterMemoIsBounded: past memoMax texts the memo starts over, so a
// run of ever-new prompts holds no more than memoMax counts.
func TestCounterMemoIsBounded(t *testing.T) {
	t.Parallel()
	tok := &runeTokenizer{}
	c := newCounter(tok)
	for i := range memoMax + 10 {
		if got := c.count(strings.Repeat("x", i)); got != (i+3)/4 {
			t.Fatalf("count of %d bytes = %d", i, got)
		}
	}
	if n := c.n.Load(); n > memoMax {
		t.Errorf("%d counts kept, want at most %d", n, memoMax)
	}
	if c.count("") != 0 || newCounter(nil) != words || words.count(" a  b ") != 2 {
		t.Error("the word counter is not the default")
	}
}

// TestPromptPrefill: each prompt token adds PrefillPerToken to TTFT, as a
// server's prefill does. The server's deadlines are never early, so the
// lower bounds hold on any machine; the short prompt's upper bound is
// loose (a busy machine delays, it does not add the long prompt's cost).
func TestPromptPrefill(t *testing.T) {
	t.Parallel()
	const ttft, perToken = 5 * time.Millisecond, 200 * time.Microsecond
	_, ts := newTestServer(t, Config{TTFT: ttft, PrefillPerToken: perToken})
	first := func(words int) time.Duration {
		body := fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"stream":true,"max_tokens":2}`, strings.Repeat("w ", words))
		sent, evs := streamEvents(t, ts.URL+"/v1/chat/completions", body)
		return evs[1].at.Sub(sent)
	}
	long := first(1000) // 200 ms of prefill
	if floor := ttft + 1000*perToken; long < floor {
		t.Errorf("1000-token prompt: TTFT %v, under TTFT + prefill %v", long, floor)
	}
	if short := first(10); short >= ttft+1000*perToken || short < ttft+10*perToken {
		t.Errorf("10-token prompt: TTFT %v, want from %v and well under the long prompt's %v", short, ttft+10*perToken, long)
	}
}
