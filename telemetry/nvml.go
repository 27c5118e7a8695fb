//go:build cgo

package telemetry

import (
	"context"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlDevice is a device handle with the readings that never change.
type nvmlDevice struct {
	dev        nvml.Device
	index      int
	name, uuid string
}

// nvmlSource reads GPUs on this host through NVML.
type nvmlSource struct {
	mu   sync.Mutex
	lib  nvml.Interface
	devs []nvmlDevice
	shut bool
}

// NVML opens the NVIDIA Management Library on this host and returns a
// source reading every GPU it lists. Without the driver's
// libnvidia-ml.so.1 (no GPU, a container without it) or without GPUs the
// error wraps ErrNVMLUnavailable and reads "NVML not available (…)"; the
// run should say so once and go on. The source implements io.Closer (NVML
// shutdown); a Collector closes it when Run returns.
func NVML() (GPUSource, error) {
	return openNVML(nvml.New())
}

// openNVML initialises lib and enumerates its devices. go-nvml's calls
// reach C through dlsym'd pointers, so any panic from a half-loaded
// library is turned into the same "not available" error.
func openNVML(lib nvml.Interface) (src GPUSource, err error) {
	defer func() {
		if p := recover(); p != nil {
			src, err = nil, fmt.Errorf("%w (%v)", ErrNVMLUnavailable, p)
		}
	}()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("%w (%s)", ErrNVMLUnavailable, nvmlReason(ret))
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS || n == 0 {
		_ = lib.Shutdown()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("%w (device count: %s)", ErrNVMLUnavailable, nvmlReason(ret))
		}
		return nil, fmt.Errorf("%w (no GPUs found)", ErrNVMLUnavailable)
	}
	s := &nvmlSource{lib: lib}
	for i := range n {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			// A GPU we may not open (cgroup, lost) is left out, not fatal.
			continue
		}
		d := nvmlDevice{dev: dev, index: i}
		if name, ret := dev.GetName(); ret == nvml.SUCCESS {
			d.name = name
		}
		if uuid, ret := dev.GetUUID(); ret == nvml.SUCCESS {
			d.uuid = uuid
		}
		if idx, ret := dev.GetIndex(); ret == nvml.SUCCESS {
			d.index = idx
		}
		s.devs = append(s.devs, d)
	}
	if len(s.devs) == 0 {
		_ = lib.Shutdown()
		return nil, fmt.Errorf("%w (none of %d GPUs could be opened)", ErrNVMLUnavailable, n)
	}
	return s, nil
}

// nvmlReason names a return code; the library-not-found case gets the
// file name people search for.
func nvmlReason(ret nvml.Return) string {
	if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		return "libnvidia-ml.so.1 not found"
	}
	return ret.Error()
}

// String names the source.
func (s *nvmlSource) String() string { return "nvml" }

// Sample reads every device once. A reading the device does not support
// (energy on older boards, clocks on some vGPUs) is NaN.
func (s *nvmlSource) Sample(ctx context.Context) (out []GPUSample, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return nil, fmt.Errorf("nvml: source closed")
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("nvml: %v", p)
		}
	}()
	out = make([]GPUSample, 0, len(s.devs))
	for i := range s.devs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, s.read(&s.devs[i]))
	}
	return out, nil
}

func (s *nvmlSource) read(d *nvmlDevice) GPUSample {
	g := nanGPUSample("nvml", d.index)
	g.Name, g.UUID = d.name, d.uuid
	if u, ret := d.dev.GetUtilizationRates(); ret == nvml.SUCCESS {
		g.SMUtil, g.MemUtil = float64(u.Gpu), float64(u.Memory)
	}
	if m, ret := d.dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		g.MemUsed, g.MemTotal = m.Used, m.Total
	}
	if mw, ret := d.dev.GetPowerUsage(); ret == nvml.SUCCESS {
		g.PowerW = float64(mw) / 1000
	}
	if mj, ret := d.dev.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
		g.EnergyJ = float64(mj) / 1000
	}
	if t, ret := d.dev.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		g.TempC = float64(t)
	}
	if c, ret := d.dev.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
		g.SMClockMHz = float64(c)
	}
	return g
}

// DriverVersion is the NVIDIA driver's version as NVML reports it
// ("550.54.15"), for the run's record of what measured it.
func (s *nvmlSource) DriverVersion() (v string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return "", fmt.Errorf("nvml: source closed")
	}
	defer func() {
		if p := recover(); p != nil {
			v, err = "", fmt.Errorf("nvml: %v", p)
		}
	}()
	v, ret := s.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		return "", fmt.Errorf("nvml: driver version: %s", ret.Error())
	}
	return v, nil
}

// Close shuts NVML down. Further samples fail.
func (s *nvmlSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return nil
	}
	s.shut = true
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %s", ret.Error())
	}
	return nil
}
