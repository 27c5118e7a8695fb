package datasets

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
)

// PassageOptions shapes the passages a rankings query is ranked against,
// as AIPerf's --rankings-passages-mean/-stddev and
// --rankings-passages-prompt-token-mean/-stddev do.
type PassageOptions struct {
	// Count and CountStddev give the passages per query (normal, ≥ 1).
	Count, CountStddev int
	// ISL and ISLStddev give each passage's length in tokens (normal, ≥ 1).
	ISL, ISLStddev int
	// Seed makes the passages reproducible (--random-seed).
	Seed uint64
	// Tokenizer measures passage lengths; nil uses the embedded default.
	Tokenizer Tokenizer
}

// AddPassages gives every turn of d that has no passages its own: a
// sampled number of generated texts of sampled lengths, exact under the
// tokenizer as Synthetic's prompts are, each opening with a head of its
// own so no two passages are alike. A turn whose length is known
// (InputTokens) counts its passages too: a rankings request's ISL is the
// query and every passage. Turns that came with passages keep them.
func AddPassages(d *Dataset, o PassageOptions) error {
	return AddPassagesContext(context.Background(), d, o)
}

// AddPassagesContext is AddPassages that stops soon after ctx is done.
func AddPassagesContext(ctx context.Context, d *Dataset, o PassageOptions) error {
	switch {
	case o.Count <= 0:
		return optionErrorf("Passages.Count", "must be positive, got %d", o.Count)
	case o.CountStddev < 0:
		return optionErrorf("Passages.CountStddev", "must not be negative, got %d", o.CountStddev)
	case o.ISL <= 0:
		return optionErrorf("Passages.ISL", "must be positive, got %d", o.ISL)
	case o.ISLStddev < 0:
		return optionErrorf("Passages.ISLStddev", "must not be negative, got %d", o.ISLStddev)
	}
	if err := tokensOption("Passages.ISL", o.ISL); err != nil {
		return err
	}
	if err := tokensOption("Passages.ISLStddev", o.ISLStddev); err != nil {
		return err
	}
	// A request carries all its passages: their tokens together are one
	// request's, and a sampled count is capped to keep them so.
	maxCount := MaxRequestTokens / o.ISL
	if o.Count > maxCount {
		return &OptionError{Option: "Passages.Count", Reason: fmt.Sprintf("%d passages of %d tokens are over the limit of %d tokens a request", o.Count, o.ISL, MaxRequestTokens),
			Err: &LimitError{What: "passage tokens", Got: int64(o.Count) * int64(o.ISL), Limit: MaxRequestTokens, Unit: "tokens"}}
	}
	// Sample every count first: the heads' width depends on the total.
	rng := rand.New(rand.NewPCG(o.Seed, 0x7061737361676573)) // "passages"
	var counts []int
	total := 0
	for _, c := range d.Conversations {
		for _, t := range c.Turns {
			n := 0
			if len(t.Passages) == 0 {
				n = min(sampleLength(rng, o.Count, float64(o.CountStddev), 1), maxCount)
			}
			counts = append(counts, n)
			total += n
		}
	}
	if total == 0 {
		return nil
	}
	tok, err := tokenizerOrDefault(o.Tokenizer)
	if err != nil {
		return fmt.Errorf("rankings passages: %w", err)
	}
	p, err := newPrompter(tok, o.Seed)
	if err != nil {
		return fmt.Errorf("rankings passages: %w", err)
	}
	digits := p.digits(int64(total))
	id, k := int64(0), 0
	for ci := range d.Conversations {
		if err := canceled(ctx, ci, "rankings passages"); err != nil {
			return err
		}
		for ti := range d.Conversations[ci].Turns {
			t := &d.Conversations[ci].Turns[ti]
			n := counts[k]
			k++
			if n == 0 {
				continue
			}
			t.Passages = make([]string, n)
			tokens := 0
			for i := range t.Passages {
				parts, got := p.prompt(nil, id, digits, min(sampleLength(rng, o.ISL, float64(o.ISLStddev), 1), MaxRequestTokens), rng.IntN(len(p.starts)))
				id++
				t.Passages[i] = strings.Join(parts, "")
				tokens += got
			}
			if t.InputTokens > 0 {
				t.InputTokens += tokens
			}
		}
	}
	return nil
}
