package loadgen

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/surgebench/surge/metrics"
)

// TestSpecDecodeStreams reads each engine's per-request spec-decode
// payload (testdata/streams, see its README) through the generator's
// stream reader: the acceptance reaches the record whichever chunk
// carried it (vLLM's usage chunk, TensorRT-LLM's and SGLang's finishing
// choice), beside the text and the usage.
func TestSpecDecodeStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file           string
		engine         metrics.SpecEngine
		accepted       int32
		acceptanceRate float64 // %
	}{
		{"vllm-specdecode.sse", metrics.SpecVLLM, 5, 100 * 5.0 / 9},
		{"trtllm-specdecode.sse", metrics.SpecTRTLLM, 4, 100 * 4.0 / 9},
		{"sglang-specdecode.sse", metrics.SpecSGLang, 4, 100 * 4.0 / 9},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("testdata", "streams", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			rec := readFixture(t, b)
			if rec.Err != nil {
				t.Fatalf("error %+v", rec.Err)
			}
			sd := rec.SpecDecode
			if sd.Engine != tc.engine || sd.Steps != 3 || sd.Accepted != tc.accepted || sd.Drafted != 9 || sd.Buckets != 4 || sd.Rejected {
				t.Errorf("spec decode %+v", sd)
			}
			v := metrics.Compute(rec, nil)
			if got, want := v.Get(metrics.SpecAcceptanceLength), 1+float64(tc.accepted)/3; math.Abs(got-want) > 1e-9 {
				t.Errorf("acceptance length %v, want %v", got, want)
			}
			if got := v.Get(metrics.SpecDraftAcceptanceRate); math.Abs(got-tc.acceptanceRate) > 1e-9 {
				t.Errorf("draft acceptance rate %v, want %v", got, tc.acceptanceRate)
			}
			if v.OSL != 7 || rec.Text != "Hello there, how are you?" {
				t.Errorf("OSL %v, text %q", v.OSL, rec.Text)
			}
		})
	}
}
