package calibrate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeProbe's read delay grows with the token rate: 1 ms at 3,200 tokens/s.
func fakeProbe(_ context.Context, streams int, itl time.Duration) (Measure, error) {
	return Measure{ReadDelayP99ms: float64(streams) / itl.Seconds() / 3200}, nil
}

func TestSearchKeepsTheFastestPassingLoad(t *testing.T) {
	var logged int
	r, err := Search(context.Background(), fakeProbe, Options{
		ITLs: []time.Duration{10 * time.Millisecond, 2 * time.Millisecond}, MinStreams: 4, MaxStreams: 64,
		Log: func(Step) { logged++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	// ITL 10 ms: 4, 8, 16 pass (400..1,600 tok/s), 32 (3,200) fails.
	// ITL 2 ms: 4 passes (2,000 tok/s), 8 (4,000) fails.
	if r.Streams != 4 || r.ITLms != 2 || r.TokensPerSec != 2000 {
		t.Errorf("best %d streams at %v ms (%v tok/s), want 4 at 2 ms (2000)", r.Streams, r.ITLms, r.TokensPerSec)
	}
	if len(r.Steps) != 6 || logged != 6 {
		t.Errorf("%d steps, %d logged; want 6", len(r.Steps), logged)
	}
}

// A load whose read delay passes still fails when more than 1% of first
// tokens were read with the next: the read delay cannot see those.
func TestSearchFailsSharedFirstTokens(t *testing.T) {
	probe := func(_ context.Context, streams int, itl time.Duration) (Measure, error) {
		m, _ := fakeProbe(context.Background(), streams, itl)
		if streams >= 8 {
			m.SharedFirstPct = 1.5
		}
		return m, nil
	}
	r, err := Search(context.Background(), probe, Options{
		ITLs: []time.Duration{10 * time.Millisecond}, MinStreams: 4, MaxStreams: 64})
	if err != nil {
		t.Fatal(err)
	}
	// 4 passes; 8 (800 tok/s, read delay 0.25 ms) fails on its shared reads.
	if r.Streams != 4 || len(r.Steps) != 2 || r.Steps[1].OK || r.Steps[1].SharedFirstPct != 1.5 {
		t.Errorf("best %d streams, steps %+v; want 4, then 8 failing at 1.5%%", r.Streams, r.Steps)
	}
}

// One bad round of three does not fail a step, two do: the step keeps the
// median of each figure.
func TestSearchTakesTheMedianOfRounds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bad      map[int]bool // rounds (0-based, per step) that stall
		wantBest int
	}{
		{"no stall", nil, 16},
		{"one stalled round per step", map[int]bool{1: true}, 16},
		{"two stalled rounds per step", map[int]bool{0: true, 2: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			probe := func(_ context.Context, streams int, itl time.Duration) (Measure, error) {
				round := calls % 3
				calls++
				m, _ := fakeProbe(context.Background(), streams, itl)
				if tc.bad[round] {
					m.ReadDelayP99ms, m.SharedFirstPct = 5, 100 // a stall makes every first token late
				}
				return m, nil
			}
			r, err := Search(context.Background(), probe, Options{ITLs: []time.Duration{10 * time.Millisecond}, MinStreams: 4, MaxStreams: 64})
			if err != nil {
				t.Fatal(err)
			}
			if r.Streams != tc.wantBest || calls != 3*len(r.Steps) {
				t.Errorf("best %d streams after %d probes for %d steps, want %d and 3 probes a step", r.Streams, calls, len(r.Steps), tc.wantBest)
			}
		})
	}
}

func TestSearchReportsProbeErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := Search(context.Background(), func(context.Context, int, time.Duration) (Measure, error) { return Measure{}, boom }, Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

func TestSaveLoad(t *testing.T) {
	t.Setenv(EnvFile, filepath.Join(t.TempDir(), "sub", "cal.json"))
	if r, err := Load(); r != nil || err != nil {
		t.Fatalf("Load before Save = %v, %v; want nil, nil", r, err)
	}
	want := &Result{Streams: 64, ITLms: 5, TokensPerSec: 12800, LimitMs: LimitMs, Cores: Cores{CPUs: 2, GOMAXPROCS: 2},
		MeasuredAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), Steps: []Step{{Streams: 64, ITLms: 5, OK: true}}}
	if _, err := Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

// The search keeps the cores it measured with: what a later run is compared
// against.
func TestSearchRecordsItsCores(t *testing.T) {
	r, err := Search(context.Background(), fakeProbe, Options{ITLs: []time.Duration{10 * time.Millisecond}, MinStreams: 4, MaxStreams: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := Cores{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if r.Cores != want || CurrentCores() != want {
		t.Errorf("result cores %+v, CurrentCores %+v; want %+v", r.Cores, CurrentCores(), want)
	}
}

// A calibration kept before GOMAXPROCS was recorded still loads, with the
// CPU count alone; a new one writes both at the top level of the file
// (run_info.client_calibration keeps the same shape).
func TestCoresInTheKeptFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "cal.json")
	t.Setenv(EnvFile, f)
	if err := os.WriteFile(f, []byte(`{"streams":8,"itl_ms":2,"tokens_per_sec":4000,"cpus":2,"steps":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if old.Cores != (Cores{CPUs: 2}) {
		t.Errorf("old file's cores %+v, want 2 CPUs and GOMAXPROCS unknown", old.Cores)
	}
	if _, err := Save(&Result{Cores: Cores{CPUs: 16, GOMAXPROCS: 8}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cpus": 16`, `"gomaxprocs": 8`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("kept file lacks %s:\n%s", want, b)
		}
	}
}

func TestCoresWarning(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cal, run Cores
		want     string // a substring; "" wants no warning
	}{
		{"same cores", Cores{2, 2}, Cores{2, 2}, ""},
		{"bigger client", Cores{1, 1}, Cores{16, 16}, "it may time more than that"},
		{"smaller client", Cores{16, 16}, Cores{2, 2}, "it may time less than that"},
		{"GOMAXPROCS capped lower", Cores{16, 16}, Cores{16, 4}, "it may time less than that"},
		{"same GOMAXPROCS on other CPUs", Cores{16, 4}, Cores{4, 4}, "may differ"},
		{"old calibration, same CPUs", Cores{CPUs: 2}, Cores{2, 2}, ""},
		{"old calibration, more CPUs", Cores{CPUs: 2}, Cores{8, 8}, "it may time more than that"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{TokensPerSec: 4000, Cores: tc.cal}
			got := r.CoresWarning(tc.run)
			if tc.want == "" {
				if got != "" {
					t.Errorf("warning %q, want none", got)
				}
				return
			}
			for _, w := range []string{tc.want, tc.cal.String(), tc.run.String(), "4000 tokens/s"} {
				if !strings.Contains(got, w) {
					t.Errorf("warning %q lacks %q", got, w)
				}
			}
		})
	}
}

func TestCoresString(t *testing.T) {
	for c, want := range map[Cores]string{{CPUs: 2}: "2 CPUs", {CPUs: 16, GOMAXPROCS: 8}: "GOMAXPROCS 8 on 16 CPUs"} {
		if got := c.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", c, got, want)
		}
	}
}
