package profile

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/spec"
)

// TestNetworkLatencyEndToEnd: --network-latency-mean 5 exports
// network_adjusted_* 5 ms under their latencies with the same spread and
// network_rtt 5; --network-latency-automatic probes the server during the
// profile into profile_export_network_latency.jsonl and subtracts the
// probes' mean.
func TestNetworkLatencyEndToEnd(t *testing.T) {
	t.Parallel()
	srv := &stampServer{Wait: 30 * time.Millisecond}
	run := func(args ...string) (map[string]any, string) {
		dir := t.TempDir()
		s := newStampURL(t, srv)
		c := parseArgs(t, append([]string{"--url", s, "--model", "m", "--streaming", "--ui", "none", "--tokenizer", "builtin", "--request-count", "6",
			"--isl", "8", "--osl", "2", "--output-artifact-dir", dir, "--no-gpu-telemetry", "--no-server-metrics"}, args...)...)
		if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		return apptest.ReadExport(t, dir), dir
	}
	get := func(m map[string]any, tag, stat string) float64 {
		x, _ := m[tag].(map[string]any)[stat].(float64)
		return x
	}
	m, _ := run("--network-latency-mean", "5")
	for _, tag := range []string{"request_latency", "time_to_first_token"} {
		raw, adj := m[tag].(map[string]any), m["network_adjusted_"+tag].(map[string]any)
		if math.Abs(raw["avg"].(float64)-adj["avg"].(float64)-5) > 1e-3 || math.Abs(raw["p99"].(float64)-adj["p99"].(float64)-5) > 1e-3 || raw["std"] != adj["std"] {
			t.Errorf("%s: raw %v, adjusted %v", tag, raw, adj)
		}
	}
	if get(m, "network_rtt", "avg") != 5 {
		t.Errorf("network_rtt %v", m["network_rtt"])
	}
	if _, ok := m["network_adjusted_inter_token_latency"]; ok {
		t.Errorf("ITL adjusted")
	}
	m, dir := run("--network-latency-automatic", "--network-latency-ping-interval", "0.05")
	rtt := get(m, "network_rtt", "avg")
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_network_latency.jsonl"))
	if err != nil || rtt <= 0 || rtt > 50 || !strings.Contains(string(b), `"probe_type":"tcp_connect"`) {
		t.Errorf("automatic: network_rtt %v ms, probes %q (%v)", rtt, b, err)
	}
	if a, r := get(m, "network_adjusted_request_latency", "avg"), get(m, "request_latency", "avg"); math.Abs(r-a-rtt) > 1e-3 {
		t.Errorf("automatic: adjusted %v, raw %v, rtt %v", a, r, rtt)
	}
}

// TestNetworkFlagsRefused: the two sources are exclusive, the interval
// paces the probes only, and a mean is milliseconds ≥ 0.
func TestNetworkFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--network-latency-automatic", "--network-latency-mean", "3"}, "give one"},
		{[]string{"--network-latency-ping-interval", "2"}, "paces --network-latency-automatic's probes"},
		{[]string{"--network-latency-mean", "-1"}, "want milliseconds ≥ 0"},
		{[]string{"--network-latency-automatic", "--network-latency-ping-interval", "-1"}, "must be > 0"},
	} {
		err := refusal(tc.args, func(c cmdline.Config) error {
			_, err := spec.Parse(c)
			return err
		})
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}
