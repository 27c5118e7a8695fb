package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// SyntheticOptions describes generated prompts.
type SyntheticOptions struct {
	// Count is the number of single-turn conversations to build.
	Count int
	// ISL and ISLStddev give the prompt length in tokens (normal, ≥ 1).
	ISL, ISLStddev int
	// OSL and OSLStddev give the output cap in tokens (0 OSL: no cap).
	OSL, OSLStddev int
	// Seed makes the prompts reproducible.
	Seed uint64
}

// words is a stand-in corpus until the tokenizer-exact generator lands.
var words = strings.Fields(`the quick brown fox jumps over the lazy dog while a
river runs past old stone walls and the wind carries seeds across green fields
toward distant hills where shepherds watch their flocks under a pale sky`)

// Synthetic builds Count single-turn conversations of sampled lengths.
func Synthetic(o SyntheticOptions) (*Dataset, error) {
	if o.Count <= 0 {
		return nil, fmt.Errorf("synthetic dataset: count must be positive, got %d", o.Count)
	}
	if o.ISL <= 0 {
		return nil, fmt.Errorf("synthetic dataset: --isl must be positive, got %d", o.ISL)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	d := &Dataset{Name: "synthetic", Conversations: make([]Conversation, o.Count)}
	for i := range d.Conversations {
		isl := sampleLength(rng, o.ISL, o.ISLStddev, 1)
		osl := 0
		if o.OSL > 0 {
			osl = sampleLength(rng, o.OSL, o.OSLStddev, 1)
		}
		var b strings.Builder
		for j := 0; j < isl; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		d.Conversations[i] = Conversation{
			ID:    fmt.Sprintf("synthetic-%d", i),
			Turns: []Turn{{Text: b.String(), InputTokens: isl, MaxTokens: osl}},
		}
	}
	return d, nil
}

// sampleLength draws round(N(mean, stddev)) clamped to at least min.
func sampleLength(rng *rand.Rand, mean, stddev, min int) int {
	v := mean
	if stddev > 0 {
		v = int(math.Round(float64(mean) + rng.NormFloat64()*float64(stddev)))
	}
	if v < min {
		v = min
	}
	return v
}
