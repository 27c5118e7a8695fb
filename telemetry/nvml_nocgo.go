//go:build !cgo

package telemetry

import "fmt"

// NVML would open the NVIDIA Management Library; go-nvml needs cgo, so a
// static (CGO_ENABLED=0) build always reports it unavailable. Use DCGM
// exporters for GPU telemetry from such a binary.
func NVML() (GPUSource, error) {
	return nil, fmt.Errorf("%w (built without cgo)", ErrNVMLUnavailable)
}
