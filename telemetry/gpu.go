package telemetry

import (
	"context"
	"errors"
	"math"
)

// GPUSource reads every GPU it can see.
type GPUSource interface {
	// Sample reads each GPU once. Readings the source does not have are
	// NaN (floats) or 0 (memory bytes).
	Sample(ctx context.Context) ([]GPUSample, error)
}

// DriverReporter is a GPUSource that also knows the GPU driver's version
// (NVML's does).
type DriverReporter interface {
	DriverVersion() (string, error)
}

// GPUSourceFunc adapts a function to GPUSource.
type GPUSourceFunc func(ctx context.Context) ([]GPUSample, error)

// Sample calls f.
func (f GPUSourceFunc) Sample(ctx context.Context) ([]GPUSample, error) { return f(ctx) }

// ErrNVMLUnavailable is wrapped by NVML's error when the library cannot be
// used (no driver, no GPU, a build without cgo). Its text is the start of
// the one line the run prints: "NVML not available (…)".
var ErrNVMLUnavailable = errors.New("NVML not available")

// nanGPUSample is a sample with every float reading unknown.
func nanGPUSample(source string, index int) GPUSample {
	n := math.NaN()
	return GPUSample{Source: source, Index: index, SMUtil: n, MemUtil: n, PowerW: n, EnergyJ: n, TempC: n, SMClockMHz: n}
}
