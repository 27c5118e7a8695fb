package profile

import (
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen"
)

// loadControlOptions are the generator's options for request cancellation
// and the prefill cap.
func loadControlOptions(s *spec.Spec) []loadgen.Option {
	l := &s.Load
	var opts []loadgen.Option
	if l.CancellationRate > 0 {
		opts = append(opts, loadgen.WithCancellation(l.CancellationRate/100, l.CancellationDelay, s.Seed()))
	}
	if l.PrefillConcurrency > 0 {
		opts = append(opts, loadgen.WithPrefillConcurrency(l.PrefillConcurrency))
	}
	if w := l.Warmup.PrefillConcurrency; w > 0 {
		opts = append(opts, loadgen.WithWarmupPrefillConcurrency(w))
	}
	if l.PrefillRamp > 0 {
		opts = append(opts, loadgen.WithPrefillConcurrencyRamp(l.PrefillRamp)) // after the caps it ramps
	}
	if l.Warmup.PrefillRamp > 0 {
		opts = append(opts, loadgen.WithWarmupPrefillRamp(l.Warmup.PrefillRamp))
	}
	return opts
}
