package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelMetrics: a run of two models keeps each model's statistics in
// the history, under names surge trend takes (a model's dots and slashes
// included).
func TestModelMetrics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 30 {
		m, ttft := "meta-llama/Llama-3.1-8B", 50.0
		if i%3 == 0 {
			m, ttft = "lora-sql", 80.0
		}
		fmt.Fprintf(&b, `{"metadata":{"benchmark_phase":"profiling","request_start_ns":%d,"request_end_ns":%d},"metrics":{"time_to_first_token":{"value":%g,"unit":"ms"}},"error":null,"surge":{"stage":0,"model":%q}}`+"\n",
			int64(i)*1e8, int64(i)*1e8+5e8, ttft, m)
	}
	if err := os.WriteFile(filepath.Join(dir, "profile_export.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := FromArtifacts(dir)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%v rows %d", err, len(rows))
	}
	metric, stat, err := ParseMetric("model:meta-llama/Llama-3.1-8B:time_to_first_token.p99")
	if err != nil || metric != "model:meta-llama/Llama-3.1-8B:time_to_first_token" || stat != "p99" {
		t.Fatalf("ParseMetric: %q %q %v", metric, stat, err)
	}
	if v, ok := rows[0].Value(metric, stat); !ok || v != 50 {
		t.Errorf("%s.%s = %v %v", metric, stat, v, ok)
	}
	if v, ok := rows[0].Value("model:lora-sql:request_count", "avg"); !ok || v != 10 {
		t.Errorf("lora-sql's request count %v %v", v, ok)
	}
	if m, s, _ := ParseMetric("time_to_first_token.p99"); m != "time_to_first_token" || s != "p99" {
		t.Errorf("a run's metric: %q %q", m, s)
	}
}
