package spec

import (
	"strings"
	"testing"
	"time"
)

// The breakdown's flags: an address, a bounded wait, koboldcpp's perf
// one request at a time, the embedded mock's account for the embedded
// mock only (and its spans only with a receiver); each refusal names its
// flag.
func TestParseBreakdown(t *testing.T) {
	t.Parallel()
	s, err := parseArgs(t, "--otlp-receiver", "127.0.0.1:0", "--otlp-wait", "3", "--mock-server-timings", "otlp")
	if err != nil {
		t.Fatal(err)
	}
	if b := s.Breakdown; b.OTLPReceiver != "127.0.0.1:0" || b.OTLPWait != 3*time.Second || b.MockTimings != "otlp" {
		t.Errorf("%+v", b)
	}
	if s, err := parseArgs(t); err != nil || s.Breakdown.MockTimings != "" || s.Breakdown.OTLPWait != 10*time.Second {
		t.Errorf("defaults: %+v %v", s.Breakdown, err)
	}
	// A receiver with no --url: the embedded mock sends it spans, unless
	// told otherwise; a server's spans are its own.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--otlp-receiver", "127.0.0.1:0"}, "otlp"},
		{[]string{"--otlp-receiver", "127.0.0.1:0", "--mock-server-timings", "mock"}, "mock"},
		{[]string{"--otlp-receiver", "127.0.0.1:0", "--url", "localhost:8000"}, ""},
	} {
		if s, err := parseArgs(t, tc.args...); err != nil || s.Breakdown.MockTimings != tc.want {
			t.Errorf("%v: mock timings %q (%v), want %q", tc.args, s.Breakdown.MockTimings, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--otlp-receiver", "4318"}, "--otlp-receiver"},
		{[]string{"--otlp-wait", "-1"}, "--otlp-wait"},
		{[]string{"--otlp-wait", "3600"}, "--otlp-wait"},
		{[]string{"--koboldcpp-perf", "--concurrency", "4"}, "--koboldcpp-perf needs --concurrency 1"},
		{[]string{"--mock-server-timings", "vllm"}, "--mock-server-timings"},
		{[]string{"--mock-server-timings", "mock", "--url", "localhost:8000"}, "--mock-server-timings is the embedded mock's"},
		{[]string{"--mock-server-timings", "otlp"}, "give --otlp-receiver too"},
	} {
		_, err := parseArgs(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
	if _, err := parseArgs(t, "--koboldcpp-perf", "--concurrency", "1", "--url", "localhost:5001"); err != nil {
		t.Errorf("koboldcpp at concurrency 1: %v", err)
	}
}
