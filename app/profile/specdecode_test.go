package profile

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
)

// TestSpecDecodeAgainstDraftModel runs against a mock whose draft model
// proposes 4 tokens a step and accepts each with probability 0.6 (up to
// the first rejected: 1.31 of 4 a step, 32.6%): the answers' acceptance
// reaches the exports and the console, and the server's /metrics
// counters give the same over the run.
func TestSpecDecodeAgainstDraftModel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: time.Millisecond, SpecTokens: 4, SpecAcceptance: 0.6, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close(context.Background())
	dir := t.TempDir()
	c := apptest.RunConfig(mock.URL(), dir)
	c.RequestCount, c.OSL, c.NoServerMetrics = 40, 64, false
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	js := apptest.ReadExport(t, dir)
	avg := func(tag string) float64 {
		m, ok := js[tag].(map[string]any)
		if !ok {
			t.Fatalf("no %s in the JSON:\n%s", tag, out.String())
		}
		return m["avg"].(float64)
	}
	st := mock.Server().Stats()
	want := 100 * float64(st.SpecAcceptedTokens) / float64(st.SpecDraftTokens)
	if got := avg("spec_decode_overall_draft_acceptance_rate"); math.Abs(got-want) > 1e-6 || got < 29 || got > 36 {
		t.Errorf("overall draft acceptance %.2f%%, the mock's own %.2f%% (about 32.6%%)", got, want)
	}
	if got, want := avg("total_spec_decode_steps"), float64(st.SpecSteps); got != want {
		t.Errorf("%v steps, the mock ran %v", got, want)
	}
	if got := avg("spec_decode_acceptance_length"); got < 2.1 || got > 2.5 {
		t.Errorf("acceptance length %.2f, want about 2.3", got)
	}
	if h, ok := js["pooled_spec_decode_acceptance_histogram"].(map[string]any); !ok || len(h) != 5 {
		t.Errorf("pooled histogram %v", js["pooled_spec_decode_acceptance_histogram"])
	}
	servers := js["telemetry_data"].(map[string]any)["server_metrics"].(map[string]any)
	for _, sv := range servers {
		rate, ok := sv.(map[string]any)["spec_decode_acceptance_rate_overall"].(float64)
		// Over the scrapes' span: the run's, give or take a request at
		// either end.
		if !ok || math.Abs(100*rate-want) > 3 {
			t.Errorf("/metrics acceptance %v, the answers' %.4f%%", sv.(map[string]any)["spec_decode_acceptance_rate_overall"], want)
		}
	}
	if !strings.Contains(out.String(), "Accepted drafts per step (% of steps):") || !strings.Contains(out.String(), "Speculative decoding: acceptance length") {
		t.Errorf("console:\n%s", out.String())
	}
}
