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
	f.Add([]byte("{}\n[]\n\"x\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ReadRecords(bytes.NewReader(b))
		_, _ = ReadSamples(bytes.NewReader(b))
		_, _ = ParseSummary(b)
	})
}
