package spec

import (
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
)

// An adaptive scale refuses what it cannot steer or judge, naming the flag.
func TestAdaptiveScaleUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--adaptive-scale", "--adaptive-sustain-duration", "5", "--adaptive-scale-sla", "ttft:p95:le:1", "--concurrency", "4"}, "requires --benchmark-duration"},
		{[]string{"--adaptive-scale", "--benchmark-duration", "9", "--adaptive-scale-sla", "ttft:p95:le:1", "--concurrency", "4"}, "requires --adaptive-sustain-duration"},
		{[]string{"--adaptive-scale", "--benchmark-duration", "9", "--adaptive-sustain-duration", "5", "--concurrency", "4"}, "at least one SLA"},
		{[]string{"--adaptive-scale", "--benchmark-duration", "9", "--adaptive-sustain-duration", "5", "--adaptive-scale-sla", "ttft:p95:le:1", "--concurrency", "4", "--adaptive-control-variable", "users"}, "surge steers"},
		{[]string{"--adaptive-scale", "--benchmark-duration", "9", "--adaptive-sustain-duration", "5", "--adaptive-scale-sla", "ttft:p95:le:1"}, "could not be inferred"},
		{[]string{"--adaptive-scale", "--benchmark-duration", "9", "--adaptive-sustain-duration", "5", "--adaptive-scale-sla", "ttft:p95:le:1", "--adaptive-scale-control", "concurrency:1,8:int", "--adaptive-control-max", "9"}, "one or the other"},
		{[]string{"--adaptive-scale", "--benchmark-duration", "9", "--adaptive-sustain-duration", "5", "--adaptive-scale-sla", "ttft:p95:le:1", "--adaptive-scale-control", "request_rate:1,8:float"}, "--request-rate"},
		{[]string{"--adaptive-scale", "--benchmark-duration", "9", "--adaptive-sustain-duration", "5", "--adaptive-scale-sla", "ttft:p95:le:1", "--concurrency", "1,4"}, "one --concurrency"},
		{[]string{"--adaptive-sustain-duration", "5"}, "give --adaptive-scale too"},
	} {
		c, err := cmdline.ParseProfile(append(tc.args, "--streaming")...)
		if err == nil {
			_, err = Parse(c)
		}
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.says)
		}
	}
}
