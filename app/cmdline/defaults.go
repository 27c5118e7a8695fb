package cmdline

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// applyDefaults gives AIPerf's defaults that depend on whether a flag was
// given at all (isSet reports that): a random seed per run (drawn here, so
// input_config keeps it and --random-seed repeats the run), and a turn
// delay ratio of 0 that removes the delays rather than leaving them, and
// the model name asked of the server when --model is not given.
func (c *Config) applyDefaults(isSet func(string) bool) {
	if !isSet("random-seed") {
		c.Seed, c.SeedDrawn = drawSeed(), true
	}
	c.NoTurnDelays = isSet("conversation-turn-delay-ratio") && c.TurnDelayRatio == 0
	c.ModelFromServer = !isSet("model")
	c.LegacyMaxTokensSet = isSet("use-legacy-max-tokens")
	// A bound given as 0 is no bound: the spec refuses it rather than run
	// AIPerf's default instead.
	c.ZeroCount = isSet("request-count") && c.RequestCount == 0 && c.SweepLists["request-count"] == nil
	c.ZeroDuration = isSet("benchmark-duration") && c.Duration == 0 && c.SweepLists["benchmark-duration"] == nil
}

// drawSeed draws a run's seed: below 2^53, so every JSON reader (and
// AIPerf's, a Python int) reads input_config's copy back exactly.
func drawSeed() uint64 { return rand.Uint64N(1 << 53) }

// numbers is a value list flag (--concurrency 1,2,4; --request-rate 10) as
// input_config shows it: numbers, as AIPerf's config holds them (one value
// a number, a sweep a list), the text itself when it is not numbers (the
// run refuses it anyway).
func numbers(s string) any {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	out := make([]any, 0, len(fields))
	for _, f := range fields {
		if i, err := strconv.ParseInt(f, 10, 64); err == nil {
			out = append(out, i)
			continue
		}
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return s
		}
		out = append(out, x)
	}
	if len(out) == 1 {
		return out[0]
	}
	return out
}
