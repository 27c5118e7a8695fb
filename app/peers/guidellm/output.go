package guidellm

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/surgebench/surge/app/peers"
)

// writeOutput writes the report as one of GuideLLM's files: the JSON
// (json.dumps of the model), the YAML (yaml.dump: keys sorted) or the CSV
// (GuideLLM's multi-row headers, a row a benchmark).
func writeOutput(o output, report *peers.Object) error {
	if err := os.MkdirAll(filepath.Dir(o.path), 0o755); err != nil {
		return err
	}
	var b []byte
	var err error
	switch o.kind {
	case "json":
		b, err = report.MarshalJSON()
	case "yaml":
		b, err = toYAML(report)
	case "csv":
		b, err = toCSV(report)
	default:
		return fmt.Errorf("output %s: unknown kind %q", o.path, o.kind)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(o.path, b, 0o644)
}

// toYAML is yaml.dump's form of the report: mappings with sorted keys,
// floats with a fraction (PyYAML's), null as null.
func toYAML(report *peers.Object) ([]byte, error) {
	var conv func(v any) *yaml.Node
	conv = func(v any) *yaml.Node {
		switch x := v.(type) {
		case *peers.Object:
			n := &yaml.Node{Kind: yaml.MappingNode}
			keys := append([]string(nil), x.Keys()...)
			sort.Strings(keys)
			for _, k := range keys {
				val, _ := x.Get(k)
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, conv(val))
			}
			return n
		case []any:
			n := &yaml.Node{Kind: yaml.SequenceNode}
			for _, e := range x {
				n.Content = append(n.Content, conv(e))
			}
			return n
		case []float64:
			n := &yaml.Node{Kind: yaml.SequenceNode}
			for _, e := range x {
				n.Content = append(n.Content, conv(e))
			}
			return n
		case []int:
			n := &yaml.Node{Kind: yaml.SequenceNode}
			for _, e := range x {
				n.Content = append(n.Content, conv(e))
			}
			return n
		case []string:
			n := &yaml.Node{Kind: yaml.SequenceNode}
			for _, e := range x {
				n.Content = append(n.Content, conv(e))
			}
			return n
		case map[string]any:
			o := &peers.Object{}
			for k, e := range x {
				o.Set(k, e)
			}
			return conv(o)
		case nil:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
		case float64:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: yamlFloat(x)}
		case int:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x)}
		case bool:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
		case string:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x}
		}
		b, _ := json.Marshal(v)
		return &yaml.Node{Kind: yaml.ScalarNode, Value: string(b)}
	}
	var sb strings.Builder
	enc := yaml.NewEncoder(&sb)
	enc.SetIndent(2)
	if err := enc.Encode(conv(report)); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return []byte(sb.String()), nil
}

// yamlFloat is a float as PyYAML writes one (.inf, .nan, 1.0, 1.0e-05).
func yamlFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := peers.PyFloat(f)
	if m, e, ok := strings.Cut(s, "e"); ok && !strings.Contains(m, ".") {
		s = m + ".0e" + e
	}
	return s
}

// get walks the report's objects by keys.
func get(v any, keys ...string) any {
	for _, k := range keys {
		o, ok := v.(*peers.Object)
		if !ok {
			return nil
		}
		v, _ = o.Get(k)
	}
	return v
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return 0
}

// pyStr is Python's str() of a report value.
func pyStr(v any) string {
	switch x := v.(type) {
	case float64:
		return peers.PyFloat(x)
	case int:
		return strconv.Itoa(x)
	case string:
		return x
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	return fmt.Sprint(v)
}

// compact is pydantic's model_dump_json: no spaces.
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return string(b)
	}
	return out.String()
}

// spaced is json.dumps: ", " and ": ", keys in their order.
func spaced(v any) string {
	if o, ok := v.(*peers.Object); ok {
		b, err := o.MarshalJSON()
		if err != nil {
			return "{}"
		}
		return string(b)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// timestamp is safe_format_timestamp with GuideLLM's CSV format (local
// time), N/A outside Unix time.
func timestamp(v any) string {
	t := num(v)
	if v == nil || t < 0 || t > 1<<31 {
		return "N/A"
	}
	sec, frac := math.Modf(t)
	return time.Unix(int64(sec), int64(frac*1e9)).Local().Format("2006-01-02 15:04:05")
}

// csvRow collects one benchmark's CSV headers and values.
type csvRow struct {
	headers [][3]string
	values  []string
}

func (r *csvRow) field(group, name string, v any, units string) {
	r.headers = append(r.headers, [3]string{group, name, units})
	r.values = append(r.values, pyStr(v))
}

// stats adds a status distribution's statistics (each status with data).
func (r *csvRow) stats(metric any, group, units string) {
	for _, status := range []string{"successful", "incomplete", "errored"} {
		d := get(metric, status)
		if d == nil || num(get(d, "total_sum")) == 0 {
			continue
		}
		prefix := strings.ToUpper(status[:1]) + status[1:] + " "
		r.headers = append(r.headers, [3]string{group, prefix + units, "Mean"})
		r.values = append(r.values, pyStr(get(d, "mean")))
		r.headers = append(r.headers, [3]string{group, prefix + units, "Median"})
		r.values = append(r.values, pyStr(get(d, "median")))
		r.headers = append(r.headers, [3]string{group, prefix + units, "Std Dev"})
		r.values = append(r.values, pyStr(get(d, "std_dev")))
		r.headers = append(r.headers, [3]string{group, prefix + units, "Percentiles"})
		p := get(d, "percentiles")
		var parts []string
		parts = append(parts, pyStr(get(d, "min")))
		for _, k := range []string{"p001", "p01", "p05", "p10", "p25", "p75", "p90", "p95", "p99"} {
			parts = append(parts, pyStr(get(p, k)))
		}
		parts = append(parts, pyStr(get(d, "max")))
		r.values = append(r.values, "["+strings.Join(parts, ", ")+"]")
	}
}

// toCSV is GuideLLM's benchmarks.csv (benchmark/outputs/csv.py): three
// header rows (group, field, unit), then a row per benchmark.
func toCSV(report *peers.Object) ([]byte, error) {
	benchmarks, _ := get(report, "benchmarks").([]any)
	var headers [][3]string
	var rows [][]string
	argsKey := "args"
	if get(report, "config") != nil {
		argsKey = "config"
	}
	for _, b := range benchmarks {
		r := &csvRow{}
		cfg := get(b, "config")
		r.field("Run Info", "Run ID", get(cfg, "run_id"), "")
		r.field("Run Info", "Run Index", get(cfg, "run_index"), "")
		r.field("Run Info", "Profile", compact(get(cfg, "profile")), "")
		r.field("Run Info", "Requests", spaced(get(cfg, "requests")), "")
		r.field("Run Info", "Backend", spaced(get(cfg, "backend")), "")
		r.field("Run Info", "Environment", spaced(get(cfg, "environment")), "")
		r.field("Benchmark", "Type", get(b, "type_"), "")
		r.field("Benchmark", "ID", get(cfg, "id_"), "")
		r.field("Benchmark", "Strategy", get(cfg, "strategy", "type_"), "")
		r.field("Benchmark", "Constraints", spaced(get(cfg, "constraints")), "")
		sm := get(b, "scheduler_metrics")
		for _, t := range []struct{ name, key string }{{"Start Time", "start_time"}, {"Request Start Time", "request_start_time"},
			{"Measure Start Time", "measure_start_time"}, {"Measure End Time", "measure_end_time"},
			{"Request End Time", "request_end_time"}, {"End Time", "end_time"}} {
			r.field("Timings", t.name, timestamp(get(sm, t.key)), "")
		}
		r.field("Timings", "Duration", get(b, "duration"), "Sec")
		r.field("Timings", "Warmup", get(b, "warmup_duration"), "Sec")
		r.field("Timings", "Cooldown", get(b, "cooldown_duration"), "Sec")
		m := get(b, "metrics")
		for _, s := range []string{"successful", "incomplete", "errored", "total"} {
			r.field("Request Counts", strings.ToUpper(s[:1])+s[1:], get(m, "request_totals", s), "")
		}
		r.stats(get(m, "request_latency"), "Request Latency", "Sec")
		r.stats(get(m, "request_streaming_iterations_count"), "Streaming Iterations", "Count")
		r.stats(get(m, "time_to_first_token_ms"), "Time to First Token", "ms")
		r.stats(get(m, "time_per_output_token_ms"), "Time per Output Token", "ms")
		r.stats(get(m, "inter_token_latency_ms"), "Inter Token Latency", "ms")
		r.stats(get(m, "requests_per_second"), "Server Throughput", "Requests/Sec")
		r.stats(get(m, "request_concurrency"), "Server Throughput", "Concurrency")
		r.stats(get(m, "prompt_token_count"), "Token Metrics", "Input Tokens")
		r.stats(get(m, "output_token_count"), "Token Metrics", "Output Tokens")
		r.stats(get(m, "total_token_count"), "Token Metrics", "Total Tokens")
		r.stats(get(m, "prompt_tokens_per_second"), "Token Throughput", "Input Tokens/Sec")
		r.stats(get(m, "output_tokens_per_second"), "Token Throughput", "Output Tokens/Sec")
		r.stats(get(m, "tokens_per_second"), "Token Throughput", "Total Tokens/Sec")
		r.stats(get(m, "output_tokens_per_iteration"), "Token Streaming", "Output Tokens/Iter")
		r.stats(get(m, "iter_tokens_per_iteration"), "Token Streaming", "Iter Tokens/Iter")
		modalities := []struct {
			name    string
			metrics [][2]string
		}{
			{"text", [][2]string{{"tokens", "Tokens"}, {"words", "Words"}, {"characters", "Characters"}}},
			{"image", [][2]string{{"tokens", "Tokens"}, {"images", "Images"}, {"pixels", "Pixels"}, {"bytes", "Bytes"}}},
			{"video", [][2]string{{"tokens", "Tokens"}, {"frames", "Frames"}, {"seconds", "Seconds"}, {"bytes", "Bytes"}}},
			{"audio", [][2]string{{"tokens", "Tokens"}, {"samples", "Samples"}, {"seconds", "Seconds"}, {"bytes", "Bytes"}}},
		}
		for _, mod := range modalities {
			for _, mm := range mod.metrics {
				summary := get(m, mod.name, mm[0])
				if summary == nil {
					continue
				}
				for _, io := range []string{"input", "output", "total"} {
					d := get(summary, io)
					if d == nil {
						continue
					}
					has := false
					for _, st := range []string{"successful", "incomplete", "errored"} {
						has = has || num(get(d, st, "total_sum")) > 0
					}
					if !has {
						continue
					}
					r.stats(d, strings.ToUpper(mod.name[:1])+mod.name[1:]+" "+mm[1], strings.ToUpper(io[:1])+io[1:])
				}
			}
		}
		st := get(b, "scheduler_state")
		for _, f := range []struct{ name, key string }{{"Node ID", "node_id"}, {"Num Processes", "num_processes"},
			{"Created Requests", "created_requests"}, {"Processed Requests", "processed_requests"},
			{"Successful Requests", "successful_requests"}, {"Errored Requests", "errored_requests"},
			{"Cancelled Requests", "cancelled_requests"}} {
			r.field("Scheduler State", f.name, get(st, f.key), "")
		}
		if num(get(st, "end_queuing_time")) != 0 {
			r.field("Scheduler State", "End Queuing Time", timestamp(get(st, "end_queuing_time")), "")
			r.field("Scheduler State", "End Queuing Constraints", spaced(get(st, "end_queuing_constraints")), "")
		}
		if num(get(st, "end_processing_time")) != 0 {
			r.field("Scheduler State", "End Processing Time", timestamp(get(st, "end_processing_time")), "")
			r.field("Scheduler State", "End Processing Constraints", spaced(get(st, "end_processing_constraints")), "")
		}
		for _, f := range []struct{ name, key string }{{"Requests Made Successful", "successful"}, {"Requests Made Incomplete", "incomplete"},
			{"Requests Made Errored", "errored"}, {"Requests Made Total", "total"}} {
			r.field("Scheduler Metrics", f.name, get(sm, "requests_made", f.key), "")
		}
		for _, f := range []struct{ name, key string }{{"Queued Time Avg", "queued_time_avg"}, {"Resolve Start Delay Avg", "resolve_start_delay_avg"},
			{"Resolve Targeted Start Delay Avg", "resolve_targeted_start_delay_avg"}, {"Request Start Delay Avg", "request_start_delay_avg"},
			{"Request Targeted Start Delay Avg", "request_targeted_start_delay_avg"}, {"Request Time Avg", "request_time_avg"},
			{"Resolve End Delay Avg", "resolve_end_delay_avg"}, {"Resolve Time Avg", "resolve_time_avg"},
			{"Finalized Delay Avg", "finalized_delay_avg"}, {"Processed Delay Avg", "processed_delay_avg"}} {
			r.field("Scheduler Metrics", f.name, get(sm, f.key), "Sec")
		}
		r.field("Runtime Info", "Metadata", compact(get(report, "metadata")), "")
		r.field("Runtime Info", "Arguments", compact(get(report, argsKey)), "")
		if headers == nil {
			headers = r.headers
		}
		rows = append(rows, r.values)
	}
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	w.UseCRLF = true // Python's csv.writer ends rows with \r\n
	for i := range 3 {
		row := make([]string, len(headers))
		for j, h := range headers {
			row[j] = h[i]
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	for _, row := range rows {
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return []byte(sb.String()), w.Error()
}

// printBenchmark prints a benchmark's headline numbers as GuideLLM's
// console summary does, one line each.
func (p *plan) printBenchmark(w io.Writer, b *peers.Object) {
	cfg := get(b, "config")
	m := get(b, "metrics")
	s := func(key, stat string) float64 { return num(get(m, key, "successful", stat)) }
	ps := func(key, pk string) float64 { return num(get(m, key, "successful", "percentiles", pk)) }
	fmt.Fprintf(w, "Benchmark %v %s: %v successful, %v incomplete, %v errored requests in %.2f s\n",
		get(cfg, "run_index"), strategyLabel(get(cfg, "strategy")), get(m, "request_totals", "successful"),
		get(m, "request_totals", "incomplete"), get(m, "request_totals", "errored"), num(get(b, "duration")))
	fmt.Fprintf(w, "  Req/s %.2f  Concurrency %.2f  Out tok/s %.1f  Tot tok/s %.1f\n",
		s("requests_per_second", "mean"), s("request_concurrency", "mean"), s("output_tokens_per_second", "mean"), s("tokens_per_second", "mean"))
	fmt.Fprintf(w, "  Latency (s) mdn %.3f p99 %.3f  TTFT (ms) mdn %.1f p99 %.1f  ITL (ms) mdn %.2f p99 %.2f  TPOT (ms) mdn %.2f p99 %.2f\n",
		s("request_latency", "median"), ps("request_latency", "p99"), s("time_to_first_token_ms", "median"), ps("time_to_first_token_ms", "p99"),
		s("inter_token_latency_ms", "median"), ps("inter_token_latency_ms", "p99"), s("time_per_output_token_ms", "median"), ps("time_per_output_token_ms", "p99"))
}

func strategyLabel(s any) string {
	kind := pyStr(get(s, "type_"))
	switch kind {
	case "concurrent":
		return fmt.Sprintf("concurrent@%v", get(s, "streams"))
	case "constant", "poisson":
		return fmt.Sprintf("%s@%.2f", kind, num(get(s, "rate")))
	}
	return kind
}
