package export

import (
	"encoding/csv"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// CSVOption adds a section to profile_export_aiperf.csv.
type CSVOption func(*csvConfig)

type csvConfig struct{ telemetry any }

// WithTelemetry adds AIPerf's GPU telemetry section when telemetry (the
// JSON export's telemetry_data) has AIPerf's shape: endpoints → gpus →
// metrics, each a {unit, avg, …} block. Other shapes add nothing.
func WithTelemetry(telemetry any) CSVOption { return func(c *csvConfig) { c.telemetry = telemetry } }

// gpuMetrics are AIPerf's GPU telemetry metrics in its CSV order, by the
// names of its schema 1.5 (nvidia_*, amd_*) and of the ones before it.
var gpuMetrics = []struct{ key, name string }{
	{"nvidia_power_usage", "NVIDIA GPU Power Usage"}, {"nvidia_energy_consumption", "NVIDIA Energy Consumption"},
	{"nvidia_gpu_utilization", "NVIDIA GPU Utilization"}, {"nvidia_memory_utilization", "NVIDIA Memory Utilization"},
	{"nvidia_memory_used", "NVIDIA GPU Memory Used"}, {"nvidia_temperature", "NVIDIA GPU Temperature"},
	{"nvidia_sm_utilization", "NVIDIA SM Utilization"}, {"nvidia_decoder_utilization", "NVIDIA Decoder Utilization"},
	{"nvidia_encoder_utilization", "NVIDIA Encoder Utilization"}, {"nvidia_jpg_utilization", "NVIDIA JPEG Utilization"},
	{"nvidia_xid_errors", "NVIDIA XID Errors"}, {"nvidia_power_violation", "NVIDIA Power Violation"},
	{"amd_power", "AMD GPU Power"}, {"amd_energy_consumption", "AMD Energy Consumption"},
	{"amd_gfx_activity", "AMD GFX Activity"}, {"amd_umc_activity", "AMD UMC Activity"}, {"amd_mm_activity", "AMD MM Activity"},
	{"amd_memory_used", "AMD GPU Memory Used"}, {"amd_temperature", "AMD GPU Temperature"},
	{"amd_ecc_uncorrectable", "AMD ECC Uncorrectable"}, {"amd_throttle_status", "AMD Throttle Status"},
	{"gpu_power_usage", "GPU Power Usage"}, {"energy_consumption", "Energy Consumption"},
	{"gpu_utilization", "GPU Utilization"}, {"gpu_memory_used", "GPU Memory Used"}, {"gpu_temperature", "GPU Temperature"},
	{"mem_utilization", "Memory Utilization"}, {"sm_utilization", "SM Utilization"},
	{"decoder_utilization", "Decoder Utilization"}, {"encoder_utilization", "Encoder Utilization"},
	{"jpg_utilization", "JPEG Utilization"}, {"xid_errors", "XID Errors"}, {"power_violation", "Power Violation"},
}

// aiperfTelemetry is telemetry_data in AIPerf's shape (export_models.py:
// TelemetryExportData, EndpointData, GpuSummary).
type aiperfTelemetry struct {
	Endpoints map[string]struct {
		GPUs map[string]struct {
			Index     int                       `json:"gpu_index"`
			Name      string                    `json:"gpu_name"`
			UUID      string                    `json:"gpu_uuid"`
			Hostname  *string                   `json:"hostname"`
			Namespace *string                   `json:"namespace"`
			PodName   *string                   `json:"pod_name"`
			Metrics   map[string]map[string]any `json:"metrics"`
		} `json:"gpus"`
	} `json:"endpoints"`
}

// writeTelemetryCSV writes AIPerf's GPU telemetry section: two blank rows,
// then Endpoint,GPU_Index,GPU_Name,GPU_UUID,Metric,<stats>[,Hostname,
// Namespace,Pod Name] (the optional columns when any GPU has them), one row
// per metric of each GPU. It writes nothing for another shape.
func writeTelemetryCSV(cw *csv.Writer, telemetry any) {
	if telemetry == nil {
		return
	}
	b, err := json.Marshal(telemetry)
	if err != nil {
		return
	}
	var t aiperfTelemetry
	if json.Unmarshal(b, &t) != nil || len(t.Endpoints) == 0 {
		return
	}
	var hasHost, hasNS, hasPod bool
	for _, ep := range t.Endpoints {
		for _, g := range ep.GPUs {
			hasHost, hasNS, hasPod = hasHost || g.Hostname != nil, hasNS || g.Namespace != nil, hasPod || g.PodName != nil
		}
	}
	_ = cw.Write(nil)
	_ = cw.Write(nil)
	header := append([]string{"Endpoint", "GPU_Index", "GPU_Name", "GPU_UUID", "Metric"}, statKeys...)
	for _, h := range []struct {
		on   bool
		name string
	}{{hasHost, "Hostname"}, {hasNS, "Namespace"}, {hasPod, "Pod Name"}} {
		if h.on {
			header = append(header, h.name)
		}
	}
	_ = cw.Write(header)
	for _, epName := range slices.Sorted(maps.Keys(t.Endpoints)) {
		ep := t.Endpoints[epName]
		for _, gk := range slices.Sorted(maps.Keys(ep.GPUs)) {
			g := ep.GPUs[gk]
			for _, m := range gpuMetrics {
				stats, ok := g.Metrics[m.key]
				if !ok {
					continue
				}
				name := m.name
				if u, _ := stats["unit"].(string); u != "" {
					name += " (" + u + ")"
				}
				row := []string{epName, strconv.Itoa(g.Index), g.Name, g.UUID, name}
				for _, k := range statKeys {
					if v, ok := stats[k].(float64); ok {
						row = append(row, csvNum(v))
					} else {
						row = append(row, "")
					}
				}
				for _, opt := range []struct {
					on bool
					v  *string
				}{{hasHost, g.Hostname}, {hasNS, g.Namespace}, {hasPod, g.PodName}} {
					if opt.on {
						row = append(row, optString(opt.v))
					}
				}
				_ = cw.Write(row)
			}
		}
	}
}

// optString is AIPerf's str() of an optional value ("None" for none).
func optString(v *string) string {
	if v == nil {
		return "None"
	}
	return *v
}
