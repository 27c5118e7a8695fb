package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
)

func TestNativeFlags(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) (*Spec, error) { return parseArgs(t, args...) }
	s, err := parse("--cells", "4", "--sketch-metrics", "--input-file", "t.json", "--custom-dataset-type", "weka", "--synthesis-idle-gap-cap", "30")
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Dataset.Replay; !r.TraceIdleGapCapSet || r.TraceIdleGapCap != 30*time.Second {
		t.Errorf("--synthesis-idle-gap-cap 30: replay %+v", r)
	}
	ic := s.InputConfig()
	if v, _ := cmdline.PathValue(ic, "runtime.cells"); v != 4 {
		t.Errorf("input_config runtime.cells %v", v)
	}
	if v, _ := cmdline.PathValue(ic, "input.synthesis.idle_gap_cap_seconds"); v != 30.0 {
		t.Errorf("input_config idle_gap_cap_seconds %v", v)
	}
	// --trace-idle-gap-cap-seconds wins, as in AIPerf; null leaves the
	// recorded timeline.
	s, err = parse("--input-file", "t.json", "--custom-dataset-type", "weka", "--synthesis-idle-gap-cap", "30", "--trace-idle-gap-cap-seconds", "5")
	if err != nil || s.Dataset.Replay.TraceIdleGapCap != 5*time.Second {
		t.Errorf("both caps: %v %+v", err, s.Dataset.Replay)
	}
	s, err = parse("--input-file", "t.json", "--custom-dataset-type", "weka", "--synthesis-idle-gap-cap", "null")
	if err != nil || s.Dataset.Replay.TraceIdleGapCapSet {
		t.Errorf("null: %v %+v", err, s.Dataset.Replay)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--synthesis-idle-gap-cap", "30"}, "a synthetic dataset has none"},
		{[]string{"--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace", "--synthesis-idle-gap-cap", "30"}, "mooncake_trace dataset"},
		{[]string{"--input-file", "t.json", "--synthesis-idle-gap-cap", "-1"}, "seconds > 0"},
		{[]string{"--cells", "-2"}, "--cells must be"},
	} {
		if _, err := parse(bad.args...); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%v: %v, want %q", bad.args, err, bad.says)
		}
	}
}
