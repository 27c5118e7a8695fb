package telemetry

import (
	"cmp"
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"

	dto "github.com/prometheus/client_model/go"

	"github.com/surgebench/surge/internal/outbound"
)

// ErrNoDCGMMetrics marks a Prometheus endpoint without DCGM_FI_DEV_* GPU
// metrics.
var ErrNoDCGMMetrics = errors.New("no DCGM_FI_DEV_* GPU metrics")

// mib is DCGM's framebuffer unit.
const mib = 1 << 20

// dcgmField maps one DCGM exporter metric onto a GPUSample field.
type dcgmField struct {
	name string
	set  func(*dcgmGPU, float64)
}

// dcgmGPU is one GPU's sample while its series are gathered.
type dcgmGPU struct {
	s              GPUSample
	used, free, rs float64 // framebuffer MiB; NaN until seen
}

// dcgmFields are dcgm-exporter's default-counters names, with their units:
// utilisation in %, framebuffer in MiB, power in W, energy in mJ since the
// driver loaded, temperature in °C, clocks in MHz. The profiling ratio
// (DCGM_FI_PROF_GR_ENGINE_ACTIVE, 0–1) stands in for GPU_UTIL where only
// the DCP metrics are enabled.
var dcgmFields = []dcgmField{
	{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", func(g *dcgmGPU, v float64) {
		if math.IsNaN(g.s.SMUtil) {
			g.s.SMUtil = v * 100
		}
	}},
	{"DCGM_FI_DEV_GPU_UTIL", func(g *dcgmGPU, v float64) { g.s.SMUtil = v }},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", func(g *dcgmGPU, v float64) { g.s.MemUtil = v }},
	{"DCGM_FI_DEV_FB_USED", func(g *dcgmGPU, v float64) { g.used = v }},
	{"DCGM_FI_DEV_FB_FREE", func(g *dcgmGPU, v float64) { g.free = v }},
	{"DCGM_FI_DEV_FB_RESERVED", func(g *dcgmGPU, v float64) { g.rs = v }},
	{"DCGM_FI_DEV_POWER_USAGE", func(g *dcgmGPU, v float64) { g.s.PowerW = v }},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", func(g *dcgmGPU, v float64) { g.s.EnergyJ = v / 1000 }},
	{"DCGM_FI_DEV_GPU_TEMP", func(g *dcgmGPU, v float64) { g.s.TempC = v }},
	{"DCGM_FI_DEV_SM_CLOCK", func(g *dcgmGPU, v float64) { g.s.SMClockMHz = v }},
}

// zeroNaN maps NaN to 0.
func zeroNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func mibBytes(v float64) uint64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return uint64(v * mib)
}

// dcgmSource scrapes one dcgm-exporter endpoint.
type dcgmSource struct {
	url    string
	client *http.Client
}

// DCGM returns a source scraping a dcgm-exporter endpoint (for GPUs on
// another host; nil client: the outbound policy's). Samples carry the
// exporter's gpu, UUID, modelName and Hostname labels and have url as
// Source.
func DCGM(url string, client *http.Client) GPUSource {
	if client == nil {
		client = outbound.NewClient()
	}
	return &dcgmSource{url: url, client: client}
}

// String returns the URL.
func (d *dcgmSource) String() string { return d.url }

// Sample scrapes the exporter once.
func (d *dcgmSource) Sample(ctx context.Context) ([]GPUSample, error) {
	fams, err := scrape(ctx, d.client, d.url)
	if err != nil {
		return nil, err
	}
	out := dcgmSamples(d.url, fams)
	if len(out) == 0 {
		return nil, ErrNoDCGMMetrics
	}
	return out, nil
}

// dcgmSamples groups DCGM series by GPU (gpu and UUID labels).
func dcgmSamples(source string, fams map[string]*dto.MetricFamily) []GPUSample {
	type key struct{ gpu, uuid string }
	byGPU := map[key]*dcgmGPU{}
	for _, f := range dcgmFields {
		fam, ok := fams[f.name]
		if !ok {
			continue
		}
		for _, m := range fam.GetMetric() {
			v := value(m)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			k := key{label(m, "gpu"), label(m, "UUID")}
			s, ok := byGPU[k]
			if !ok {
				idx, err := strconv.Atoi(k.gpu)
				if err != nil {
					idx = -1
				}
				n := math.NaN()
				s = &dcgmGPU{s: nanGPUSample(source, idx), used: n, free: n, rs: n}
				s.s.UUID = k.uuid
				s.s.Name = label(m, "modelName")
				s.s.Hostname = label(m, "Hostname")
				byGPU[k] = s
			}
			f.set(s, v)
		}
	}
	out := make([]GPUSample, 0, len(byGPU))
	for _, g := range byGPU {
		// Total = used + free (+ reserved, on drivers that report it);
		// without free it is unknown rather than wrong.
		if !math.IsNaN(g.used) {
			g.s.MemUsed = mibBytes(g.used)
			if !math.IsNaN(g.free) {
				g.s.MemTotal = mibBytes(g.used + g.free + zeroNaN(g.rs))
			}
		}
		out = append(out, g.s)
	}
	slices.SortFunc(out, func(a, b GPUSample) int {
		return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.UUID, b.UUID))
	})
	return out
}
