//go:build cgo

package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fakeNVML is an NVML of n GPUs whose device i reads utilisation 10+i %,
// memory 20+i %, 40 GiB used of 80, 300+i W, (1000+i)·10⁶ mJ, 50+i °C and
// 1980−i MHz; GPU 7 has no energy counter (ERROR_NOT_SUPPORTED).
type fakeNVML struct {
	n        int
	initRet  nvmlReturn
	panicked bool // DeviceCount panics, as a half-loaded library might
	shut     int
}

func (f *fakeNVML) Init() nvmlReturn     { return f.initRet }
func (f *fakeNVML) Shutdown() nvmlReturn { f.shut++; return nvmlSuccess }
func (f *fakeNVML) DeviceCount() (int, nvmlReturn) {
	if f.panicked {
		panic("nvmlDeviceGetCount_v2: nil function")
	}
	return f.n, nvmlSuccess
}
func (f *fakeNVML) Device(i int) (nvmlDev, nvmlReturn) { return fakeGPU(i), nvmlSuccess }

type fakeGPU int

func (g fakeGPU) Name() (string, nvmlReturn) { return "NVIDIA H100 80GB HBM3", nvmlSuccess }
func (g fakeGPU) UUID() (string, nvmlReturn) { return fmt.Sprintf("GPU-%d", g), nvmlSuccess }
func (g fakeGPU) Index() (int, nvmlReturn)   { return int(g), nvmlSuccess }
func (g fakeGPU) Utilization() (uint32, uint32, nvmlReturn) {
	return 10 + uint32(g), 20 + uint32(g), nvmlSuccess
}
func (g fakeGPU) Memory() (uint64, uint64, nvmlReturn)  { return 40 << 30, 80 << 30, nvmlSuccess }
func (g fakeGPU) PowerMilliwatts() (uint32, nvmlReturn) { return (300 + uint32(g)) * 1000, nvmlSuccess }
func (g fakeGPU) EnergyMillijoules() (uint64, nvmlReturn) {
	if g == 7 {
		return 0, nvmlErrNotSupported
	}
	return uint64(1000+g) * 1e6, nvmlSuccess
}
func (g fakeGPU) TemperatureC() (uint32, nvmlReturn) { return 50 + uint32(g), nvmlSuccess }
func (g fakeGPU) SMClockMHz() (uint32, nvmlReturn)   { return 1980 - uint32(g), nvmlSuccess }

func TestNVMLReadings(t *testing.T) {
	t.Parallel()
	lib := &fakeNVML{n: 8}
	src, err := openNVML(lib)
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want []GPUSample
	for i := range 8 {
		e := float64(1000 + i)
		if i == 7 {
			e = math.NaN()
		}
		want = append(want, GPUSample{Source: "nvml", Index: i, Name: "NVIDIA H100 80GB HBM3", UUID: fmt.Sprintf("GPU-%d", i),
			SMUtil: float64(10 + i), MemUtil: float64(20 + i), MemUsed: 40 << 30, MemTotal: 80 << 30,
			PowerW: float64(300 + i), EnergyJ: e * 1000, TempC: float64(50 + i), SMClockMHz: float64(1980 - i)})
	}
	if d := cmp.Diff(want, got, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("samples (-want +got):\n%s", d)
	}
	if err := src.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	if lib.shut != 1 {
		t.Errorf("Close shut NVML down %d times, want 1", lib.shut)
	}
	if _, err := src.Sample(context.Background()); err == nil {
		t.Error("sample after Close succeeded")
	}
}

func TestNVMLUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		lib  nvmlLib
		want string
	}{
		{"library absent", dlNVML{"/nonexistent/libnvidia-ml.so.1"}, "NVML not available (libnvidia-ml.so.1 not found)"},
		{"not NVML", dlNVML{"libc.so.6"}, "NVML not available (ERROR_FUNCTION_NOT_FOUND)"},
		{"no GPUs", &fakeNVML{}, "NVML not available (no GPUs found)"},
		{"driver not loaded", &fakeNVML{n: 8, initRet: 9}, "NVML not available (ERROR_DRIVER_NOT_LOADED)"},
		{"panic", &fakeNVML{n: 8, panicked: true}, "NVML not available (nvmlDeviceGetCount_v2: nil function)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src, err := openNVML(tt.lib)
			if err == nil {
				t.Fatalf("got a source %v", src)
			}
			if !errors.Is(err, ErrNVMLUnavailable) {
				t.Errorf("%v does not wrap ErrNVMLUnavailable", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line starting %q", err, tt.want)
			}
		})
	}
}

func TestNVMLReturnNames(t *testing.T) {
	for r, want := range map[nvmlReturn]string{0: "SUCCESS", nvmlErrNotSupported: "ERROR_NOT_SUPPORTED",
		nvmlErrDriverNotLoaded: "ERROR_DRIVER_NOT_LOADED", nvmlErrLibNotFound: "ERROR_LIBRARY_NOT_FOUND",
		nvmlErrFuncNotFound: "ERROR_FUNCTION_NOT_FOUND", 29: "ERROR_INVALID_STATE", 999: "ERROR_UNKNOWN", 77: "nvml return 77"} {
		if got := r.Error(); got != want {
			t.Errorf("%d: %q, want %q", int(r), got, want)
		}
	}
}

// TestNVMLHost runs the real library: on a machine without it (CI, this
// dev box) it must say "not available"; with a GPU it must read one.
func TestNVMLHost(t *testing.T) {
	t.Parallel()
	src, err := NVML()
	if err != nil {
		if !errors.Is(err, ErrNVMLUnavailable) {
			t.Fatalf("error %v does not wrap ErrNVMLUnavailable", err)
		}
		t.Logf("GPU telemetry: %v", err)
		return
	}
	defer src.(interface{ Close() error }).Close()
	got, err := src.Sample(context.Background())
	if err != nil || len(got) == 0 {
		t.Fatalf("sample: %v, %d GPUs", err, len(got))
	}
	for _, g := range got {
		if g.Name == "" || g.UUID == "" || g.MemTotal == 0 || math.IsNaN(g.SMUtil) {
			t.Errorf("GPU %d read %+v: name, UUID, memory or utilisation missing", g.Index, g)
		}
	}
	t.Logf("%+v", got[0])
}
