package profile

import (
	"slices"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/schedule"
)

// validateLoadControl checks --request-cancellation-* and
// --prefill-concurrency and --warmup-prefill-concurrency against the run
// (AIPerf's bounds: a percentage, a delay ≥ 0; a prefill cap that streams
// and is at most the concurrency).
func (p *prepared) validateLoadControl(concs []int) error {
	c := &p.c
	switch {
	case c.CancellationRate < 0 || c.CancellationRate > 100 || c.CancellationRate != c.CancellationRate:
		return cmdline.Usagef("--request-cancellation-rate is a percentage between 0 and 100, got %g", c.CancellationRate)
	case c.CancellationDelay < 0:
		return cmdline.Usagef("--request-cancellation-delay must be ≥ 0 seconds, got %g", c.CancellationDelay.Seconds())
	case c.PrefillConcurrency < 0:
		return cmdline.Usagef("--prefill-concurrency must be ≥ 1 (0: no cap), got %d", c.PrefillConcurrency)
	case c.WarmupPrefillConcurrency < 0:
		return cmdline.Usagef("--warmup-prefill-concurrency must be ≥ 1 (0: --prefill-concurrency's), got %d", c.WarmupPrefillConcurrency)
	case c.WarmupPrefillConcurrency > 0 && c.WarmupCount == 0 && c.WarmupDuration == 0:
		return cmdline.Usagef("--warmup-prefill-concurrency caps the warmup's prefill: bound the warmup with --warmup-request-count or --warmup-duration")
	case c.WarmupPrefillConcurrency > 0 && c.WarmupConcurrency > 0 && c.WarmupPrefillConcurrency > c.WarmupConcurrency:
		return cmdline.Usagef("--warmup-prefill-concurrency %d is more than --warmup-concurrency %d: at most the requests in flight can be in prefill", c.WarmupPrefillConcurrency, c.WarmupConcurrency)
	case c.PrefillRamp != 0 && c.PrefillConcurrency == 0:
		return cmdline.Usagef("--prefill-concurrency-ramp-duration ramps --prefill-concurrency: give it")
	case c.PrefillConcurrency == 0 && c.WarmupPrefillConcurrency == 0:
		return nil
	case !c.Streaming || !p.ep.Info().Streams:
		flag := "--prefill-concurrency"
		if c.PrefillConcurrency == 0 {
			flag = "--warmup-prefill-concurrency"
		}
		return cmdline.Usagef("%s needs --streaming and an endpoint type that streams: a request's first token ends its prefill", flag)
	case c.PrefillConcurrency == 0:
		return nil
	case len(concs) > 0 && c.PrefillConcurrency > slices.Min(concs):
		return cmdline.Usagef("--prefill-concurrency %d is more than --concurrency %d: at most the requests in flight can be in prefill", c.PrefillConcurrency, slices.Min(concs))
	}
	if err := schedule.ValidateRamp("--prefill-concurrency-ramp-duration", c.PrefillRamp, c.Duration); err != nil {
		return &cmdline.UsageError{Err: err}
	}
	return nil
}

// loadControlOptions are the generator's options for request cancellation
// and the prefill cap.
func (p *prepared) loadControlOptions() []loadgen.Option {
	c := &p.c
	var opts []loadgen.Option
	if c.CancellationRate > 0 {
		opts = append(opts, loadgen.WithCancellation(c.CancellationRate/100, c.CancellationDelay, c.Seed))
	}
	if c.PrefillConcurrency > 0 {
		opts = append(opts, loadgen.WithPrefillConcurrency(c.PrefillConcurrency))
	}
	if c.WarmupPrefillConcurrency > 0 {
		opts = append(opts, loadgen.WithWarmupPrefillConcurrency(c.WarmupPrefillConcurrency))
	}
	if c.PrefillRamp > 0 {
		opts = append(opts, loadgen.WithPrefillConcurrencyRamp(c.PrefillRamp)) // after the caps it ramps
	}
	return opts
}
