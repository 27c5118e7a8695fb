package artifact

import (
	"bytes"
	"testing"
)

// FuzzParse feeds every reader of outside files the same bytes: each must
// return records or an error, never panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"metadata":{"session_num":0,"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":12.5,"unit":"ms"}}}` + "\n"))
	f.Add([]byte(`{"records":{"time_to_first_token":{"unit":"ms","avg":1,"p99":2}},"input_config":{"concurrency":4}}`))
	f.Add([]byte(`{"timestamp_ns":1,"gpu_uuid":"GPU-0","gpu_utilization":50}` + "\n"))
	f.Add([]byte(`{"gpu_index":0,"timestamp_ns":5,"telemetry_data":{"gpu_utilization":50},"surge":{"at_ns":1,"gpu_index":0,"gpu_utilization":50}}` + "\n"))
	f.Add([]byte(`{"metadata":{"session_num":0,"request_start_ns":1,"request_end_ns":2},"metrics":{},"error":null,"surge":{"stage":1}}` + "\n"))
	f.Add([]byte("{}\n[]\n\"x\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ReadRecords(bytes.NewReader(b))
		_, _ = ReadSamples(bytes.NewReader(b))
		_, _ = ParseSummary(b)
	})
}

// TestReadsAIPerfShapedLines: surge's files in AIPerf's record shapes read
// back with surge's own fields: a record's stage from its "surge" object
// (older files: from metadata), a telemetry line's sample from its
// "surge" object.
func TestReadsAIPerfShapedLines(t *testing.T) {
	t.Parallel()
	recs, err := ReadRecords(bytes.NewReader([]byte(
		`{"metadata":{"request_start_ns":1,"request_end_ns":2,"benchmark_phase":"profiling"},"metrics":{},"error":null,"surge":{"stage":2}}` + "\n" +
			`{"metadata":{"request_start_ns":1,"request_end_ns":2,"benchmark_phase":"profiling","stage":1},"metrics":{},"error":null}` + "\n")))
	if err != nil || len(recs) != 2 || recs[0].Stage != 2 || recs[1].Stage != 1 {
		t.Errorf("records %+v, %v: want stages 2 (surge object) and 1 (older metadata)", recs, err)
	}
	ss, err := ReadSamples(bytes.NewReader([]byte(
		`{"gpu_index":0,"gpu_uuid":"GPU-0","timestamp_ns":5,"dcgm_url":"pynvml://localhost","telemetry_data":{"gpu_power_usage":300},"surge":{"at_ns":2000000000,"timestamp_ns":5,"gpu_index":0,"power_usage_w":300}}` + "\n")))
	if err != nil || len(ss) != 1 || ss[0].AtSec != 2 || ss[0].Values["power_usage_w"] != 300 || ss[0].Source != "gpu_index=0" {
		t.Errorf("samples %+v, %v", ss, err)
	}
}
