package mockserver

import (
	"strconv"
	"sync/atomic"
)

// A simulated draft model (Config.SpecTokens, Config.SpecAcceptance): each
// verify step after the first token proposes SpecTokens draft tokens and
// accepts them one by one, each with probability SpecAcceptance, up to the
// first rejected; the step emits the accepted drafts and one token of the
// target model's own. The answer reports it as vLLM does with
// --per-request-spec-decode-metrics (metrics.speculative_decoding at the
// root of the usage chunk, or of the body), and /metrics counts it in
// vLLM's spec_decode_* counters. Token timing is left as ITL says.

// MaxSpecTokens is the most draft tokens a step may propose: the
// longest histogram a surge record keeps (metrics.SpecBuckets − 1).
const MaxSpecTokens = 11

// specSalt keeps the draws of the draft model apart from the others.
const specSalt = 0xd7af7

// specOutcome is one answer's verify steps.
type specOutcome struct {
	steps, accepted, drafted int
	hist                     [MaxSpecTokens + 1]int
}

// specCounters are the /metrics counters of the draft model.
type specCounters struct {
	drafts, draftTokens, accepted atomic.Uint64
}

// speculate draws g's verify steps: they produce its tokens after the
// first (which prefill produced), the last step cut to what was left.
func (s *Server) speculate(g *generation) specOutcome {
	var o specOutcome
	k := s.cfg.SpecTokens
	state := s.cfg.Seed ^ splitmix64(g.n^specSalt)
	for left := g.out - 1; left > 0; {
		j := 0
		for j < k {
			state = splitmix64(state)
			if unitFloat(state) >= s.cfg.SpecAcceptance {
				break
			}
			j++
		}
		j = min(j, left-1) // the step emits j drafts and its own token
		o.steps++
		o.accepted += j
		o.drafted += k
		o.hist[j]++
		left -= j + 1
	}
	return o
}

// drafting says the mock simulates a draft model.
func (s *Server) drafting() bool { return s.cfg.SpecTokens > 0 }

// appendSpecMetrics appends vLLM's metrics object for g,
// {"speculative_decoding":{…}}, and counts g's steps in /metrics.
func (s *Server) appendSpecMetrics(b []byte, g *generation) []byte {
	k := s.cfg.SpecTokens
	o := s.speculate(g)
	s.spec.drafts.Add(uint64(o.steps))
	s.spec.draftTokens.Add(uint64(o.drafted))
	s.spec.accepted.Add(uint64(o.accepted))
	length, rate := 1.0, 0.0
	if o.steps > 0 {
		length = 1 + float64(o.accepted)/float64(o.steps)
	}
	if o.drafted > 0 {
		rate = float64(o.accepted) / float64(o.drafted)
	}
	b = append(b, `{"speculative_decoding":{"mean_acceptance_length":`...)
	b = strconv.AppendFloat(b, length, 'g', -1, 64)
	b = append(b, `,"draft_acceptance_rate":`...)
	b = strconv.AppendFloat(b, rate, 'g', -1, 64)
	b = append(b, `,"acceptance_histogram":[`...)
	for j := 0; j <= k; j++ {
		if j > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(o.hist[j]), 10)
	}
	b = append(b, `],"num_spec_steps":`...)
	b = strconv.AppendInt(b, int64(o.steps), 10)
	b = append(b, `,"num_accepted_draft_tokens":`...)
	b = strconv.AppendInt(b, int64(o.accepted), 10)
	b = append(b, `,"num_draft_tokens":`...)
	b = strconv.AppendInt(b, int64(o.drafted), 10)
	b = append(b, `,"num_spec_tokens":`...)
	b = strconv.AppendInt(b, int64(k), 10)
	return append(b, "}}"...)
}
