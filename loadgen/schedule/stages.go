package schedule

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

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
