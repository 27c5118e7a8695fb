package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics"
)

// TestCSVModelSections: a run shared among models ends its CSV with one
// section per model, "Model,<name>" over that model's two tables, as the
// summary's own (without the blank row between them).
func TestCSVModelSections(t *testing.T) {
	one := func(ttft, rps float64) *metrics.Summary {
		return &metrics.Summary{
			Metrics: map[metrics.Tag]metrics.Distribution{metrics.TTFT: {Unit: "ms", Avg: ttft, P50: ttft, P99: ttft}},
			Run:     map[metrics.Tag]float64{metrics.RequestThroughput: rps},
		}
	}
	s := one(20, 3)
	s.Models = []metrics.ModelSummary{{Model: "base", Summary: one(18, 2)}, {Model: "lora-a", Summary: one(25, 1)}}
	var b bytes.Buffer
	if err := CSV(&b, s); err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(b.String(), "\r\n", "\n") // the CSV's lines end with CRLF
	for _, m := range []struct{ name, ttft, rps string }{{"base", "18.00", "2.00"}, {"lora-a", "25.00", "1.00"}} {
		_, sec, ok := strings.Cut(out, "\nModel,"+m.name+"\n")
		if !ok {
			t.Fatalf("no section for %s:\n%s", m.name, out)
		}
		lines := strings.Split(sec, "\n")
		if len(lines) < 4 || !strings.HasPrefix(lines[0], "Metric,") || !strings.HasPrefix(lines[1], "Time to First Token (ms),"+m.ttft) ||
			lines[2] != "Metric,Value" || !strings.HasPrefix(lines[3], "Request Throughput (requests/sec),"+m.rps) {
			t.Errorf("%s's section:\n%s", m.name, strings.Join(lines[:min(len(lines), 5)], "\n"))
		}
	}
}
