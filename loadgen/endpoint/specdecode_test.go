package endpoint

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics"
)

// hist builds a SpecDecode histogram from its buckets.
func hist(counts ...uint16) (uint8, [metrics.SpecBuckets]uint16) {
	var h [metrics.SpecBuckets]uint16
	copy(h[:], counts)
	return uint8(len(counts)), h
}

func specWith(e metrics.SpecEngine, steps, acc, drafted int32, counts ...uint16) metrics.SpecDecode {
	s := metrics.SpecDecode{Engine: e, Steps: steps, Accepted: acc, Drafted: drafted}
	if len(counts) > 0 {
		s.Buckets, s.Hist = hist(counts...)
	}
	return s
}

// TestSpecDecodePayloads reads each engine's payload where it puts it,
// through the chunk parser, which reads it in its one pass (Delta.Spec).
// The shapes follow each engine's source (vLLM's per-request spec-decode
// metrics, TensorRT-LLM's per_request_spec_decode_stats, SGLang's
// meta_info, llama.cpp's timings) as AIPerf's adapters read them.
func TestSpecDecodePayloads(t *testing.T) {
	t.Parallel()
	rejected := func(e metrics.SpecEngine) metrics.SpecDecode {
		return metrics.SpecDecode{Engine: e, Drafted: -1, Rejected: true}
	}
	vllm := `"mean_acceptance_length":1.2325581395348837,"draft_acceptance_rate":0.07751937984496124,"acceptance_histogram":[39,1,0,3],"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":129,"num_spec_tokens":3`
	trt := `"acceptance_rate":0.5,"total_accepted_draft_tokens":30,"total_draft_tokens":60,"num_spec_steps":20,"acceptance_histogram":[8,0,6,6],"num_spec_tokens":3`
	cases := []struct {
		name, chunk string
		want        metrics.SpecDecode
		found       bool
	}{
		{"vllm usage chunk", `{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":53,"total_tokens":65},"metrics":{"speculative_decoding":{` + vllm + `}}}`,
			specWith(metrics.SpecVLLM, 43, 10, 129, 39, 1, 0, 3), true},
		{"vllm body", `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"metrics":{"speculative_decoding":{` + vllm + `}},"usage":{"prompt_tokens":1,"completion_tokens":53}}`,
			specWith(metrics.SpecVLLM, 43, 10, 129, 39, 1, 0, 3), true},
		{"vllm detailed", `{"choices":[],"metrics":{"speculative_decoding":{"mean_acceptance_length":2.0,"draft_acceptance_rate":0.3333,"acceptance_histogram":[2,1,0,1],"num_spec_steps":4,"num_accepted_draft_tokens":4,"num_draft_tokens":12,"num_spec_tokens":3,"per_step_accepted":[0,1,3,0],"per_step_drafted":[3,3,3,3]}}}`,
			specWith(metrics.SpecVLLM, 4, 4, 12, 2, 1, 0, 1), true},
		{"vllm early object histogram", `{"choices":[],"metrics":{"speculative_decoding":{"acceptance_histogram":{"0":39,"1":1,"3":3},"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":129,"num_spec_tokens":3}}}`,
			specWith(metrics.SpecVLLM, 43, 10, 129, 39, 1, 0, 3), true},
		{"vllm zero steps", `{"choices":[],"metrics":{"speculative_decoding":{"mean_acceptance_length":1.0,"draft_acceptance_rate":0.0,"acceptance_histogram":[0,0,0,0],"num_spec_steps":0,"num_accepted_draft_tokens":0,"num_draft_tokens":0,"num_spec_tokens":3}}}`,
			specWith(metrics.SpecVLLM, 0, 0, 0, 0, 0, 0, 0), true},
		{"vllm without spec decode", `{"choices":[],"metrics":{"speculative_decoding":null,"other":1}}`, metrics.SpecDecode{}, false},
		{"trtllm finish choice", `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop","avg_decoded_tokens_per_iter":2.5,"speculative_decoding":{` + trt + `}}]}`,
			specWith(metrics.SpecTRTLLM, 20, 30, 60, 8, 0, 6, 6), true},
		{"trtllm adaptive length", `{"choices":[{"index":0,"message":{"content":"x"},"finish_reason":"stop","speculative_decoding":{"acceptance_rate":0.5,"total_accepted_draft_tokens":30,"total_draft_tokens":60,"num_spec_steps":20,"acceptance_histogram":[8,0,6,6],"num_spec_tokens":null}}]}`,
			specWith(metrics.SpecTRTLLM, 20, 30, 60, 8, 0, 6, 6), true},
		{"sglang meta_info", `{"text":"x","choices":[{"index":0,"text":"x","finish_reason":"stop"}],"meta_info":{"id":"a","finish_reason":{"type":"length","length":96},"prompt_tokens":120,"completion_tokens":96,"cached_tokens":0,"spec_verify_ct":30,"spec_accept_token_num":60,"spec_draft_token_num":90,"spec_accept_length":3.2,"spec_accept_rate":0.733,"spec_accept_histogram":[3,6,9,12]}}`,
			specWith(metrics.SpecSGLang, 30, 60, 90, 3, 6, 9, 12), true},
		{"sglang later names", `{"choices":[{"index":0,"message":{"content":"x"},"finish_reason":"stop","meta_info":{"completion_tokens":10,"spec_verify_ct":4,"spec_num_correct_drafts":6,"spec_num_proposed_drafts":12,"spec_correct_drafts_histogram":[1,1,1,1]}}]}`,
			specWith(metrics.SpecSGLang, 4, 6, 12, 1, 1, 1, 1), true},
		{"sglang verify count only", `{"choices":[],"meta_info":{"completion_tokens":96,"spec_verify_ct":30}}`,
			specWith(metrics.SpecSGLang, 30, 66, -1), true},
		{"llama.cpp timings", `{"choices":[{"finish_reason":"length","index":0,"delta":{}}],"usage":{"completion_tokens":40,"prompt_tokens":12,"total_tokens":52},"timings":{"prompt_n":12,"predicted_n":40,"draft_n":48,"draft_n_accepted":24}}`,
			specWith(metrics.SpecLlamaCpp, 16, 24, 48), true},
		// A real llama.cpp b4747 last chunk: timings without a draft model.
		{"llama.cpp without draft", `{"choices":[{"finish_reason":"length","index":0,"delta":{}}],"usage":{"completion_tokens":5,"prompt_tokens":12,"total_tokens":17},"timings":{"prompt_n":5,"prompt_ms":13.931,"prompt_per_token_ms":2.7862,"prompt_per_second":358.9117794846027,"predicted_n":5,"predicted_ms":18.868,"predicted_per_token_ms":3.7735999999999996,"predicted_per_second":264.99894000424}}`,
			metrics.SpecDecode{}, false},
		// Payloads that contradict themselves are marked, not believed.
		{"histogram sum", `{"choices":[],"metrics":{"speculative_decoding":{"acceptance_histogram":[39,1,0,3],"num_spec_steps":99,"num_accepted_draft_tokens":10,"num_draft_tokens":129,"num_spec_tokens":3}}}`, rejected(metrics.SpecVLLM), true},
		{"weighted sum", `{"choices":[],"metrics":{"speculative_decoding":{"acceptance_histogram":[39,1,0,3],"num_spec_steps":43,"num_accepted_draft_tokens":11,"num_draft_tokens":129}}}`, rejected(metrics.SpecVLLM), true},
		{"accepted past drafted", `{"choices":[],"metrics":{"speculative_decoding":{"acceptance_histogram":[39,1,0,3],"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":5}}}`, rejected(metrics.SpecVLLM), true},
		{"bucket past draft length", `{"choices":[],"metrics":{"speculative_decoding":{"acceptance_histogram":[0,0,0,0,1],"num_spec_steps":1,"num_accepted_draft_tokens":4,"num_draft_tokens":4,"num_spec_tokens":3}}}`, rejected(metrics.SpecVLLM), true},
		{"fractional count", `{"choices":[],"metrics":{"speculative_decoding":{"acceptance_histogram":[39,1,0.0,3],"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":129}}}`, rejected(metrics.SpecVLLM), true},
		{"string count", `{"choices":[],"metrics":{"speculative_decoding":{"acceptance_histogram":[39,1,"0",3],"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":129}}}`, rejected(metrics.SpecVLLM), true},
		{"negative count", `{"choices":[],"metrics":{"speculative_decoding":{"acceptance_histogram":[-1,1,0,3],"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":129}}}`, rejected(metrics.SpecVLLM), true},
		{"trtllm zero steps", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop","speculative_decoding":{"acceptance_rate":0,"total_accepted_draft_tokens":0,"total_draft_tokens":0,"num_spec_steps":0,"acceptance_histogram":[0,0,0,0],"num_spec_tokens":3}}]}`, rejected(metrics.SpecTRTLLM), true},
		{"llama.cpp more accepted than drafted", `{"choices":[],"timings":{"predicted_n":40,"draft_n":10,"draft_n_accepted":24}}`, rejected(metrics.SpecLlamaCpp), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var text, reasoning []byte
			d, err := ParseChunk([]byte(tc.chunk), &text, &reasoning)
			if err != nil {
				t.Fatal(err)
			}
			got := d.Spec
			if found := got.Engine != metrics.SpecNone; found != tc.found {
				t.Errorf("recognised %v, want %v", found, tc.found)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestSpecDecodeLastWins: a later payload of the same response replaces
// an earlier one, and a payload of no engine leaves it.
func TestSpecDecodeLastWins(t *testing.T) {
	t.Parallel()
	var sd metrics.SpecDecode
	ParseSpecDecode([]byte(`{"num_spec_steps":1,"num_accepted_draft_tokens":1,"num_draft_tokens":3}`), &sd)
	ParseSpecDecode([]byte(`{"num_spec_steps":2,"num_accepted_draft_tokens":0,"num_draft_tokens":6}`), &sd)
	ParseSpecDecode([]byte(`{"predicted_n":5}`), &sd)
	if want := specWith(metrics.SpecVLLM, 2, 0, 6); sd != want {
		t.Errorf("got %+v, want %+v", sd, want)
	}
}

// TestSpecDecodeAllocates nothing: it runs once per response on the
// request path.
func TestSpecDecodeAllocatesNothing(t *testing.T) {
	chunk := []byte(`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":53},"metrics":{"speculative_decoding":{"mean_acceptance_length":1.23,"acceptance_histogram":[39,1,0,3],"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":129,"num_spec_tokens":3}}}`)
	text, reasoning := make([]byte, 0, 64), make([]byte, 0, 64)
	n := testing.AllocsPerRun(100, func() {
		d, err := ParseChunk(chunk, &text, &reasoning)
		if err != nil || d.Spec.Engine == metrics.SpecNone {
			t.Fatal("not read")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per response, want 0", n)
	}
}

// FuzzParseSpecDecode: any payload is read without panicking, and what is
// believed is consistent: accepted within proposed, a histogram that adds
// up to the steps and the accepted tokens.
func FuzzParseSpecDecode(f *testing.F) {
	for _, s := range []string{
		`{"acceptance_histogram":[39,1,0,3],"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":129,"num_spec_tokens":3}`,
		`{"acceptance_histogram":{"0":39,"1":1,"3":3},"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":129}`,
		`{"total_accepted_draft_tokens":30,"total_draft_tokens":60,"num_spec_steps":20,"acceptance_histogram":[8,0,6,6],"num_spec_tokens":null}`,
		`{"spec_verify_ct":30,"completion_tokens":96,"spec_accept_histogram":[3,6,9,12]}`,
		`{"predicted_n":40,"draft_n":48,"draft_n_accepted":24}`,
		`{"num_spec_steps":1e3,"num_accepted_draft_tokens":-1}`,
		`{"acceptance_histogram":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1],"num_spec_steps":1,"num_accepted_draft_tokens":18,"num_draft_tokens":20}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var sd metrics.SpecDecode
		if !ParseSpecDecode(raw, &sd) || sd.Rejected {
			return
		}
		if sd.Steps < 0 || sd.Accepted < 0 || sd.Drafted >= 0 && sd.Accepted > sd.Drafted {
			t.Fatalf("believed %+v", sd)
		}
		if sd.Buckets > 0 {
			var sum, weighted int64
			for j := range int(sd.Buckets) {
				sum += int64(sd.Hist[j])
				weighted += int64(j) * int64(sd.Hist[j])
			}
			if sum != int64(sd.Steps) || weighted != int64(sd.Accepted) {
				t.Fatalf("histogram of %+v does not add up", sd)
			}
		}
	})
}
