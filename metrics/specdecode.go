package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Speculative decoding, per request as the server reported it (AIPerf's
// spec_decode_* metrics): a draft model proposes tokens, the target model
// verifies them in one step, keeping the accepted ones and one token of its
// own (the bonus token). The loadgen fills Record.SpecDecode from the
// response (vLLM's metrics.speculative_decoding, TensorRT-LLM's per-choice
// speculative_decoding, SGLang's meta_info, llama.cpp's timings).

// SpecEngine names the server whose payload a SpecDecode came from.
type SpecEngine uint8

// The engines whose per-request payloads surge reads.
const (
	SpecNone SpecEngine = iota
	SpecVLLM
	SpecTRTLLM
	SpecSGLang
	SpecLlamaCpp
)

// String is the engine's name as AIPerf's records give it.
func (e SpecEngine) String() string {
	switch e {
	case SpecVLLM:
		return "vllm"
	case SpecTRTLLM:
		return "tensorrt_llm"
	case SpecSGLang:
		return "sglang"
	case SpecLlamaCpp:
		return "llamacpp"
	}
	return ""
}

// SpecBuckets is the longest acceptance histogram a record keeps: steps
// that accepted 0 … SpecBuckets−1 draft tokens (drafts of up to 11
// tokens a step: EAGLE's and MTP's are 1–8). A longer one is checked and
// its counts kept, the histogram itself not: a record is made per request,
// and a larger one would cost every request a larger allocation.
const SpecBuckets = 12

// SpecDecode is one request's speculative-decoding acceptance. The zero
// value is a response that reported none.
type SpecDecode struct {
	// Steps counts the verify steps; Accepted the draft tokens accepted
	// (bonus tokens not counted); Drafted those proposed (−1: the server
	// did not say).
	Steps, Accepted, Drafted int32
	// Hist[j] is the steps that accepted exactly j draft tokens, its first
	// Buckets entries (0: no histogram, or a bucket past 65,535 steps:
	// the record stays small, it is kept for every request).
	Hist    [SpecBuckets]uint16
	Buckets uint8
	Engine  SpecEngine
	// Rejected is set when the payload contradicted itself (a histogram
	// that does not add up to its steps, more accepted than proposed):
	// none of it is believed.
	Rejected bool
}

// Reported says the response carried a payload surge believes, verify
// steps or none.
func (s *SpecDecode) Reported() bool { return s.Engine != SpecNone && !s.Rejected }

// The per-request spec-decode metrics, AIPerf's tags, present on the
// requests whose server reported at least one verify step.
const (
	// SpecAcceptanceLength is 1 + accepted / steps: tokens emitted per
	// verify step, the bonus token included.
	SpecAcceptanceLength Tag = "spec_decode_acceptance_length"
	// SpecDraftAcceptanceRate is accepted / proposed draft tokens, in %.
	SpecDraftAcceptanceRate Tag = "spec_decode_draft_acceptance_rate"
	// SpecAcceptedPerVerified is (accepted + steps) / (proposed + steps).
	SpecAcceptedPerVerified Tag = "spec_decode_accepted_per_verified"
	SpecSteps               Tag = "spec_decode_steps"
	SpecAcceptedDraftTokens Tag = "spec_decode_accepted_draft_tokens"
	SpecDraftTokens         Tag = "spec_decode_draft_tokens"
)

// The run-level spec-decode metrics.
const (
	TotalSpecSteps           Tag = "total_spec_decode_steps"
	TotalAcceptedDraftTokens Tag = "total_accepted_draft_tokens"
	TotalDraftTokens         Tag = "total_draft_tokens"
	// SpecTokenWeightedAcceptanceLength is 1 + Σ accepted / Σ steps: every
	// verify step weighs the same (spec_decode_acceptance_length's mean
	// weighs every request the same).
	SpecTokenWeightedAcceptanceLength Tag = "spec_decode_token_weighted_acceptance_length"
	// SpecOverallDraftAcceptanceRate is Σ accepted / Σ proposed, in %.
	SpecOverallDraftAcceptanceRate Tag = "spec_decode_overall_draft_acceptance_rate"
	// SpecZeroStepRequests counts the requests whose server reported
	// spec-decode stats without a verify step (present when any did).
	SpecZeroStepRequests Tag = "spec_decode_zero_step_requests"
)

// specTagList lists the per-request spec-decode metrics in Values.Spec
// order.
var specTagList = [specTags]Tag{SpecAcceptanceLength, SpecDraftAcceptanceRate, SpecAcceptedPerVerified, SpecSteps,
	SpecAcceptedDraftTokens, SpecDraftTokens}

// specTags is len(specTagList).
const specTags = 6

// SpecCounts are a request's verify steps and accepted and proposed
// draft tokens, as Values keeps them (Steps 0: no step reported; Drafted
// −1: not reported).
type SpecCounts struct {
	Steps, Accepted, Drafted int32
}

// specCounts is what of s the metrics need (zero: nothing believed).
func specCounts(s *SpecDecode) SpecCounts {
	if !s.Reported() || s.Steps <= 0 {
		return SpecCounts{}
	}
	return SpecCounts{Steps: s.Steps, Accepted: s.Accepted, Drafted: s.Drafted}
}

// value is the specTagList[i] metric (NaN: not reported, or no verify
// step).
func (c SpecCounts) value(i int) float64 {
	if c.Steps <= 0 {
		return math.NaN()
	}
	steps, acc, d := float64(c.Steps), float64(c.Accepted), float64(c.Drafted)
	switch specTagList[i] {
	case SpecAcceptanceLength:
		return 1 + acc/steps
	case SpecSteps:
		return steps
	case SpecAcceptedDraftTokens:
		return acc
	}
	if c.Drafted < 0 {
		return math.NaN()
	}
	switch specTagList[i] {
	case SpecDraftAcceptanceRate:
		if d > 0 {
			return 100 * acc / d
		}
	case SpecAcceptedPerVerified:
		return (acc + steps) / (d + steps)
	case SpecDraftTokens:
		return d
	}
	return math.NaN()
}

// specPool is what an aggregate keeps of the spec-decode payloads beyond
// the per-request metrics: the acceptance histograms pooled over the
// requests, the requests with no verify step, those whose payload was not
// believed, and those whose server sent no histogram (or one too long to
// keep) while reporting steps.
type specPool struct {
	Hist          [SpecBuckets]int64 `json:"histogram"`
	ZeroStep      int64              `json:"zero_step_requests,omitempty"`
	Rejected      int64              `json:"rejected,omitempty"`
	WithoutBucket int64              `json:"without_histogram,omitempty"`
}

func (p *specPool) add(s *SpecDecode) {
	switch {
	case s.Engine == SpecNone:
	case s.Rejected:
		p.Rejected++
	case s.Steps == 0:
		p.ZeroStep++
	case s.Buckets == 0:
		p.WithoutBucket++
	default:
		for j := range min(int(s.Buckets), SpecBuckets) {
			p.Hist[j] += int64(s.Hist[j])
		}
	}
}

func (p *specPool) merge(o *specPool) {
	for j := range p.Hist {
		p.Hist[j] += o.Hist[j]
	}
	p.ZeroStep += o.ZeroStep
	p.Rejected += o.Rejected
	p.WithoutBucket += o.WithoutBucket
}

func (p *specPool) empty() bool { return *p == specPool{} }

// valid checks a pool read back from a state file.
func (p *specPool) valid() error {
	for _, n := range append(p.Hist[:], p.ZeroStep, p.Rejected, p.WithoutBucket) {
		if n < 0 || n > maxCount {
			return fmt.Errorf("spec_decode: a count of %d", n)
		}
	}
	return nil
}

// histogram is the pooled histogram without its trailing empty buckets
// (nil: none).
func (p *specPool) histogram() []int64 {
	n := len(p.Hist)
	for n > 0 && p.Hist[n-1] == 0 {
		n--
	}
	if n == 0 {
		return nil
	}
	return append([]int64(nil), p.Hist[:n]...)
}

// warnings says what of the payloads was left out.
func (p *specPool) warnings(pooled bool) []string {
	var w []string
	if p.Rejected > 0 {
		w = append(w, fmt.Sprintf("%d responses carried speculative-decoding counts that contradict each other (a histogram that does not add up to its steps or its accepted tokens, more tokens accepted than proposed): their acceptance is left out", p.Rejected))
	}
	if p.WithoutBucket > 0 && pooled {
		w = append(w, fmt.Sprintf("the pooled spec-decode acceptance histogram leaves out %d requests whose server sent no histogram (or one longer than %d buckets): its steps add up to less than total_spec_decode_steps", p.WithoutBucket, SpecBuckets))
	}
	return w
}

// SpecHistogramLine is AIPerf's console line under the spec-decode
// metrics: each bucket's share of the verify steps, buckets 0–7 and the
// rest folded into ">=8" ("" for no histogram).
func SpecHistogramLine(hist []int64) string {
	var total int64
	for _, n := range hist {
		total += n
	}
	if total == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Accepted drafts per step (% of steps):")
	var rest int64
	for j, n := range hist {
		if j >= 8 {
			rest += n
			continue
		}
		if n == 0 {
			continue // as AIPerf's sparse histogram: no empty buckets
		}
		fmt.Fprintf(&b, "  %d: %.0f%%", j, 100*float64(n)/float64(total))
	}
	if rest > 0 {
		fmt.Fprintf(&b, "  >=8: %.0f%%", 100*float64(rest)/float64(total))
	}
	return b.String()
}

// SpecHistogramJSON is the pooled histogram in AIPerf's JSON shape: the
// accepted-draft count (as a string key) → verify steps, empty buckets
// left out.
func SpecHistogramJSON(hist []int64) map[string]int64 {
	if len(hist) == 0 {
		return nil
	}
	out := map[string]int64{}
	for j, n := range hist {
		if n > 0 {
			out[strconv.Itoa(j)] = n
		}
	}
	return out
}

// specDraftedAll says every request with accepted draft tokens reported
// the proposed ones as well.
func specDraftedAll(dists map[Tag]*dist) bool {
	acc, drafted := dists[SpecAcceptedDraftTokens], dists[SpecDraftTokens]
	return acc != nil && drafted != nil && acc.n == drafted.n
}
