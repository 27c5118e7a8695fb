//go:build cgo

package telemetry

// A binding of the few NVML calls surge makes, through dlopen: no NVML
// header or library at build time (go-nvml's cgo compiled all of nvml.h
// and printed ~150 lines of deprecation warnings on every clean build).

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

typedef void *surge_dev;
typedef struct { unsigned int gpu, memory; } surge_util;
typedef struct { unsigned long long total, free, used; } surge_mem;

static void *surge_lib;
static int (*p_init)(void);
static int (*p_shutdown)(void);
static int (*p_count)(unsigned int *);
static int (*p_handle)(unsigned int, surge_dev *);
static int (*p_name)(surge_dev, char *, unsigned int);
static int (*p_uuid)(surge_dev, char *, unsigned int);
static int (*p_index)(surge_dev, unsigned int *);
static int (*p_util)(surge_dev, surge_util *);
static int (*p_mem)(surge_dev, surge_mem *);
static int (*p_power)(surge_dev, unsigned int *);
static int (*p_energy)(surge_dev, unsigned long long *);
static int (*p_temp)(surge_dev, int, unsigned int *);
static int (*p_clock)(surge_dev, int, unsigned int *);

// surge_nvml_open loads the library once: 0, 12 (library not found) or 13
// (a function missing).
static int surge_nvml_open(const char *path) {
	if (surge_lib != NULL) return 0;
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (h == NULL) return 12;
#define SYM(p, name) *(void **)(&p) = dlsym(h, name); if (p == NULL) { dlclose(h); return 13; }
	SYM(p_init, "nvmlInit_v2")
	SYM(p_shutdown, "nvmlShutdown")
	SYM(p_count, "nvmlDeviceGetCount_v2")
	SYM(p_handle, "nvmlDeviceGetHandleByIndex_v2")
	SYM(p_name, "nvmlDeviceGetName")
	SYM(p_uuid, "nvmlDeviceGetUUID")
	SYM(p_index, "nvmlDeviceGetIndex")
	SYM(p_util, "nvmlDeviceGetUtilizationRates")
	SYM(p_mem, "nvmlDeviceGetMemoryInfo")
	SYM(p_power, "nvmlDeviceGetPowerUsage")
	SYM(p_energy, "nvmlDeviceGetTotalEnergyConsumption")
	SYM(p_temp, "nvmlDeviceGetTemperature")
	SYM(p_clock, "nvmlDeviceGetClockInfo")
#undef SYM
	surge_lib = h;
	return 0;
}

// surge_nvml_exists reports whether path loads (1) or not (0).
static int surge_nvml_exists(const char *path) {
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (h == NULL) return 0;
	dlclose(h);
	return 1;
}

static int surge_init(void) { return p_init(); }
static int surge_shutdown(void) { return p_shutdown(); }
static int surge_count(unsigned int *n) { return p_count(n); }
static int surge_handle(unsigned int i, surge_dev *d) { return p_handle(i, d); }
static int surge_name(surge_dev d, char *b, unsigned int n) { return p_name(d, b, n); }
static int surge_uuid(surge_dev d, char *b, unsigned int n) { return p_uuid(d, b, n); }
static int surge_index(surge_dev d, unsigned int *v) { return p_index(d, v); }
static int surge_utilization(surge_dev d, surge_util *v) { return p_util(d, v); }
static int surge_memory(surge_dev d, surge_mem *v) { return p_mem(d, v); }
static int surge_power(surge_dev d, unsigned int *v) { return p_power(d, v); }
static int surge_energy(surge_dev d, unsigned long long *v) { return p_energy(d, v); }
static int surge_temperature(surge_dev d, unsigned int *v) { return p_temp(d, 0, v); } // NVML_TEMPERATURE_GPU
static int surge_sm_clock(surge_dev d, unsigned int *v) { return p_clock(d, 1, v); }   // NVML_CLOCK_SM
*/
import "C"

import (
	"sync"
	"unsafe"
)

// nvmlOpen serialises loading the library (its function pointers are
// process-wide, as NVML's own state is); nvmlLoaded is the path loaded.
var (
	nvmlOpen   sync.Mutex
	nvmlLoaded string
)

// dlNVML is the driver's NVML, loaded from path on Init.
type dlNVML struct{ path string }

// nvmlDefaultLib is the driver's library name.
const nvmlDefaultLib = "libnvidia-ml.so.1"

func (l dlNVML) Init() nvmlReturn {
	nvmlOpen.Lock()
	defer nvmlOpen.Unlock()
	p := C.CString(l.path)
	defer C.free(unsafe.Pointer(p))
	if nvmlLoaded != "" && nvmlLoaded != l.path && C.surge_nvml_exists(p) == 0 {
		return nvmlErrLibNotFound // another path loaded; this one would not
	}
	if r := nvmlReturn(C.surge_nvml_open(p)); r != nvmlSuccess {
		return r
	}
	if nvmlLoaded == "" {
		nvmlLoaded = l.path
	}
	return nvmlReturn(C.surge_init())
}

func (dlNVML) Shutdown() nvmlReturn { return nvmlReturn(C.surge_shutdown()) }

func (dlNVML) DeviceCount() (int, nvmlReturn) {
	var n C.uint
	r := nvmlReturn(C.surge_count(&n))
	return int(n), r
}

func (dlNVML) Device(i int) (nvmlDev, nvmlReturn) {
	var d C.surge_dev
	r := nvmlReturn(C.surge_handle(C.uint(i), &d))
	return dlDevice{d}, r
}

// dlDevice is a device handle of the driver's NVML.
type dlDevice struct{ h C.surge_dev }

// nvmlStringSize is NVML's buffer size for names and UUIDs (v2).
const nvmlStringSize = 96

func (d dlDevice) Name() (string, nvmlReturn) {
	var b [nvmlStringSize]C.char
	r := nvmlReturn(C.surge_name(d.h, &b[0], nvmlStringSize))
	return C.GoString(&b[0]), r
}

func (d dlDevice) UUID() (string, nvmlReturn) {
	var b [nvmlStringSize]C.char
	r := nvmlReturn(C.surge_uuid(d.h, &b[0], nvmlStringSize))
	return C.GoString(&b[0]), r
}

func (d dlDevice) Index() (int, nvmlReturn) {
	var v C.uint
	r := nvmlReturn(C.surge_index(d.h, &v))
	return int(v), r
}

func (d dlDevice) Utilization() (gpu, mem uint32, r nvmlReturn) {
	var u C.surge_util
	r = nvmlReturn(C.surge_utilization(d.h, &u))
	return uint32(u.gpu), uint32(u.memory), r
}

func (d dlDevice) Memory() (used, total uint64, r nvmlReturn) {
	var m C.surge_mem
	r = nvmlReturn(C.surge_memory(d.h, &m))
	return uint64(m.used), uint64(m.total), r
}

func (d dlDevice) PowerMilliwatts() (uint32, nvmlReturn) {
	var v C.uint
	r := nvmlReturn(C.surge_power(d.h, &v))
	return uint32(v), r
}

func (d dlDevice) EnergyMillijoules() (uint64, nvmlReturn) {
	var v C.ulonglong
	r := nvmlReturn(C.surge_energy(d.h, &v))
	return uint64(v), r
}

func (d dlDevice) TemperatureC() (uint32, nvmlReturn) {
	var v C.uint
	r := nvmlReturn(C.surge_temperature(d.h, &v))
	return uint32(v), r
}

func (d dlDevice) SMClockMHz() (uint32, nvmlReturn) {
	var v C.uint
	r := nvmlReturn(C.surge_sm_clock(d.h, &v))
	return uint32(v), r
}
