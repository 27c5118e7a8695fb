//go:build cgo

package telemetry

import "strconv"

// nvmlReturn is NVML's nvmlReturn_t.
type nvmlReturn int

// The NVML return codes surge names (nvml.h).
const (
	nvmlSuccess            nvmlReturn = 0
	nvmlErrNotSupported    nvmlReturn = 3
	nvmlErrLibNotFound     nvmlReturn = 12
	nvmlErrFuncNotFound    nvmlReturn = 13
	nvmlErrDriverNotLoaded nvmlReturn = 9
)

// nvmlReturnNames are nvml.h's names of its return codes.
var nvmlReturnNames = [...]string{"SUCCESS", "ERROR_UNINITIALIZED", "ERROR_INVALID_ARGUMENT", "ERROR_NOT_SUPPORTED",
	"ERROR_NO_PERMISSION", "ERROR_ALREADY_INITIALIZED", "ERROR_NOT_FOUND", "ERROR_INSUFFICIENT_SIZE",
	"ERROR_INSUFFICIENT_POWER", "ERROR_DRIVER_NOT_LOADED", "ERROR_TIMEOUT", "ERROR_IRQ_ISSUE",
	"ERROR_LIBRARY_NOT_FOUND", "ERROR_FUNCTION_NOT_FOUND", "ERROR_CORRUPTED_INFOROM", "ERROR_GPU_IS_LOST",
	"ERROR_RESET_REQUIRED", "ERROR_OPERATING_SYSTEM", "ERROR_LIB_RM_VERSION_MISMATCH", "ERROR_IN_USE",
	"ERROR_MEMORY", "ERROR_NO_DATA", "ERROR_VGPU_ECC_NOT_SUPPORTED", "ERROR_INSUFFICIENT_RESOURCES",
	"ERROR_FREQ_NOT_SUPPORTED", "ERROR_ARGUMENT_VERSION_MISMATCH", "ERROR_DEPRECATED", "ERROR_NOT_READY",
	"ERROR_GPU_NOT_FOUND", "ERROR_INVALID_STATE"}

// Error is the code's name in nvml.h.
func (r nvmlReturn) Error() string {
	if r >= 0 && int(r) < len(nvmlReturnNames) {
		return nvmlReturnNames[r]
	}
	if r == 999 {
		return "ERROR_UNKNOWN"
	}
	return "nvml return " + strconv.Itoa(int(r))
}

// nvmlLib is the part of NVML surge reads: the driver's
// libnvidia-ml.so.1 (nvml_cgo.go) or a test's fake.
type nvmlLib interface {
	Init() nvmlReturn
	Shutdown() nvmlReturn
	DeviceCount() (int, nvmlReturn)
	Device(i int) (nvmlDev, nvmlReturn)
}

// nvmlDev is one GPU's readings, each with NVML's return code.
type nvmlDev interface {
	Name() (string, nvmlReturn)
	UUID() (string, nvmlReturn)
	Index() (int, nvmlReturn)
	Utilization() (gpu, mem uint32, r nvmlReturn)
	Memory() (used, total uint64, r nvmlReturn)
	PowerMilliwatts() (uint32, nvmlReturn)
	EnergyMillijoules() (uint64, nvmlReturn)
	TemperatureC() (uint32, nvmlReturn)
	SMClockMHz() (uint32, nvmlReturn)
}
