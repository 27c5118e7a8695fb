package datasets

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
)

// Sampling strategies (--dataset-sampling-strategy), as AIPerf names them:
// which conversation each session of a run takes.
const (
	// SampleSequential takes the conversations in order, wrapping around.
	SampleSequential = "sequential"
	// SampleRandom draws each session's conversation uniformly, with
	// replacement.
	SampleRandom = "random"
	// SampleShuffle takes the conversations in a shuffled order without
	// replacement, shuffling again each time all were used.
	SampleShuffle = "shuffle"
)

// ParseSampling validates a strategy name; "" is kept (the dataset type's
// default, DefaultSampling).
func ParseSampling(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", SampleSequential, SampleRandom, SampleShuffle:
		return v, nil
	}
	return "", fmt.Errorf("%q is not a sampling strategy (want %s, %s or %s)", s, SampleSequential, SampleRandom, SampleShuffle)
}

// DefaultSampling is AIPerf's preferred strategy for a dataset type
// (Dataset.Type): shuffle for synthetic prompts and random pools,
// sequential for files whose order means something.
func DefaultSampling(typ string) string {
	switch typ {
	case TypeSynthetic, TypeRandomPool:
		return SampleShuffle
	}
	return SampleSequential
}

// Sampler picks the conversation of a run's i-th session (counted across
// the run's stages) from n conversations, reproducibly from a seed. Its
// Pick is safe for concurrent use.
type Sampler struct {
	strategy string
	n        int
	seed     uint64
	mu       sync.Mutex
	epoch    int   // the shuffle pass perm holds (-1: none yet)
	perm     []int // the shuffled order of pass epoch
}

// NewSampler returns the strategy's sampler over n > 0 conversations.
func NewSampler(strategy string, n int, seed uint64) *Sampler {
	return &Sampler{strategy: strategy, n: max(n, 1), seed: seed, epoch: -1}
}

// shuffleHeld is the largest n whose shuffle passes are held as a table;
// above it (a dataset built on demand) a pass's order is computed
// position by position (shuffleAt).
const shuffleHeld = 1 << 20

// Pick is the conversation of session i (i ≥ 0).
func (s *Sampler) Pick(i int) int {
	switch s.strategy {
	case SampleRandom:
		return int(mix64(s.seed^mix64(uint64(i)+0x5a3)) % uint64(s.n))
	case SampleShuffle:
		if s.n > shuffleHeld {
			return int(shuffleAt(uint64(s.n), mix64(s.seed^0x5f1e)^uint64(i/s.n), uint64(i%s.n)))
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if e := i / s.n; e != s.epoch {
			s.epoch = e
			if s.perm == nil {
				s.perm = make([]int, s.n)
			}
			for k := range s.perm {
				s.perm[k] = k
			}
			rng := rand.New(rand.NewPCG(s.seed, 0x5f1e+uint64(e)))
			rng.Shuffle(s.n, func(a, b int) { s.perm[a], s.perm[b] = s.perm[b], s.perm[a] })
		}
		return s.perm[i%s.n]
	}
	return i % s.n
}

// shuffleAt is position k of a keyed permutation of [0, n): a four-round
// Feistel network on the smallest even number of bits that holds n,
// cycle-walked back into [0, n) (at most four steps on average). It holds
// nothing, so a pass over a dataset of any size costs no table.
func shuffleAt(n, key, k uint64) uint64 {
	half := uint(1)
	for uint64(1)<<(2*half) < n {
		half++
	}
	mask := uint64(1)<<half - 1
	for {
		l, r := k>>half, k&mask
		for round := uint64(0); round < 4; round++ {
			l, r = r, l^(mix64(r^key^round<<56)&mask)
		}
		k = l<<half | r
		if k < n {
			return k
		}
	}
}
