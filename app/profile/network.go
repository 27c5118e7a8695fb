package profile

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/telemetry/netrtt"
)

// networkProbe is --network-latency-automatic's prober and its file.
type networkProbe struct {
	p    *netrtt.Prober
	file *os.File
}

// startNetworkProbe starts probing the servers' round trip for
// --network-latency-automatic, its probes during the profile (measuring)
// written to the export folder; nil without the flag.
func startNetworkProbe(ctx context.Context, s *spec.Spec, servers []string, dir string, measuring func() bool) (*networkProbe, error) {
	n := s.Telemetry.Network
	if !n.Auto {
		return nil, nil
	}
	var bases []string
	for _, srv := range servers {
		u, err := loadgen.BaseURL(srv)
		if err != nil {
			return nil, err
		}
		bases = append(bases, u.String())
	}
	f, err := os.Create(filepath.Join(dir, s.Exports.Files.NetworkLatency))
	if err != nil {
		return nil, fmt.Errorf("--network-latency-automatic: %w", err)
	}
	p, err := netrtt.Start(ctx, bases, n.Interval, measuring, f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--network-latency-automatic: %w", err)
	}
	return &networkProbe{p: p, file: f}, nil
}

// adjustForNetwork adds the network-adjusted latencies to the run's
// summary: less the probes' mean round trip, or the one given. It returns
// what run_info records of the probes (nil without them) and the errors
// of their file.
func adjustForNetwork(s *spec.Spec, np *networkProbe, sum *metrics.Summary, log io.Writer) (map[string]any, error) {
	n := s.Telemetry.Network
	if !n.Adjusts() || sum == nil {
		return nil, nil
	}
	rttMs, info := n.MeanMs, map[string]any{"source": "given", "mean_ms": n.MeanMs}
	var ferr error
	if np != nil {
		r, err := np.p.Stop()
		ferr = err
		if cerr := np.file.Close(); ferr == nil {
			ferr = cerr
		}
		info = map[string]any{"source": "tcp_connect", "count": r.Count, "success_count": r.Success, "failure_count": r.Failure}
		if r.Success == 0 {
			w := "network latency: no handshake probe succeeded, so there are no network_adjusted_* metrics"
			sum.Warnings = append(sum.Warnings, w)
			fmt.Fprintf(log, "warning: %s\n", w)
			return info, ferr
		}
		rttMs = r.Mean / 1e6
		for k, v := range map[string]float64{"mean_ms": r.Mean, "min_ms": r.Min, "median_ms": r.Median, "p90_ms": r.P90, "p99_ms": r.P99, "std_ms": r.Std} {
			info[k] = v / 1e6
		}
	}
	if sum.AdjustForNetwork(rttMs) {
		w := fmt.Sprintf("network latency: the %.3g ms round trip subtracted exceeds some measured latencies (clamped at 0): it may be more than their network leg", rttMs)
		sum.Warnings = append(sum.Warnings, w)
	}
	fmt.Fprintf(log, "network round trip %.3f ms subtracted into network_adjusted_* (%s)\n", rttMs, info["source"])
	return info, ferr
}
