package schedule

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultKneeFactor is the default --knee-factor: the knee is where p95 TTFT
// has more than doubled over the first stage.
const DefaultKneeFactor = 2

// kneeGain is the throughput gain over the previous stage below which a
// stage counts as saturated.
const kneeGain = 1.10

// ParseStages parses a stage list such as "1,2,4,8" or "5,10,20" given to
// flag (--concurrency, --request-rate). Items are comma separated, may be
// surrounded by spaces, and must be finite numbers > 0; a single number is a
// one-stage list. Errors name the flag, the item's 1-based position and its
// text, e.g. `--request-rate: item 2 "x" is not a number`.
func ParseStages(flag, value string) ([]float64, error) {
	if strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("%s: empty stage list", flag)
	}
	items := strings.Split(value, ",")
	out := make([]float64, 0, len(items))
	for i, it := range items {
		s := strings.TrimSpace(it)
		if s == "" {
			return nil, fmt.Errorf("%s: item %d is empty in %q", flag, i+1, value)
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: item %d %q is not a number", flag, i+1, s)
		}
		if v <= 0 {
			return nil, fmt.Errorf("%s: item %d %q must be > 0", flag, i+1, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// ParseIntStages is ParseStages for flags whose stages are counts
// (--concurrency): every item must also be a whole number.
func ParseIntStages(flag, value string) ([]int, error) {
	vals, err := ParseStages(flag, value)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(vals))
	for i, v := range vals {
		if v != math.Trunc(v) || v > math.MaxInt32 {
			return nil, fmt.Errorf("%s: item %d %v must be a whole number", flag, i+1, v)
		}
		out[i] = int(v)
	}
	return out, nil
}

// StagePoint is what knee detection needs from one stage of a sweep.
type StagePoint struct {
	// Value is the stage's setting (concurrency or request rate).
	Value float64
	// P95TTFTms is the stage's p95 time to first token in milliseconds.
	P95TTFTms float64
	// Throughput is the stage's output throughput (any unit, the same for
	// every stage: requests/s or tokens/s).
	Throughput float64
}

// Knee finds the saturation point of a sweep. The knee is the first stage i
// ≥ 1 where both
//
//	P95TTFTms[i] > factor × P95TTFTms[0]      (latency has blown up), and
//	Throughput[i] < 1.10 × Throughput[i−1]    (the step bought < 10% more)
//
// Throughput is compared with the previous stage, not the first: against the
// first stage almost every later stage of a working server gains more than
// 10%, so the test would never fire. operating is the recommended operating
// point, the stage before the knee (the last one that still paid off).
// Both are −1 when there is no knee (the sweep never saturated) or fewer
// than two stages. A factor ≤ 0 or NaN means DefaultKneeFactor.
func Knee(points []StagePoint, factor float64) (knee, operating int) {
	if !(factor > 0) {
		factor = DefaultKneeFactor
	}
	if len(points) < 2 {
		return -1, -1
	}
	limit := factor * points[0].P95TTFTms
	for i := 1; i < len(points); i++ {
		if points[i].P95TTFTms > limit && points[i].Throughput < kneeGain*points[i-1].Throughput {
			return i, i - 1
		}
	}
	return -1, -1
}
