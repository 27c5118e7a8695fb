package serverinfo

import (
	"context"
	"errors"

	"github.com/surgebench/surge/telemetry"
)

// GPUs reads the accelerators src sees (NVML on the server's host: name,
// memory) once, with the driver's version when src reports it
// (telemetry.DriverReporter). A source that fails is its error; a driver
// version it cannot read is left out.
func GPUs(ctx context.Context, src telemetry.GPUSource) ([]GPU, error) {
	if src == nil {
		return nil, errors.New("no GPU source")
	}
	samples, err := src.Sample(ctx)
	if err != nil {
		return nil, err
	}
	driver := ""
	if dr, ok := src.(telemetry.DriverReporter); ok {
		if v, err := dr.DriverVersion(); err == nil {
			driver = v
		}
	}
	out := make([]GPU, 0, len(samples))
	for _, s := range samples {
		out = append(out, GPU{Index: s.Index, Name: s.Name, MemoryMiB: s.MemTotal >> 20, Driver: driver})
	}
	return out, nil
}
