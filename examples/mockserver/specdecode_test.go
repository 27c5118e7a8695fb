package mockserver

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
)

// specPayload is vLLM's per-request spec-decode metrics, as the mock
// sends them.
type specPayload struct {
	Length    float64 `json:"mean_acceptance_length"`
	Rate      float64 `json:"draft_acceptance_rate"`
	Histogram []int   `json:"acceptance_histogram"`
	Steps     int     `json:"num_spec_steps"`
	Accepted  int     `json:"num_accepted_draft_tokens"`
	Drafted   int     `json:"num_draft_tokens"`
	K         int     `json:"num_spec_tokens"`
}

// TestDraftModel: with a draft model of 4 tokens accepting each with
// probability 0.6, every answer reports steps that produce its tokens
// after the first, a histogram that adds up, and over many steps the
// acceptance a truncated geometric draw gives (0.6+0.36+0.216+0.1296 of
// 4 drafts a step, 32.6%, a little less where the last step is cut);
// /metrics counts the same totals in vLLM's counters.
func TestDraftModel(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{SpecTokens: 4, SpecAcceptance: 0.6, Seed: 7})
	var steps, accepted, drafted int
	for i := range 40 {
		var p specPayload
		if i%2 == 0 {
			_, evs := streamEvents(t, ts.URL+"/v1/chat/completions",
				`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":200,"stream":true,"stream_options":{"include_usage":true}}`)
			usage := evs[len(evs)-2].data // the usage chunk, before [DONE]
			var chunk struct {
				Metrics struct {
					Spec specPayload `json:"speculative_decoding"`
				} `json:"metrics"`
			}
			if err := json.Unmarshal([]byte(usage), &chunk); err != nil {
				t.Fatal(err)
			}
			p = chunk.Metrics.Spec
		} else {
			resp := post(t, context.Background(), ts.URL+"/v1/completions", `{"model":"m","prompt":"hi","max_tokens":200}`)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var body struct {
				Metrics struct {
					Spec specPayload `json:"speculative_decoding"`
				} `json:"metrics"`
			}
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatal(err)
			}
			p = body.Metrics.Spec
		}
		sum, weighted := 0, 0
		for j, n := range p.Histogram {
			sum += n
			weighted += j * n
		}
		if p.K != 4 || len(p.Histogram) != 5 || sum != p.Steps || weighted != p.Accepted || p.Accepted+p.Steps != 199 || p.Drafted != 4*p.Steps {
			t.Fatalf("answer %d: %+v", i, p)
		}
		if math.Abs(p.Length-(1+float64(p.Accepted)/float64(p.Steps))) > 1e-9 {
			t.Fatalf("answer %d: mean acceptance length %v", i, p.Length)
		}
		steps, accepted, drafted = steps+p.Steps, accepted+p.Accepted, drafted+p.Drafted
	}
	if rate := float64(accepted) / float64(drafted); rate < 0.29 || rate > 0.35 {
		t.Errorf("draft acceptance %.3f over %d steps, want about 0.326", rate, steps)
	}
	st := s.Stats()
	if st.SpecSteps != uint64(steps) || st.SpecAcceptedTokens != uint64(accepted) || st.SpecDraftTokens != uint64(drafted) {
		t.Errorf("stats %d/%d/%d, answers %d/%d/%d", st.SpecSteps, st.SpecAcceptedTokens, st.SpecDraftTokens, steps, accepted, drafted)
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_accepted_tokens_total"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestNoDraftModel: without one, no answer carries spec-decode metrics.
func TestNoDraftModel(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{})
	_, evs := streamEvents(t, ts.URL+"/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`)
	for _, e := range evs {
		if strings.Contains(e.data, "speculative_decoding") {
			t.Fatalf("event %s", e.data)
		}
	}
}
