package search

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// fakeServer passes every probe at or under its capacity.
func fakeServer(capacity float64, calls *[]float64) Prober {
	return ProberFunc(func(_ context.Context, v float64) (Probe, error) {
		*calls = append(*calls, v)
		if v <= capacity {
			return Probe{Judgement: Judgement{Verdict: Pass, Stable: true, Limiting: "p95(time_to_first_token)"}}, nil
		}
		return Probe{Judgement: Judgement{Verdict: Fail, Stable: true, Limiting: "p95(time_to_first_token)"}}, nil
	})
}

func TestRunFindsCapacity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      Config
		capacity float64
		found    bool
		wantLo   float64 // exact capacity expected (integer searches)
	}{
		{name: "rate above start", cfg: Config{Start: 1}, capacity: 37.3, found: true},
		{name: "rate below start", cfg: Config{Start: 100}, capacity: 7.9, found: true},
		{name: "rate at start", cfg: Config{Start: 10}, capacity: 10, found: true},
		{name: "fine resolution", cfg: Config{Start: 4, Resolution: 0.01}, capacity: 123, found: true},
		{name: "concurrency", cfg: Config{Start: 1, Integer: true}, capacity: 13, found: true, wantLo: 13},
		{name: "concurrency from above", cfg: Config{Start: 64, Integer: true}, capacity: 5, found: true, wantLo: 5},
		{name: "concurrency of one", cfg: Config{Start: 8, Integer: true}, capacity: 1, found: true, wantLo: 1},
		{name: "beyond the maximum", cfg: Config{Start: 1, Max: 50}, capacity: 1000},
		{name: "below the minimum", cfg: Config{Start: 1, Min: 0.25}, capacity: 0.1},
		{name: "probes run out", cfg: Config{Start: 1, MaxProbes: 4}, capacity: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls []float64
			var statuses []Status
			res, err := Run(context.Background(), tt.cfg, fakeServer(tt.capacity, &calls), func(s Status) { statuses = append(statuses, s) })
			if err != nil {
				t.Fatal(err)
			}
			if res.Found != tt.found {
				t.Fatalf("found %v, want %v: %+v (probes %v)", res.Found, tt.found, res, calls)
			}
			if len(res.Probes) != len(calls) {
				t.Errorf("%d probes recorded, %d made", len(res.Probes), len(calls))
			}
			seen := map[float64]bool{}
			for _, c := range calls {
				if seen[c] {
					t.Errorf("probed %v twice: %v", c, calls)
				}
				seen[c] = true
			}
			if !tt.found {
				if _, err := json.Marshal(res); err != nil {
					t.Errorf("result does not marshal: %v", err)
				}
				return
			}
			res2 := tt.cfg
			res2, _ = res2.withDefaults()
			if res.Capacity > tt.capacity || res.Upper <= tt.capacity {
				t.Errorf("bracket [%v, %v) does not hold the capacity %v", res.Capacity, res.Upper, tt.capacity)
			}
			if !tt.cfg.Integer && res.Upper/res.Capacity-1 > res2.Resolution {
				t.Errorf("bracket [%v, %v) wider than %v", res.Capacity, res.Upper, res2.Resolution)
			}
			if tt.wantLo != 0 && (res.Capacity != tt.wantLo || res.Upper != tt.wantLo+1) {
				t.Errorf("bracket [%v, %v), want [%v, %v)", res.Capacity, res.Upper, tt.wantLo, tt.wantLo+1)
			}
			if res.Limiting != "p95(time_to_first_token)" || !strings.Contains(res.Note, "limited by") {
				t.Errorf("limiting %q, note %q", res.Limiting, res.Note)
			}
			if last := statuses[len(statuses)-1]; last.Probes != len(calls)-1 || last.Probing != calls[len(calls)-1] {
				t.Errorf("last status %+v", last)
			}
		})
	}
}

func TestRunBracketsThenBisects(t *testing.T) {
	t.Parallel()
	var calls []float64
	var phases []Phase
	_, err := Run(context.Background(), Config{Start: 2}, fakeServer(11, &calls), func(s Status) { phases = append(phases, s.Phase) })
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{2, 4, 8, 16, 12, 10, 11, 11.5}
	if len(calls) < len(want) {
		t.Fatalf("probes %v, want %v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Fatalf("probes %v, want %v", calls, want)
		}
	}
	if phases[0] != Bracketing || phases[4] != Bisecting {
		t.Errorf("phases %v", phases)
	}
}

func TestRunStopsOnError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	n := 0
	res, err := Run(context.Background(), Config{Start: 1}, ProberFunc(func(context.Context, float64) (Probe, error) {
		n++
		if n == 3 {
			return Probe{}, boom
		}
		return Probe{Judgement: Judgement{Verdict: Pass}}, nil
	}), nil)
	if !errors.Is(err, boom) || len(res.Probes) != 2 || res.Capacity != 2 {
		t.Errorf("err %v, %d probes, capacity %v", err, len(res.Probes), res.Capacity)
	}
	if _, err := Run(context.Background(), Config{}, nil, nil); err == nil {
		t.Error("a search without a start value ran")
	}
	if _, err := Run(context.Background(), Config{Start: 10, Max: 5}, nil, nil); err == nil {
		t.Error("a start above the maximum ran")
	}
}

func TestStatusJSONHasNullForUnknown(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Status{Phase: Bracketing, Lo: 4, Hi: math.NaN()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"lo":4`) || !strings.Contains(string(b), `"hi":null`) {
		t.Errorf("status JSON %s", b)
	}
}
