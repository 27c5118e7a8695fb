package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/surgebench/surge/internal/testbin"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// surgeBinary is the surge binary, built once for these sources, for the
// tests that run it as a user does.
func surgeBinary(t *testing.T) string {
	t.Helper()
	return testbin.Surge(t)
}

// TestEveryEndpointTypeEndsWithDefaults: against the embedded mock, every
// endpoint type finishes 6 requests with no flags beyond what the type
// cannot do without (raw's bodies, template's template and path), and
// exits 0 — no type streams the mock's longest answers (messages sends the
// mock's default length, not 4096).
func TestEveryEndpointTypeEndsWithDefaults(t *testing.T) {
	t.Parallel()
	bin := surgeBinary(t)
	bodies := filepath.Join(t.TempDir(), "bodies.jsonl")
	if err := os.WriteFile(bodies, []byte(`{"text": "{\"model\": \"mock\", \"prompt\": \"hello\", \"max_tokens\": 8}"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	needs := map[endpoint.Kind][]string{
		endpoint.Raw:      {"--input-file", bodies, "--endpoint", "/v1/completions"},
		endpoint.Template: {"--endpoint", "/v1/chat/completions", "--endpoint-template", `{"model": {{json .Model}}, "messages": [{"role": "user", "content": {{json .Text}}}]}`},
	}
	// Generous: a type that streams 4096 tokens a request (20 s each at
	// the mock's 5 ms) takes two minutes; the defaults take seconds.
	const bound = 60 * time.Second
	for _, k := range endpoint.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := append([]string{"profile", "--endpoint-type", string(k), "--request-count", "6", "--ui", "none",
				"--output-artifact-dir", filepath.Join(dir, "run"), "--no-gpu-telemetry", "--no-server-metrics"}, needs[k]...)
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "SURGE_CALIBRATION_FILE="+filepath.Join(dir, "calibration.json"))
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("surge %q did not end within %s:\n%s", args, bound, out)
			}
			if err != nil {
				t.Fatalf("surge %q: %v\n%s", args, err, out)
			}
			b, err := os.ReadFile(filepath.Join(dir, "run", "profile_export_aiperf.json"))
			if err != nil {
				t.Fatalf("no export: %v\n%s", err, out)
			}
			var m struct {
				RequestCount struct {
					Avg float64 `json:"avg"`
				} `json:"request_count"`
			}
			if err := json.Unmarshal(b, &m); err != nil || m.RequestCount.Avg != 6 {
				t.Errorf("request_count %v (%v), want 6\n%s", m.RequestCount.Avg, err, out)
			}
		})
	}
}
