package endpoint

import (
	"math"

	"github.com/surgebench/surge/metrics"
)

// Speculative-decoding payloads, found where each engine puts its own (as
// AIPerf's spec-decode adapters read them) and read by the chunk parser in
// its one pass over the bytes (Delta.Spec), allocating nothing; llama.cpp's
// timings and SGLang's meta_info also hold the server's account of the
// request's time, read in the same pass (servertiming.go).
//
//   - vLLM (--per-request-spec-decode-metrics): the response root's
//     metrics.speculative_decoding, on the body or the trailing usage chunk:
//     num_spec_steps, num_accepted_draft_tokens, num_draft_tokens,
//     num_spec_tokens, acceptance_histogram (a list: index j holds the steps
//     that accepted j draft tokens; an object of string keys in early
//     builds).
//   - TensorRT-LLM (per_request_spec_decode_stats): the choice's
//     speculative_decoding, on the chunk that finishes it: num_spec_steps,
//     total_accepted_draft_tokens, total_draft_tokens, num_spec_tokens
//     (null under a draft-length schedule), acceptance_histogram.
//   - SGLang: meta_info (the response root's, or the choice's):
//     spec_verify_ct, spec_accept_token_num (spec_num_correct_drafts,
//     spec_accepted_drafts in later builds), spec_draft_token_num
//     (spec_num_proposed_drafts, spec_proposed_drafts),
//     spec_accept_histogram (spec_correct_drafts_histogram); without an
//     accepted count, completion_tokens − spec_verify_ct, as SGLang's own
//     accept length (completion tokens per verify step) counts.
//   - llama.cpp (a draft model): the response root's timings: draft_n,
//     draft_n_accepted, predicted_n; each step emits its accepted drafts and
//     one token, so the steps are predicted_n − draft_n_accepted. It sends
//     no histogram.
//
// A payload whose counts contradict each other (a histogram that does not
// add up to the steps or the accepted tokens, more accepted than proposed,
// a count that is not a whole number) is marked Rejected: none of it is
// believed.

// specFields is what one payload said; -1 marks a count it did not send.
type specFields struct {
	steps, accepted, drafted, specTokens int64
	// SGLang's completion_tokens and llama.cpp's predicted_n.
	completion, predicted int64
	// draftN and draftNAccepted are llama.cpp's names (its signature).
	draftN, draftNAccepted int64
	// TensorRT-LLM's total_* names (its signature) land in accepted and
	// drafted; trt records that they came.
	trt, vllm, sglang bool
	hist              histFields
	bad               bool
}

// histFields is a histogram as read: its first buckets, its length, and
// the sums that check it.
type histFields struct {
	present       bool
	n             int64 // buckets: the list's length, or the largest key + 1
	list          bool
	sum, weighted int64
	buckets       [metrics.SpecBuckets]uint16
	// fits: every kept bucket's count fits the record's 16 bits.
	fits bool
}

// ParseSpecDecode reads a spec-decode payload (a raw JSON object) into
// sd, replacing what it held: the last payload of a response wins. A
// payload of no known engine leaves sd as it was (a llama.cpp timings
// object without a draft model, say); it reports whether it recognised
// one. The chunk parser reads the payloads it meets the same way, in its
// own pass (Delta.Spec).
func ParseSpecDecode(raw []byte, sd *metrics.SpecDecode) bool {
	s := scanner{b: raw}
	if s.peek() != '{' {
		return false
	}
	f := newSpecFields()
	err := s.object(func(key []byte) error {
		if ok, err := f.field(&s, key); ok {
			return err
		}
		return s.skip()
	})
	if err != nil {
		// Not JSON the chunk parser would have let through; nothing to read.
		return false
	}
	return f.decode(sd)
}

// readSpec reads the spec-decode payload at the cursor (vLLM's
// speculative_decoding, TensorRT-LLM's) into d.Spec; anything but an
// object is skipped.
func readSpec(s *scanner, d *Delta) error {
	if s.peek() != '{' {
		return s.skip()
	}
	f := newSpecFields()
	err := s.object(func(key []byte) error {
		if ok, err := f.field(s, key); ok {
			return err
		}
		return s.skip()
	})
	if err == nil {
		f.decode(&d.Spec)
	}
	return err
}

// newSpecFields returns fields that hold no count yet.
func newSpecFields() specFields {
	return specFields{steps: -1, accepted: -1, drafted: -1, specTokens: -1, completion: -1, predicted: -1, draftN: -1, draftNAccepted: -1}
}

// field reads the value of key when it is a spec-decode count of some
// engine's; it reports whether it was (else the value is left unread).
func (f *specFields) field(s *scanner, key []byte) (bool, error) {
	var err error
	switch string(key) {
	case "num_spec_steps":
		err = f.count(s, &f.steps)
	case "num_accepted_draft_tokens":
		f.vllm = true
		err = f.count(s, &f.accepted)
	case "num_draft_tokens":
		err = f.count(s, &f.drafted)
	case "total_accepted_draft_tokens":
		f.trt = true
		err = f.count(s, &f.accepted)
	case "total_draft_tokens":
		err = f.count(s, &f.drafted)
	case "num_spec_tokens":
		err = f.count(s, &f.specTokens)
	case "acceptance_histogram", "spec_accept_histogram", "spec_correct_drafts_histogram":
		err = f.hist.read(s, &f.bad)
	case "spec_verify_ct":
		f.sglang = true
		err = f.count(s, &f.steps)
	case "spec_accept_token_num", "spec_num_correct_drafts", "spec_accepted_drafts":
		err = f.count(s, &f.accepted)
	case "spec_draft_token_num", "spec_num_proposed_drafts", "spec_proposed_drafts":
		err = f.count(s, &f.drafted)
	case "completion_tokens":
		err = f.count(s, &f.completion)
	case "draft_n":
		err = f.count(s, &f.draftN)
	case "draft_n_accepted":
		err = f.count(s, &f.draftNAccepted)
	case "predicted_n":
		err = f.count(s, &f.predicted)
	default:
		return false, nil
	}
	return true, err
}

// decode turns what the payload said into sd, replacing what it held,
// when the payload is of a known engine; it reports whether it was.
func (f *specFields) decode(sd *metrics.SpecDecode) bool {
	var out metrics.SpecDecode
	switch {
	case f.vllm && f.steps >= 0:
		out.Engine = metrics.SpecVLLM
	case f.trt && f.drafted >= 0:
		out.Engine = metrics.SpecTRTLLM
	case f.draftN >= 0 && f.draftNAccepted >= 0:
		out.Engine = metrics.SpecLlamaCpp
		f.accepted, f.drafted = f.draftNAccepted, f.draftN
		if f.predicted >= 0 {
			f.steps = f.predicted - f.draftNAccepted
		}
	case f.sglang:
		out.Engine = metrics.SpecSGLang
		if f.accepted < 0 && f.completion >= 0 && f.steps >= 0 {
			f.accepted = f.completion - f.steps
		}
	default:
		return false
	}
	out.Drafted = -1
	if f.bad || !f.believable(out.Engine) {
		out.Rejected = true
		*sd = out
		return true
	}
	out.Steps, out.Accepted = int32(f.steps), int32(f.accepted)
	if f.drafted >= 0 {
		out.Drafted = int32(f.drafted)
	}
	if f.hist.present && f.hist.n <= metrics.SpecBuckets && f.hist.fits {
		out.Buckets = uint8(f.hist.n)
		out.Hist = f.hist.buckets
	}
	*sd = out
	return true
}

// believable checks the counts against each other.
func (f *specFields) believable(e metrics.SpecEngine) bool {
	switch {
	case f.steps < 0 || f.accepted < 0 || f.steps > math.MaxInt32 || f.accepted > math.MaxInt32:
		return false
	case f.drafted >= 0 && f.accepted > f.drafted:
		return false
	case f.steps == 0 && f.accepted > 0:
		return false
	case f.steps == 0 && (e == metrics.SpecTRTLLM || e == metrics.SpecLlamaCpp):
		// TensorRT-LLM leaves the block out of a request that never
		// drafted; llama.cpp's steps are derived: zero is a bad payload.
		return false
	}
	h := &f.hist
	if !h.present {
		return true
	}
	if h.sum != f.steps || h.weighted != f.accepted {
		return false
	}
	if f.specTokens >= 0 {
		if h.list && h.n != f.specTokens+1 || !h.list && h.n > f.specTokens+1 {
			// A bucket past the draft length cannot happen.
			return false
		}
	}
	return true
}

// count reads a whole, non-negative number that fits 31 bits into dst; a
// null leaves dst unset; anything else marks the payload bad.
func (f *specFields) count(s *scanner, dst *int64) error {
	n, ok, err := wholeCount(s)
	if err != nil {
		return err
	}
	if !ok {
		f.bad = true
		return nil
	}
	if n >= 0 {
		*dst = n
	}
	return nil
}

// wholeCount reads the value at the cursor: a whole non-negative number
// below 2³¹ (ok), null (n −1, ok), or anything else (not ok, consumed).
func wholeCount(s *scanner) (n int64, ok bool, err error) {
	switch c := s.peek(); {
	case c == 'n':
		return -1, true, s.literal("null")
	case c < '0' || c > '9':
		return 0, false, s.skip()
	}
	start := s.i
	if !s.scanNumber() {
		return 0, false, errSyntax
	}
	digits := s.b[start:s.i]
	if len(digits) > 10 {
		return 0, false, nil
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false, nil // a fraction or an exponent
		}
		n = n*10 + int64(c-'0')
	}
	return n, n <= math.MaxInt32, nil
}

// maxBucket bounds an object histogram's keys: a step cannot accept more
// draft tokens than any engine proposes.
const maxBucket = 1 << 16

// read reads a histogram: a list of counts, or an object of bucket → count
// with decimal string keys. A malformed one marks the payload bad.
func (h *histFields) read(s *scanner, bad *bool) error {
	*h = histFields{present: true, fits: true}
	add := func(j int64, s *scanner) error {
		c, ok, err := wholeCount(s)
		if err != nil {
			return err
		}
		if !ok || c < 0 || j >= maxBucket {
			*bad = true
			return nil
		}
		h.sum += c
		h.weighted += j * c
		if j < metrics.SpecBuckets {
			h.buckets[j] = uint16(c)
			h.fits = h.fits && c <= math.MaxUint16
		}
		h.n = max(h.n, j+1)
		return nil
	}
	switch s.peek() {
	case '[':
		h.list = true
		return s.array(func(i int) error { return add(int64(i), s) })
	case '{':
		return s.object(func(key []byte) error {
			j, ok := bucketKey(key)
			if !ok {
				*bad = true
				return s.skip()
			}
			return add(j, s)
		})
	case 'n':
		h.present = false
		return s.literal("null")
	}
	*bad = true
	return s.skip()
}

// bucketKey reads an object histogram's key ("3").
func bucketKey(key []byte) (int64, bool) {
	if len(key) == 0 || len(key) > 6 {
		return 0, false
	}
	var j int64
	for _, c := range key {
		if c < '0' || c > '9' {
			return 0, false
		}
		j = j*10 + int64(c-'0')
	}
	return j, true
}

// vllmMetrics reads the response root's metrics object for vLLM's
// speculative_decoding member.
func vllmMetrics(s *scanner, d *Delta) error {
	if s.peek() != '{' {
		return s.skip()
	}
	return s.object(func(key []byte) error {
		if string(key) == "speculative_decoding" {
			return readSpec(s, d)
		}
		return s.skip()
	})
}
