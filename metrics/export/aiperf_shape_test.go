package export

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests here hold surge's files to AIPerf's, key by key and type by
// type: testdata/aiperf holds one example of each file AIPerf writes, made
// from its pydantic models and exporters (see its README). Every key of
// AIPerf's example must be in surge's file with a compatible JSON type: an
// integer where AIPerf's model has an int, a number (integer or not) where
// it has a float, anything where its example has null (an optional field).
// Keys surge adds beside AIPerf's are allowed: AIPerf's models accept extra
// fields, but for its ErrorDetails, which forbids them.

// surgeFiles writes surge's exports of the shared fixture.
func surgeFiles(t *testing.T) (js, csvFile, jsonl, tsJSON, tsCSV []byte) {
	t.Helper()
	js, csvFile, jsonl, tsJSON, tsCSV, _ = surgeFilesRaw(t)
	return
}

// surgeFilesRaw is surgeFiles with the raw dump.
func surgeFilesRaw(t *testing.T) (js, csvFile, jsonl, tsJSON, tsCSV, raw []byte) {
	t.Helper()
	var l, j, c, tj, tc, r bytes.Buffer
	s := fixture(t, sinks{NewJSONL(&l, fixtureStart, WithWorkerID("test")), NewRawJSONL(&r, fixtureStart, WithWorkerID("test"))})
	run := Run{SurgeVersion: "test", BenchmarkID: "3f1c2a9e-0b4d-4e57-9a61-5c2d7e8f9a10", Start: fixtureStart,
		End: fixtureStart.Add(time.Second), InputConfig: map[string]any{"model": "m"}, RunInfo: map[string]any{}}
	if err := JSON(&j, s, run); err != nil {
		t.Fatal(err)
	}
	if err := CSV(&c, s); err != nil {
		t.Fatal(err)
	}
	if err := TimeslicesJSON(&tj, s, run.InputConfig); err != nil {
		t.Fatal(err)
	}
	if err := TimeslicesCSV(&tc, s); err != nil {
		t.Fatal(err)
	}
	return j.Bytes(), c.Bytes(), l.Bytes(), tj.Bytes(), tc.Bytes(), r.Bytes()
}

func aiperfFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "aiperf", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decode reads JSON keeping numbers as written, so integers and other
// numbers can be told apart.
func decode(t *testing.T, what string, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// kind is a JSON value's type, integers apart from other numbers.
func kind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "number"
		}
		return "integer"
	}
	return fmt.Sprintf("%T", v)
}

// nullable are the fields AIPerf's models declare Optional (int | None,
// str | None) that its examples show with a value: surge may write null.
var nullable = []string{"x_request_id", "x_correlation_id", "conversation_id", "turn_index", "credit_issued_ns",
	"request_ack_ns", "cancellation_time_ns", "code", "type"}

// metricRecordMetadataKeys are the fields of AIPerf's MetricRecordMetadata
// (common/metric_records_wire.py, a msgspec Struct).
var metricRecordMetadataKeys = []string{"request_num", "session_num", "x_request_id", "x_correlation_id",
	"conversation_id", "turn_index", "credit_issued_ns", "credit_received_ns", "request_start_ns", "request_ack_ns",
	"request_end_ns", "worker_id", "record_processor_id", "benchmark_phase", "was_cancelled", "cancellation_time_ns",
	"clock_offset_ns"}

// errorDetailsKeys are the fields of AIPerf's ErrorDetails (extra="forbid").
var errorDetailsKeys = []string{"message", "code", "type", "cause", "cause_chain", "details"}

// sameShape reports, under path, every way got differs from AIPerf's want.
func sameShape(path string, want, got any) []string {
	wk, gk := kind(want), kind(got)
	switch {
	case wk == "null":
		return nil // optional in AIPerf's model: any value, or null
	case wk == "number" && gk == "integer":
		return nil // a float field: Go writes 50.0 as 50
	case gk == "null" && slices.Contains(nullable, path[strings.LastIndex(path, ".")+1:]):
		return nil
	case wk != gk:
		return []string{fmt.Sprintf("%s: %s in AIPerf's file, %s in surge's", path, wk, gk)}
	}
	var out []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		if strings.HasSuffix(path, ".error") || strings.HasSuffix(path, ".error_details") {
			for k := range g {
				if !slices.Contains(errorDetailsKeys, k) {
					out = append(out, fmt.Sprintf("%s.%s: AIPerf's ErrorDetails forbids extra fields", path, k))
				}
			}
		}
		for _, k := range sortedKeys(w) {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			out = append(out, sameShape(path+"."+k, w[k], gv)...)
		}
	case []any:
		g := got.([]any)
		if len(w) > 0 {
			for i, gv := range g {
				out = append(out, sameShape(fmt.Sprintf("%s[%d]", path, i), w[0], gv)...)
			}
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func report(t *testing.T, file string, diffs []string) {
	t.Helper()
	for _, d := range diffs {
		t.Errorf("%s: %s", file, d)
	}
}

// TestAIPerfSummaryShape: profile_export_aiperf.json against AIPerf's
// JsonExportData. surge writes surge_version beside aiperf_version;
// input_config and run_info are checked as objects only (their own tests
// hold their keys).
func TestAIPerfSummaryShape(t *testing.T) {
	t.Parallel()
	js, _, _, _, _ := surgeFiles(t)
	want := decode(t, "AIPerf's JSON", aiperfFile(t, "profile_export_aiperf.json")).(map[string]any)
	got := decode(t, "surge's JSON", js).(map[string]any)
	for _, k := range []string{"input_config", "run_info"} {
		if _, ok := want[k]; ok {
			want[k] = map[string]any{}
		}
	}
	report(t, "profile_export_aiperf.json", sameShape("$", want, got))
	if got["schema_version"] != "1.5" || got["aiperf_version"] != AIPerfVersion || got["surge_version"] != "test" {
		t.Errorf("schema_version %v, aiperf_version %v, surge_version %v: want AIPerf's 1.5, %s and surge's beside",
			got["schema_version"], got["aiperf_version"], got["surge_version"], AIPerfVersion)
	}
	// Run-level metrics carry unit and avg only, as AIPerf's derived and
	// aggregate ones (a count there would read as the request count).
	for _, k := range []string{"request_count", "request_throughput", "total_osl", "min_request_timestamp", "benchmark_duration"} {
		if m := got[k].(map[string]any); len(m) != 2 {
			t.Errorf("%s = %v, want {unit, avg}", k, m)
		}
	}
}

// TestAIPerfRecordsShape: every line of profile_export.jsonl against
// AIPerf's MetricRecordInfo, successful lines against its successful
// example, failed ones against its failed one.
func TestAIPerfRecordsShape(t *testing.T) {
	t.Parallel()
	_, _, jsonl, _, _ := surgeFiles(t)
	var examples []any
	sc := bufio.NewScanner(bytes.NewReader(aiperfFile(t, "profile_export.jsonl")))
	for sc.Scan() {
		examples = append(examples, decode(t, "AIPerf's JSONL", sc.Bytes()))
	}
	ok, failed := examples[0], examples[1]
	sc = bufio.NewScanner(bytes.NewReader(jsonl))
	sc.Buffer(nil, 1<<20)
	var n, nFailed int
	for i := 1; sc.Scan(); i++ {
		line := decode(t, "surge's JSONL", sc.Bytes()).(map[string]any)
		want := ok
		if line["error"] != nil {
			want, nFailed = failed, nFailed+1
		}
		report(t, fmt.Sprintf("profile_export.jsonl:%d", i), sameShape("$", want, line))
		md := line["metadata"].(map[string]any)
		// AIPerf's loader builds MetricRecordMetadata(**metadata), a
		// msgspec struct that refuses a key it does not declare, and reads
		// the line's other keys by name: surge's own go beside them.
		for k := range md {
			if !slices.Contains(metricRecordMetadataKeys, k) {
				t.Errorf("line %d: metadata.%s is not a MetricRecordMetadata field; AIPerf's loader rejects the line", i, k)
			}
		}
		for k := range line {
			if !slices.Contains([]string{"metadata", "metrics", "error", "trace_data", "surge"}, k) {
				t.Errorf("line %d: top-level key %s", i, k)
			}
		}
		if p := md["benchmark_phase"]; p != "warmup" && p != "profiling" {
			t.Errorf("line %d: benchmark_phase %v, want warmup or profiling (AIPerf's CreditPhase)", i, p)
		}
		// MetricRecordMetadata's required fields are never null.
		for _, k := range []string{"session_num", "request_start_ns", "request_end_ns", "worker_id", "record_processor_id", "benchmark_phase"} {
			if md[k] == nil {
				t.Errorf("line %d: %s is null; AIPerf's model requires it", i, k)
			}
		}
		for tag, v := range line["metrics"].(map[string]any) {
			if m, ok := v.(map[string]any); !ok || kind(m["unit"]) != "string" || (kind(m["value"]) != "integer" && kind(m["value"]) != "number" && kind(m["value"]) != "array") {
				t.Errorf("line %d: metric %s = %v, want AIPerf's MetricValue {value, unit}", i, tag, v)
			}
		}
		n++
	}
	if n != 13 || nFailed != 2 {
		t.Errorf("%d lines, %d failed; want 13 and 2", n, nFailed)
	}
}

// csvRows splits a CSV written with CRLF line ends, failing on a bare LF.
func csvRows(t *testing.T, what string, b []byte) [][]string {
	t.Helper()
	if bytes.Count(b, []byte("\n")) != bytes.Count(b, []byte("\r\n")) {
		t.Errorf("%s: lines do not all end in CRLF (Python's csv module writes CRLF)", what)
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return rows
}

var twoDecimals = regexp.MustCompile(`^-?[0-9]+\.[0-9]{2}$`)

// TestAIPerfCSVShape: profile_export_aiperf.csv against AIPerf's
// exporter: its two headers, a blank line between the sections, every
// number with two decimals, the labels AIPerf writes for the metrics both
// have, in AIPerf's order (by tag).
func TestAIPerfCSVShape(t *testing.T) {
	t.Parallel()
	_, got, _, _, _ := surgeFiles(t)
	sections := func(what string, b []byte) (dist, run [][]string) {
		rows := csvRows(t, what, b)
		blank := slices.IndexFunc(rows, func(r []string) bool { return len(r) == 1 && r[0] == "" })
		if blank < 0 {
			// encoding/csv skips empty lines: find the section header.
			blank = slices.IndexFunc(rows, func(r []string) bool { return len(r) == 2 && r[0] == "Metric" && r[1] == "Value" })
			if !bytes.Contains(b, []byte("\r\n\r\nMetric,Value\r\n")) {
				t.Errorf("%s: no blank line before Metric,Value", what)
			}
			run := rows[blank:]
			// surge's own sections follow AIPerf's two (the intervals:
			// Metric,Window,…; checked in precision_test.go).
			if end := slices.IndexFunc(run[1:], func(r []string) bool { return r[0] == "Metric" }); end >= 0 {
				run = run[:end+1]
			}
			return rows[:blank], run
		}
		return rows[:blank], rows[blank+1:]
	}
	wd, wr := sections("AIPerf's CSV", aiperfFile(t, "profile_export_aiperf.csv"))
	gd, gr := sections("surge's CSV", got)
	if !slices.Equal(wd[0], gd[0]) || !slices.Equal(wr[0], gr[0]) {
		t.Fatalf("headers %v / %v, want AIPerf's %v / %v", gd[0], gr[0], wd[0], wr[0])
	}
	for _, sec := range []struct {
		name      string
		want, got [][]string
	}{{"distributions", wd, gd}, {"run-level", wr, gr}} {
		var labels []string
		for _, row := range sec.got[1:] {
			labels = append(labels, row[0])
			if len(row) != len(sec.got[0]) {
				t.Errorf("%s row %v: %d columns, want %d", sec.name, row, len(row), len(sec.got[0]))
			}
			for _, v := range row[1:] {
				if strings.HasSuffix(row[0], "(error-adjusted) (ms)") && (v == "inf" || v == "") {
					continue // AIPerf#688: unbounded, and no std
				}
				if !twoDecimals.MatchString(v) {
					t.Errorf("%s row %q: %q is not %%.2f", sec.name, row[0], v)
				}
			}
		}
		last := -1
		for _, row := range sec.want[1:] {
			i := slices.Index(labels, row[0])
			if i < 0 {
				t.Errorf("%s: AIPerf's row %q is not in surge's CSV (%v)", sec.name, row[0], labels)
				continue
			}
			if i < last {
				t.Errorf("%s: %q out of AIPerf's order", sec.name, row[0])
			}
			last = i
		}
	}
}

// TestAIPerfTimeslicesShape: the timeslice files against AIPerf's
// TimesliceCollectionExportData and its tidy CSV.
func TestAIPerfTimeslicesShape(t *testing.T) {
	t.Parallel()
	_, _, _, js, csvb := surgeFiles(t)
	want := decode(t, "AIPerf's timeslices", aiperfFile(t, "profile_export_aiperf_timeslices.json")).(map[string]any)
	got := decode(t, "surge's timeslices", js).(map[string]any)
	want["input_config"] = map[string]any{}
	// A window whose requests all failed has no latencies (nor would
	// AIPerf's): the example is of a window with successes.
	slicesOf := got["timeslices"].([]any)
	var withSuccesses []any
	for _, s := range slicesOf {
		if n := s.(map[string]any)["request_count"].(map[string]any)["avg"]; n != json.Number("0") {
			withSuccesses = append(withSuccesses, s)
		}
	}
	report(t, "profile_export_aiperf_timeslices.json", sameShape("$", want,
		map[string]any{"timeslices": withSuccesses, "input_config": got["input_config"]}))
	for i, s := range slicesOf {
		if idx := s.(map[string]any)["timeslice_index"]; kind(idx) != "integer" {
			t.Errorf("timeslice %d: index %v", i, idx)
		}
	}
	if len(slicesOf) < 2 {
		t.Errorf("%d timeslices in the fixture, want several", len(slicesOf))
	}

	wrows := csvRows(t, "AIPerf's timeslice CSV", aiperfFile(t, "profile_export_aiperf_timeslices.csv"))
	grows := csvRows(t, "surge's timeslice CSV", csvb)
	if !slices.Equal(wrows[0], grows[0]) {
		t.Fatalf("header %v, want AIPerf's %v", grows[0], wrows[0])
	}
	have := map[string]bool{}
	for _, r := range grows[1:] {
		if len(r) != 5 || !twoDecimals.MatchString(r[4]) {
			t.Errorf("row %v: want 5 columns, the value %%.2f", r)
			continue
		}
		have[strings.Join(r[:4], ",")] = true
	}
	for _, r := range wrows[1:] {
		if !have[strings.Join(r[:4], ",")] {
			t.Errorf("AIPerf's row %v has no counterpart in surge's CSV", r[:4])
		}
	}
}

// TestAIPerfRawShape: profile_export_raw.jsonl against AIPerf's
// RawRecordInfo, a stream against its SSE example, a whole body against
// its TextResponse one (request and response headers are null in surge's:
// they carry the credentials).
func TestAIPerfRawShape(t *testing.T) {
	t.Parallel()
	_, _, _, _, _, raw := surgeFilesRaw(t)
	var examples []any
	sc := bufio.NewScanner(bytes.NewReader(aiperfFile(t, "profile_export_raw.jsonl")))
	for sc.Scan() {
		examples = append(examples, decode(t, "AIPerf's raw JSONL", sc.Bytes()))
	}
	sc = bufio.NewScanner(bytes.NewReader(raw))
	n := 0
	for i := 1; sc.Scan(); i++ {
		line := decode(t, "surge's raw JSONL", sc.Bytes()).(map[string]any)
		want := examples[0]
		if line["status"] != json.Number("200") {
			want = examples[1]
		}
		report(t, fmt.Sprintf("profile_export_raw.jsonl:%d", i), sameShape("$", want, line))
		n++
	}
	if n != 2 {
		t.Errorf("%d raw lines, want the fixture's 2 captures", n)
	}
}
