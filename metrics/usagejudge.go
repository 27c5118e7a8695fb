package metrics

import (
	"fmt"
	"hash/maphash"
	"math"
	"sync/atomic"
)

// The signs that give a server's usage away as not believable
// (UsageDistrust.Sign).
const (
	// SignOverCap: the usage says far more completion tokens than the
	// request's cap allowed, while surge's count of the text is within it
	// (a server that ran past its cap streams the text too).
	SignOverCap = "over_cap"
	// SignSameUsage: two answers of different texts carry the same usage,
	// where surge counts different lengths, or lengths far from it.
	SignSameUsage = "same_usage"
	// SignSamePrompt: two prompts of different lengths carry the same
	// prompt_tokens, which is not a cut of both.
	SignSamePrompt = "same_prompt_tokens"
)

// UsageDistrust is the verdict that a server's usage is not believable:
// which sign gave it away, and the counts that showed it.
type UsageDistrust struct {
	// Sign is one of SignOverCap, SignSameUsage, SignSamePrompt.
	Sign string `json:"sign"`
	// Detail says what showed it, with the requests and their counts.
	Detail string `json:"detail"`
}

// UsageWarning is the caveat for a server whose usage is not believable:
// what gave it away and what surge counts with instead.
func UsageWarning(d *UsageDistrust, withTokenizer bool) string {
	from := "the text events (no tokenizer is loaded)"
	if withTokenizer {
		from = "surge's tokenizer"
	}
	return fmt.Sprintf("the server's usage is not believable (%s): %s: token counts come from %s from then on, "+
		"and no over-cap or prompt-cut verdict rests on the server's usage (token_count_source says which count each request used)",
		d.Sign, d.Detail, from)
}

// usageObs is what the judge keeps of one response's usage: the server's
// counts beside surge's own.
type usageObs struct {
	request            string
	prompt, completion int
	// hasPrompt and hasCompletion say which counts the usage carried.
	hasPrompt, hasCompletion bool
	// sent is surge's count of the prompt, out of the output (NaN:
	// unknown); text hashes the output.
	sent, out float64
	text      uint64
	// capTokens is the request's output cap (0: none).
	capTokens int
}

// judgeRefs is how many responses the judge compares every later one
// with: the first to carry usage.
const judgeRefs = 8

// usageJudge decides, as records come in from every shard, whether the
// server's usage is believable. It takes no lock: the first responses'
// observations sit in atomic slots, the verdict is set once.
type usageJudge struct {
	refs    [judgeRefs]atomic.Pointer[usageObs]
	verdict atomic.Pointer[UsageDistrust]
	// seen counts the observations judged.
	seen atomic.Int64
	seed maphash.Seed
}

func newUsageJudge() *usageJudge { return &usageJudge{seed: maphash.MakeSeed()} }

// distrust is the verdict so far (nil: the usage is believed).
func (j *usageJudge) distrust() *UsageDistrust { return j.verdict.Load() }

// settled reports whether a held record can be judged: a sign was
// found, or two responses were compared.
func (j *usageJudge) settled() bool { return j.verdict.Load() != nil || j.seen.Load() >= 2 }

// observe builds r's observation; ok is false when r carries no usage to
// judge.
func (j *usageJudge) observe(r *Record, tc tokCounts, tok TokenCounter) (o usageObs, ok bool) {
	u := &r.Usage
	if !u.Present || r.NoOutput {
		return o, false
	}
	o = usageObs{request: r.RequestID, hasPrompt: u.Has(UsagePromptField), hasCompletion: serverOSL(r) >= 0,
		prompt: u.PromptTokens, completion: u.CompletionTokens, sent: sentLength(r, tok), out: math.NaN(),
		capTokens: r.RequestedOSL}
	if !o.hasPrompt && !o.hasCompletion {
		return o, false
	}
	if tc.ok {
		o.out = float64(tc.output + tc.reasoning)
		if u.Has(UsageReasoningField) && r.ReasoningText == "" {
			// Reasoning the server counted but did not stream (hidden
			// reasoning) is not in surge's count: compare without it.
			o.completion -= u.ReasoningTokens
		}
	}
	if math.IsNaN(o.out) && math.IsNaN(o.sent) {
		return o, false // no count of surge's own to judge it by
	}
	o.text = maphash.String(j.seed, r.Text) ^ maphash.String(j.seed, r.ReasoningText)
	return o, true
}

// judge weighs o against the responses judged before it and returns the
// verdict (nil: believe the usage) and whether it is settled. Only an
// observation kept in a free slot is copied to the heap: the first
// judgeRefs of the run.
func (j *usageJudge) judge(o *usageObs) (*UsageDistrust, bool) {
	if d := j.verdict.Load(); d != nil {
		return d, true
	}
	d := overCapSign(o)
	for i := 0; d == nil && i < len(j.refs); i++ {
		ref := j.refs[i].Load()
		if ref == nil {
			kept := new(usageObs)
			*kept = *o
			if j.refs[i].CompareAndSwap(nil, kept) {
				break
			}
			ref = j.refs[i].Load()
		}
		d = pairSign(ref, o)
	}
	j.seen.Add(1)
	if d != nil {
		j.verdict.CompareAndSwap(nil, d)
	}
	return j.verdict.Load(), j.settled()
}

// overCapSign is the over-cap sign of one response, nil without it.
func overCapSign(o *usageObs) *UsageDistrust {
	if o.capTokens <= 0 || !o.hasCompletion || math.IsNaN(o.out) {
		return nil
	}
	m := TruncationMargin(float64(o.capTokens))
	if float64(o.completion) <= float64(o.capTokens)+m || o.out > float64(o.capTokens)+m {
		return nil
	}
	return &UsageDistrust{Sign: SignOverCap, Detail: fmt.Sprintf(
		"request %s asked for at most %d output tokens and its usage says %d completion tokens, where surge counts %.0f in the text it got",
		o.request, o.capTokens, o.completion, o.out)}
}

// pairSign is the sign two responses give together, nil without one.
func pairSign(a, b *usageObs) *UsageDistrust {
	if a.text == b.text {
		return nil // the same answer (a deterministic server): no sign
	}
	sameUsage := a.hasCompletion && b.hasCompletion && a.completion == b.completion &&
		a.hasPrompt == b.hasPrompt && (!a.hasPrompt || a.prompt == b.prompt)
	// The same count for both is a sign only where it fits neither text:
	// re-tokenized text spreads around the count of answers that all hit
	// their cap.
	if sameUsage && !math.IsNaN(a.out) && !math.IsNaN(b.out) && offBy(a.completion, a.out) && offBy(b.completion, b.out) &&
		(math.Abs(a.out-b.out) > TruncationMargin(max(a.out, b.out)) || farOff(a.completion, a.out) && farOff(b.completion, b.out)) {
		return &UsageDistrust{Sign: SignSameUsage, Detail: fmt.Sprintf(
			"requests %s and %s both say %s, where surge counts %.0f and %.0f output tokens in their different texts",
			a.request, b.request, usageCounts(a), a.out, b.out)}
	}
	if a.hasPrompt && b.hasPrompt && a.prompt == b.prompt && !math.IsNaN(a.sent) && !math.IsNaN(b.sent) &&
		math.Abs(a.sent-b.sent) > TruncationMargin(max(a.sent, b.sent)) {
		short := min(a.sent, b.sent)
		if float64(a.prompt) >= short-TruncationMargin(short) { // not a cut of both
			return &UsageDistrust{Sign: SignSamePrompt, Detail: fmt.Sprintf(
				"requests %s and %s both say %d prompt tokens, where surge sent %.0f and %.0f",
				a.request, b.request, a.prompt, a.sent, b.sent)}
		}
	}
	return nil
}

// offBy reports a server count further from surge's than the margin.
func offBy(server int, surge float64) bool {
	return math.Abs(float64(server)-surge) > TruncationMargin(surge)
}

// farOff reports a server count that no tokenizer difference explains:
// more than twice surge's count, or under half of it, by 8 tokens more
// (a short answer's count moves by a few either way).
func farOff(server int, surge float64) bool {
	s := float64(server)
	return s > 2*surge+8 || s < surge/2-8
}

// usageCounts says an observation's usage counts in words.
func usageCounts(o *usageObs) string {
	if o.hasPrompt {
		return fmt.Sprintf("%d prompt and %d completion tokens", o.prompt, o.completion)
	}
	return fmt.Sprintf("%d completion tokens", o.completion)
}
