// Package calibrate finds how much streaming load this machine's client
// can time honestly: the highest stream count × token rate at which its
// read delay (read time − kernel receive time, per event) keeps a p99
// under a millisecond and at most 1% of first tokens are read together
// with the next (whose stamp they then take: the read delay cannot see
// those), measured against the embedded mock. The result is
// kept in a small file so that later runs can report it in run_info: a
// reader of an export then knows whether the run asked more of the client
// than it can give.
package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/surgebench/surge/internal/bounded"
)

// LimitMs is the read delay p99 a trustworthy load stays under.
const LimitMs = 1.0

// SharedLimitPct is the share of first tokens read together with the next
// that a trustworthy load stays at or under: past it they move TTFT's p99
// (the summary's warning uses the same 1%).
const SharedLimitPct = 1.0

// Measure is what one probe saw.
type Measure struct {
	ReadDelayP99ms float64
	// SharedFirstPct is the percentage of streams whose first token came
	// in one read with the next.
	SharedFirstPct float64
}

// Step is one probe: streams concurrent streams, each receiving a token
// every ITL, and the read delay it showed.
type Step struct {
	Streams        int     `json:"streams"`
	ITLms          float64 `json:"itl_ms"`
	TokensPerSec   float64 `json:"tokens_per_sec"` // all streams together
	ReadDelayP99ms float64 `json:"read_delay_p99_ms"`
	SharedFirstPct float64 `json:"first_token_shared_pct"`
	OK             bool    `json:"ok"`
}

// Result is the best passing step and everything probed.
type Result struct {
	// Streams and ITLms are the passing load with the highest token rate;
	// TokensPerSec is that rate (streams / ITL).
	Streams        int       `json:"streams"`
	ITLms          float64   `json:"itl_ms"`
	TokensPerSec   float64   `json:"tokens_per_sec"`
	ReadDelayP99ms float64   `json:"read_delay_p99_ms"`
	SharedFirstPct float64   `json:"first_token_shared_pct"`
	LimitMs        float64   `json:"limit_ms"`
	MeasuredAt     time.Time `json:"measured_at"`
	Host           string    `json:"host"`
	// Cores is what the client measured with: a run on more cores can
	// carry more than this calibration says, one on fewer less.
	Cores
	Steps []Step `json:"steps"`
}

// Cores is the parallelism a client process has.
type Cores struct {
	// CPUs is the number of CPUs the process may run on (its affinity
	// mask when it started: taskset, a container's cpuset).
	CPUs int `json:"cpus"`
	// GOMAXPROCS is how many of them run Go code at once (the affinity
	// count, a cgroup CPU limit or $GOMAXPROCS, whichever is lowest); 0 in
	// a calibration kept before it was recorded.
	GOMAXPROCS int `json:"gomaxprocs,omitempty"`
}

// CurrentCores is this process's Cores.
func CurrentCores() Cores { return Cores{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)} }

// String reads "GOMAXPROCS 4 on 4 CPUs".
func (c Cores) String() string {
	if c.GOMAXPROCS == 0 {
		return fmt.Sprintf("%d CPUs", c.CPUs)
	}
	return fmt.Sprintf("GOMAXPROCS %d on %d CPUs", c.GOMAXPROCS, c.CPUs)
}

// CoresWarning says why r does not judge a run whose client has cores
// run: empty when r measured with the same GOMAXPROCS and CPU count (a
// GOMAXPROCS r did not record is not compared).
func (r *Result) CoresWarning(run Cores) string {
	cmp := run.CPUs - r.CPUs
	if r.GOMAXPROCS != 0 {
		if r.GOMAXPROCS != run.GOMAXPROCS {
			cmp = run.GOMAXPROCS - r.GOMAXPROCS
		} else if cmp != 0 {
			cmp = 0 // as many running Go code at once, on other CPUs
		} else {
			return ""
		}
	} else if cmp == 0 {
		return ""
	}
	can := "the load it can time honestly may differ"
	switch {
	case cmp > 0:
		can = "it may time more than that honestly"
	case cmp < 0:
		can = "it may time less than that honestly"
	}
	return fmt.Sprintf("the client calibration (%.0f tokens/s timed honestly) was measured with %v; this run's client has %v: %s (run surge calibrate with the cores the run has)",
		r.TokensPerSec, r.Cores, run, can)
}

// Probe runs streams concurrent streams at one token per itl and returns
// what it measured.
type Probe func(ctx context.Context, streams int, itl time.Duration) (Measure, error)

// Options bound the search.
type Options struct {
	// ITLs are the per-stream token gaps tried (default 10, 5, 2 ms).
	ITLs []time.Duration
	// MinStreams and MaxStreams bound the doubling (default 8 and 1024).
	MinStreams, MaxStreams int
	// Rounds is how many times each step is probed (default 3); the step
	// keeps the median of each figure, so that one stall of the machine
	// (a GC, a descheduled vCPU) in one round does not decide it: every
	// stream of a step gets its first token at the same moment, so one
	// stall then can make all of a round's first tokens late.
	Rounds int
	// Log, when set, sees each step as it is measured.
	Log func(Step)
}

// Search doubles the stream count at each ITL until the read delay p99
// reaches LimitMs or the first tokens read with the next pass
// SharedLimitPct (each the median of the step's rounds), and keeps the
// passing step with the most tokens per second. A load no step passes
// leaves Streams 0.
func Search(ctx context.Context, probe Probe, o Options) (*Result, error) {
	if len(o.ITLs) == 0 {
		o.ITLs = []time.Duration{10 * time.Millisecond, 5 * time.Millisecond, 2 * time.Millisecond}
	}
	if o.MinStreams <= 0 {
		o.MinStreams = 8
	}
	if o.MaxStreams < o.MinStreams {
		o.MaxStreams = max(1024, o.MinStreams)
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	host, _ := os.Hostname()
	r := &Result{LimitMs: LimitMs, MeasuredAt: time.Now().UTC(), Host: host, Cores: CurrentCores()}
	for _, itl := range o.ITLs {
		for n := o.MinStreams; n <= o.MaxStreams; n *= 2 {
			m, err := median(ctx, probe, n, itl, o.Rounds)
			if err != nil {
				return nil, fmt.Errorf("calibrating %d streams at ITL %v: %w", n, itl, err)
			}
			s := Step{Streams: n, ITLms: float64(itl) / 1e6, TokensPerSec: float64(n) / itl.Seconds(),
				ReadDelayP99ms: m.ReadDelayP99ms, SharedFirstPct: m.SharedFirstPct,
				OK: m.ReadDelayP99ms < LimitMs && m.SharedFirstPct <= SharedLimitPct}
			r.Steps = append(r.Steps, s)
			if o.Log != nil {
				o.Log(s)
			}
			if !s.OK {
				break
			}
			if s.TokensPerSec > r.TokensPerSec {
				r.Streams, r.ITLms, r.TokensPerSec = s.Streams, s.ITLms, s.TokensPerSec
				r.ReadDelayP99ms, r.SharedFirstPct = s.ReadDelayP99ms, s.SharedFirstPct
			}
		}
	}
	return r, nil
}

// median probes a step rounds times and returns the median of each figure.
func median(ctx context.Context, probe Probe, streams int, itl time.Duration, rounds int) (Measure, error) {
	delays, shared := make([]float64, rounds), make([]float64, rounds)
	for i := range rounds {
		m, err := probe(ctx, streams, itl)
		if err != nil {
			return Measure{}, err
		}
		delays[i], shared[i] = m.ReadDelayP99ms, m.SharedFirstPct
	}
	mid := func(v []float64) float64 {
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return Measure{ReadDelayP99ms: mid(delays), SharedFirstPct: mid(shared)}, nil
}

// EnvFile names the environment variable that overrides File's location.
const EnvFile = "SURGE_CALIBRATION_FILE"

// File is where the result is kept: $SURGE_CALIBRATION_FILE, else
// surge/calibration.json under the user's cache directory.
func File() (string, error) {
	if f := os.Getenv(EnvFile); f != "" {
		return f, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "surge", "calibration.json"), nil
}

// Save writes r to File.
func Save(r *Result) (string, error) {
	f, err := File()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	return f, os.WriteFile(f, append(b, '\n'), 0o644)
}

// Load reads the kept result: nil without error when there is none.
func Load() (*Result, error) {
	f, err := File()
	if err != nil {
		return nil, err
	}
	b, err := bounded.ReadFile(context.Background(), f, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w (run surge calibrate again)", f, err)
	}
	return &r, nil
}
