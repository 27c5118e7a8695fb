package cmdline

import (
	"net/http"
	"time"

	"github.com/urfave/cli/v2"
)

// WarmupConfig is AIPerf's warmup flags beyond its count, duration and
// load (Config's Warmup* fields): hidden from --help, listed in
// docs/aiperf-compat.md.
type WarmupConfig struct {
	// WarmupSessions is --num-warmup-sessions (0: not by sessions).
	WarmupSessions int
	// WarmupPattern is --warmup-arrival-pattern ("": --arrival-pattern's).
	WarmupPattern string
	// WarmupConcurrencyRamp, WarmupRateRamp and WarmupPrefillRamp are the
	// warmup's own ramps (--warmup-concurrency-ramp-duration,
	// --warmup-request-rate-ramp-duration,
	// --warmup-prefill-concurrency-ramp-duration; 0: none).
	WarmupConcurrencyRamp, WarmupRateRamp, WarmupPrefillRamp time.Duration
	// WarmupGrace is --warmup-grace-period as given (seconds or inf; "":
	// the warmup flows into the profile).
	WarmupGrace string
}

// warmupOptions are the rows of those flags (flags.go's options holds
// them with the rest).
func warmupOptions() []option {
	return []option{
		{flag: &cli.IntFlag{Category: catLoad, Hidden: true, Name: "num-warmup-sessions", Usage: "warm up with this many sessions (with --warmup-request-count or --warmup-duration too: whichever ends first)"}, path: "loadgen.warmup_num_sessions",
			field: func(c *Config) any { return &c.WarmupSessions }},
		{flag: &cli.StringFlag{Category: catLoad, Hidden: true, Name: "warmup-arrival-pattern", Usage: "the warmup's arrivals under a rate: constant, poisson or gamma (default: --arrival-pattern)"}, path: "loadgen.warmup_arrival_pattern",
			field: func(c *Config) any { return &c.WarmupPattern }},
		{flag: &cli.Float64Flag{Category: catLoad, Hidden: true, Name: "warmup-concurrency-ramp-duration", Usage: "seconds to ramp the warmup's concurrency from 1"}, path: "loadgen.warmup_concurrency_ramp_duration",
			field: func(c *Config) any { return Secs(&c.WarmupConcurrencyRamp) }},
		{flag: &cli.Float64Flag{Category: catLoad, Hidden: true, Name: "warmup-request-rate-ramp-duration", Usage: "seconds to ramp the warmup's request rate up to its target"}, path: "loadgen.warmup_request_rate_ramp_duration",
			field: func(c *Config) any { return Secs(&c.WarmupRateRamp) }},
		{flag: &cli.Float64Flag{Category: catLoad, Hidden: true, Name: "warmup-prefill-concurrency-ramp-duration", Usage: "seconds to ramp the warmup's prefill cap from 1"}, path: "loadgen.warmup_prefill_concurrency_ramp_duration",
			field: func(c *Config) any { return Secs(&c.WarmupPrefillRamp) }},
		{flag: &cli.StringFlag{Category: catLoad, Hidden: true, Name: "warmup-grace-period", Usage: "drain the warmup before the profile, giving its requests this many seconds (inf: all the time they take) after it stops issuing"}, path: "loadgen.warmup_grace_period",
			field: func(c *Config) any { return &c.WarmupGrace }, export: func(c *Config, _ http.Header) any {
				if c.WarmupGrace == "inf" {
					return "inf"
				}
				return optionalNumber(c.WarmupGrace)
			}},
	}
}
