package schedule

import (
	"testing"
	"time"
)

func TestConcurrencyRamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		target  int
		d       time.Duration
		elapsed time.Duration
		want    int
	}{
		{"start is 1", 16, 10 * time.Second, 0, 1},
		{"before start", 16, 10 * time.Second, -time.Second, 1},
		{"end is target", 16, 10 * time.Second, 10 * time.Second, 16},
		{"after end holds", 16, 10 * time.Second, time.Hour, 16},
		{"just before end", 16, 10 * time.Second, 10*time.Second - 1, 15},
		{"midway", 11, 10 * time.Second, 5 * time.Second, 6},
		{"first step", 11, 10 * time.Second, time.Second, 2},
		{"just before first step", 11, 10 * time.Second, time.Second - 1, 1},
		{"target 1", 1, 10 * time.Second, 0, 1},
		{"no ramp", 8, 0, 0, 8},
		{"unlimited stays unlimited", 0, time.Second, 0, 0},
	}
	for _, tt := range tests {
		if got := ConcurrencyRamp(tt.target, tt.d)(tt.elapsed); got != tt.want {
			t.Errorf("%s: ConcurrencyRamp(%d, %v)(%v) = %d, want %d", tt.name, tt.target, tt.d, tt.elapsed, got, tt.want)
		}
	}
}

func TestConcurrencyRampMonotoneAndEveryStep(t *testing.T) {
	t.Parallel()
	l := ConcurrencyRamp(32, 31*time.Second)
	seen := map[int]bool{}
	prev := 0
	for e := time.Duration(0); e <= 32*time.Second; e += 10 * time.Millisecond {
		c := l(e)
		if c < prev {
			t.Fatalf("cap fell from %d to %d at %v", prev, c, e)
		}
		prev = c
		seen[c] = true
	}
	for c := 1; c <= 32; c++ {
		if !seen[c] {
			t.Errorf("cap %d never reached", c)
		}
	}
	// 31 steps over 31 s: one per second.
	if got := l(7 * time.Second); got != 8 {
		t.Errorf("cap at 7s = %d, want 8", got)
	}
}

func TestValidateRamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flag      string
		ramp, run time.Duration
		want      string
	}{
		{"--concurrency-ramp-duration", 60 * time.Second, 30 * time.Second, "--concurrency-ramp-duration 60s is longer than the run's duration 30s"},
		{"--request-rate-ramp-duration", 1500 * time.Millisecond, time.Second, "--request-rate-ramp-duration 1.5s is longer than the run's duration 1s"},
		{"--request-rate-ramp-duration", -time.Second, 0, "--request-rate-ramp-duration must be ≥ 0, got -1s"},
		{"--concurrency-ramp-duration", 30 * time.Second, 30 * time.Second, ""},
		{"--concurrency-ramp-duration", time.Hour, 0, ""}, // count-bound run
		{"--concurrency-ramp-duration", 0, time.Second, ""},
	}
	for _, tt := range tests {
		err := ValidateRamp(tt.flag, tt.ramp, tt.run)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("ValidateRamp(%s, %v, %v) = %q, want %q", tt.flag, tt.ramp, tt.run, got, tt.want)
		}
	}
}
