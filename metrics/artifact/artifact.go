// Package artifact reads a finished run's artifact folder back: the summary
// (profile_export_aiperf.json), the per-request records
// (profile_export.jsonl) and the telemetry samples, from surge, from
// `surge merge`, or from AIPerf itself. Fields are read by AIPerf's names and
// tolerantly: a field a writer left out is absent, never an error, so the
// report and compare tools keep working while export keys evolve.
package artifact

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/metrics/stats"
)

// File names inside an artifact folder (AIPerf's where AIPerf has one).
const (
	SummaryFile       = "profile_export_aiperf.json"
	RecordsFile       = "profile_export.jsonl"
	GPUFile           = "gpu_telemetry_export.jsonl"
	ServerMetricsFile = "server_metrics_export.jsonl"
)

// Run is one artifact folder read back.
type Run struct {
	// Dir is the folder (or the folder of the file) the run was read from.
	Dir string
	// Name labels the run in charts and tables: the folder's base name,
	// made unique by the caller when two runs share one.
	Name string

	// Summary is the summary export; nil when the folder has none (an
	// AIPerf JSONL on its own).
	Summary *Summary
	// Records are the per-request records in file order.
	Records []Record
	// GPU and Server are telemetry samples, each a flat line of numbers.
	GPU    []Sample
	Server []Sample
}

// Stat is one metric's statistics in display units. Run-level metrics carry
// only Unit and Avg.
type Stat struct {
	Unit  string  `json:"unit"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Std   float64 `json:"std"`
	Count float64 `json:"count"`
}

// Get returns the named statistic ("avg", "p99", …) and whether it exists.
func (s Stat) Get(name string) (float64, bool) {
	switch name {
	case "avg":
		return s.Avg, true
	case "min":
		return s.Min, true
	case "max":
		return s.Max, true
	case "p1":
		return s.P1, true
	case "p5":
		return s.P5, true
	case "p10":
		return s.P10, true
	case "p25":
		return s.P25, true
	case "p50":
		return s.P50, true
	case "p75":
		return s.P75, true
	case "p90":
		return s.P90, true
	case "p95":
		return s.P95, true
	case "p99":
		return s.P99, true
	case "std":
		return s.Std, true
	case "count":
		return s.Count, true
	}
	return 0, false
}

// Stage is one stage of a sweep as the summary reports it.
type Stage struct {
	Index                 int     `json:"index"`
	Mode                  string  `json:"mode"`
	Value                 float64 `json:"value"`
	Label                 string  `json:"label"`
	RequestCount          float64 `json:"request_count"`
	ErrorRequestCount     float64 `json:"error_request_count"`
	TTFT                  Stat    `json:"time_to_first_token"`
	ITL                   Stat    `json:"inter_token_latency"`
	Latency               Stat    `json:"request_latency"`
	OutputTokenThroughput float64 `json:"output_token_throughput"`
	RequestThroughput     float64 `json:"request_throughput"`
	DurationSec           float64 `json:"benchmark_duration"`
	Knee                  bool    `json:"knee"`
	// The 95% confidence intervals surge writes per stage (nil: absent).
	TTFTP95CI               *Range `json:"time_to_first_token_p95_ci"`
	LatencyP95CI            *Range `json:"request_latency_p95_ci"`
	OutputTokenThroughputCI *Range `json:"output_token_throughput_ci"`
	// TimeBreakdown is where the stage's time went (nil: none).
	TimeBreakdown Breakdown `json:"time_breakdown"`
}

// Range is a confidence interval as the summary writes it; a side it
// could not bound (null) reads as ±Inf.
type Range struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// UnmarshalJSON reads a range, nulls as unbounded.
func (r *Range) UnmarshalJSON(b []byte) error {
	var j struct {
		Lo, Hi *float64
	}
	if err := json.Unmarshal(b, &struct {
		Lo **float64 `json:"lo"`
		Hi **float64 `json:"hi"`
	}{&j.Lo, &j.Hi}); err != nil {
		return err
	}
	*r = Range{Lo: math.Inf(-1), Hi: math.Inf(1)}
	if j.Lo != nil {
		r.Lo = *j.Lo
	}
	if j.Hi != nil {
		r.Hi = *j.Hi
	}
	return nil
}

// Knee is a sweep's knee and recommended operating point; a stage index
// the summary does not give is -1 (an inconclusive verdict names none).
type Knee struct {
	Mode             string  `json:"mode"`
	KneeStage        int     `json:"knee_stage"`
	KneeValue        float64 `json:"knee_value"`
	RecommendedStage int     `json:"recommended_stage"`
	RecommendedValue float64 `json:"recommended_value"`
	Inconclusive     bool    `json:"inconclusive"`
}

// ErrorCount is one line of the error summary.
type ErrorCount struct {
	Details struct {
		Code    any    `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error_details"`
	Count float64 `json:"count"`
}

// Summary is the summary export, with the fields the report and compare
// tools read; Raw keeps the whole object.
type Summary struct {
	Metrics      map[string]Stat
	Stages       []Stage
	Knee         *Knee
	Warnings     []string
	Errors       []ErrorCount
	InputConfig  map[string]any
	RunInfo      map[string]any
	Fingerprint  map[string]any
	Version      string
	StartTime    string
	EndTime      string
	WasCancelled bool
	// Precision and Steady are surge's intervals and steady state (nil:
	// absent, as from AIPerf or an older surge).
	Precision *Precision
	Steady    *Steady
	// Breakdown is where the run's time went (surge.time_breakdown; nil:
	// none). Its known parts are in Metrics too (BreakdownTag).
	Breakdown Breakdown
	Raw       map[string]json.RawMessage
}

// Record is one request of the per-request JSONL.
type Record struct {
	// StartNs and EndNs are wall-clock nanoseconds (request_start_ns,
	// request_end_ns); 0 when absent.
	StartNs int64
	EndNs   int64
	// Stage is the sweep stage (-1 when the record names none).
	Stage int
	// Phase is benchmark_phase ("profile", "warmup"); empty when absent.
	Phase string
	// Metrics are the scalar metrics in display units (arrays such as
	// inter_chunk_latency are left out).
	Metrics map[string]float64
	// Units are the metrics' units as written.
	Units map[string]string
	// Err is the error's type (or message) when the request failed.
	Err string
}

// Failed reports whether the request failed.
func (r Record) Failed() bool { return r.Err != "" }

// Sample is one telemetry line: numeric fields by name, plus the source's
// label (GPU index and name, or metrics URL).
type Sample struct {
	// AtSec is seconds since the run's start (at_ns), or since the first
	// sample when only wall-clock timestamps are present.
	AtSec  float64
	WallNs int64
	Source string
	Values map[string]float64
}

// LoadOption shapes what Load reads.
type LoadOption func(*loadConfig)

type loadConfig struct{ noRecords bool }

// WithoutRecords leaves the per-request records unread (Run.Records nil):
// for a reader that needs only the summary, whose memory must not grow
// with the run's request count.
func WithoutRecords() LoadOption { return func(c *loadConfig) { c.noRecords = true } }

// Load reads the artifact folder dir. dir may also name a profile_export.jsonl
// or profile_export_aiperf.json file, which is then read on its own (with its
// siblings when they exist). A folder with neither file is an error naming it.
func Load(dir string, opts ...LoadOption) (*Run, error) {
	var cfg loadConfig
	for _, o := range opts {
		o(&cfg)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	summaryPath, recordsPath := filepath.Join(dir, SummaryFile), filepath.Join(dir, RecordsFile)
	if !st.IsDir() {
		base := filepath.Base(dir)
		d := filepath.Dir(dir)
		if strings.HasSuffix(base, ".jsonl") {
			recordsPath, summaryPath = dir, filepath.Join(d, SummaryFile)
		} else {
			summaryPath, recordsPath = dir, filepath.Join(d, RecordsFile)
		}
		dir = d
	}
	run := &Run{Dir: dir, Name: filepath.Base(dir)}
	found := false
	if b, err := ReadSummaryFile(summaryPath); err == nil {
		if run.Summary, err = ParseSummary(b); err != nil {
			return nil, fmt.Errorf("%s: %w", summaryPath, err)
		}
		found = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if cfg.noRecords {
		if _, err := os.Stat(recordsPath); err == nil {
			found = true
		}
	} else if f, err := OpenExport(recordsPath); err == nil {
		run.Records, err = ReadRecords(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", recordsPath, err)
		}
		found = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	sweep, err := loadSweep(run)
	if err != nil {
		return nil, err
	}
	if !found && !sweep {
		return nil, errNoRun(dir)
	}
	for _, t := range []struct {
		name string
		dst  *[]Sample
	}{{GPUFile, &run.GPU}, {ServerMetricsFile, &run.Server}} {
		f, err := OpenExport(filepath.Join(dir, t.name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		*t.dst, err = ReadSamples(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, t.name), err)
		}
	}
	return run, nil
}

// Bounds on the exports read back: a summary is a few hundred KiB (a
// long sweep's a few MiB); a per-request or telemetry JSONL grows with the
// run, read a line at a time.
const (
	MaxSummaryBytes = 64 << 20
	MaxExportBytes  = 16 << 30
)

// ReadSummaryFile reads a summary JSON (or another small export: a sweep's
// or repeats' aggregate, the metrics state) whole, within MaxSummaryBytes,
// refusing what is not a regular file (a symbolic link to /dev/zero, a
// FIFO).
func ReadSummaryFile(path string) ([]byte, error) {
	return bounded.ReadFile(context.Background(), path, MaxSummaryBytes)
}

// OpenExport opens a JSONL export for reading a line at a time, within
// MaxExportBytes, refusing what is not a regular file.
func OpenExport(path string) (*bounded.File, error) {
	return bounded.Open(context.Background(), path, MaxExportBytes)
}

// lineError is a scanner's error, a line over maxLine named as such.
func lineError(err error, n int) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return &bounded.TooLargeError{What: fmt.Sprintf("line %d", n), Limit: maxLine}
	}
	return err
}

// ParseSummary reads a summary export. Metric objects are recognised by
// their "unit" field, at the top level or under "records" (older AIPerf).
func ParseSummary(b []byte) (*Summary, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	s := &Summary{Metrics: map[string]Stat{}, Raw: raw}
	addStats := func(m map[string]json.RawMessage) {
		for k, v := range m {
			v = bytes.TrimSpace(v)
			if len(v) == 0 || v[0] != '{' {
				continue
			}
			var probe struct {
				Unit *string `json:"unit"`
			}
			if json.Unmarshal(v, &probe) != nil || probe.Unit == nil {
				continue
			}
			var st Stat
			if json.Unmarshal(v, &st) == nil {
				s.Metrics[k] = st
			}
		}
	}
	addStats(raw)
	if r, ok := raw["records"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(r, &m) == nil {
			addStats(m)
		}
	}
	// Each optional field is decoded on its own so one odd field does not
	// hide the rest.
	opt := func(key string, dst any) {
		if v, ok := raw[key]; ok {
			_ = json.Unmarshal(v, dst)
		}
	}
	opt("stages", &s.Stages)
	if v, ok := raw["knee"]; ok {
		k := Knee{KneeStage: -1, RecommendedStage: -1}
		if json.Unmarshal(v, &k) == nil && string(v) != "null" {
			s.Knee = &k
		}
	}
	opt("warnings", &s.Warnings)
	opt("error_summary", &s.Errors)
	opt("input_config", &s.InputConfig)
	opt("run_info", &s.RunInfo)
	opt("fingerprint", &s.Fingerprint)
	opt("surge_version", &s.Version)
	if s.Version == "" {
		opt("aiperf_version", &s.Version)
	}
	opt("start_time", &s.StartTime)
	opt("end_time", &s.EndTime)
	opt("was_cancelled", &s.WasCancelled)
	if v, ok := raw["precision"]; ok {
		var p Precision
		if json.Unmarshal(v, &p) == nil {
			s.Precision = &p
		}
	}
	if v, ok := raw["steady_state"]; ok {
		s.Steady = parseSteady(v)
	}
	parseBreakdown(s, raw)
	return s, nil
}

// maxLine bounds one JSONL line (a long generation's inter_chunk_latency
// array is the largest part).
const maxLine = 64 << 20

// ReadRecords reads a per-request JSONL. A line that is not a JSON object is
// an error naming its line number; unknown fields are ignored.
func ReadRecords(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	var out []Record
	n := 1
	for ; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec, err := parseRecord(line)
		if err != nil {
			return out, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, rec)
	}
	return out, lineError(sc.Err(), n)
}

type rawRecord struct {
	Metadata map[string]json.RawMessage `json:"metadata"`
	// Surge holds surge's own fields (files written before they moved
	// out of metadata have them there).
	Surge   map[string]json.RawMessage `json:"surge"`
	Metrics map[string]json.RawMessage `json:"metrics"`
	Error   json.RawMessage            `json:"error"`
}

func parseRecord(line []byte) (Record, error) {
	var rr rawRecord
	if err := json.Unmarshal(line, &rr); err != nil {
		return Record{}, err
	}
	rec := Record{Stage: -1, Metrics: map[string]float64{}, Units: map[string]string{}}
	num := func(key string) (float64, bool) {
		v, ok := rr.Surge[key]
		if !ok {
			v, ok = rr.Metadata[key]
		}
		if !ok {
			return 0, false
		}
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return 0, false
		}
		return f, true
	}
	// Integers above 2^53 lose their last digits as float64; decode the
	// timestamps as integers.
	i64 := func(key string) int64 {
		var n json.Number
		if v, ok := rr.Metadata[key]; ok && json.Unmarshal(v, &n) == nil {
			if i, err := n.Int64(); err == nil {
				return i
			}
			if f, err := n.Float64(); err == nil {
				return int64(f)
			}
		}
		return 0
	}
	rec.StartNs, rec.EndNs = i64("request_start_ns"), i64("request_end_ns")
	if f, ok := num("stage"); ok {
		rec.Stage = int(f)
	}
	if v, ok := rr.Metadata["benchmark_phase"]; ok {
		_ = json.Unmarshal(v, &rec.Phase)
	}
	for tag, v := range rr.Metrics {
		var m struct {
			Value json.RawMessage `json:"value"`
			Unit  string          `json:"unit"`
		}
		if json.Unmarshal(v, &m) != nil {
			continue
		}
		var f float64
		if json.Unmarshal(m.Value, &f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		rec.Metrics[tag], rec.Units[tag] = toDisplay(f, m.Unit)
	}
	if v, ok := rr.Surge["time_breakdown"]; ok {
		recordBreakdown(&rec, v)
	}
	if e := bytes.TrimSpace(rr.Error); len(e) > 0 && !bytes.Equal(e, []byte("null")) {
		var ed struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			Code    any    `json:"code"`
		}
		if json.Unmarshal(e, &ed) == nil {
			rec.Err = ed.Type
			if rec.Err == "" {
				rec.Err = ed.Message
			}
			if rec.Err == "" && ed.Code != nil {
				rec.Err = fmt.Sprint(ed.Code)
			}
		}
		if rec.Err == "" {
			rec.Err = "error"
		}
	}
	return rec, nil
}

// toDisplay converts time units to milliseconds, the unit surge's and
// AIPerf's exports show latencies in, so runs written in ns still compare.
func toDisplay(v float64, unit string) (float64, string) {
	switch unit {
	case "ns":
		return v / 1e6, "ms"
	case "us", "µs":
		return v / 1e3, "ms"
	case "s", "sec":
		return v * 1e3, "ms"
	}
	return v, unit
}

// ReadSamples reads a telemetry JSONL: every numeric field of a line becomes
// a value, gpu_index/gpu_name/url label the source.
func ReadSamples(r io.Reader) ([]Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []Sample
	var firstWall int64
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			return out, fmt.Errorf("line %d: %w", n, err)
		}
		if own, ok := m["surge"].(map[string]any); ok {
			// AIPerf's record shape, surge's flat sample beside.
			m = own
		}
		s := Sample{Values: map[string]float64{}, AtSec: math.NaN()}
		var labels []string
		for k, v := range m {
			switch k {
			case "at_ns":
				if f, err := v.(json.Number).Float64(); err == nil {
					s.AtSec = f / 1e9
				}
				continue
			case "timestamp_ns":
				if n, ok := v.(json.Number); ok {
					if i, err := n.Int64(); err == nil {
						s.WallNs = i
					}
				}
				continue
			case "gpu_index", "url", "gpu_name", "hostname", "source", "gpu_uuid":
				if k != "gpu_uuid" && k != "source" {
					labels = append(labels, k+"="+fmt.Sprint(v))
				}
				continue
			}
			if n, ok := v.(json.Number); ok {
				if f, err := n.Float64(); err == nil {
					s.Values[k] = f
				}
			}
		}
		sort.Strings(labels)
		s.Source = strings.Join(labels, " ")
		if math.IsNaN(s.AtSec) {
			if firstWall == 0 {
				firstWall = s.WallNs
			}
			s.AtSec = float64(s.WallNs-firstWall) / 1e9
		}
		out = append(out, s)
	}
	return out, lineError(sc.Err(), len(out)+1)
}

// Profile returns the records of the profiling phase (warmup left out).
func (r *Run) Profile() []Record {
	out := make([]Record, 0, len(r.Records))
	for _, rec := range r.Records {
		// surge writes "profile", AIPerf "profiling": only warmup is left out.
		if !strings.HasPrefix(rec.Phase, "warmup") {
			out = append(out, rec)
		}
	}
	return out
}

// Values returns metric tag's values over the successful profiling records,
// in file order.
func (r *Run) Values(tag string) []float64 {
	var out []float64
	for _, rec := range r.Profile() {
		if rec.Failed() {
			continue
		}
		if v, ok := rec.Metrics[tag]; ok {
			out = append(out, v)
		}
	}
	return out
}

// Unit returns metric tag's unit from the summary or the records.
func (r *Run) Unit(tag string) string {
	if r.Summary != nil {
		if s, ok := r.Summary.Metrics[tag]; ok && s.Unit != "" {
			return s.Unit
		}
	}
	for _, rec := range r.Records {
		if u, ok := rec.Units[tag]; ok {
			return u
		}
	}
	return ""
}

// LoadAll loads every folder of dirs, in order, a folder of repeated runs
// as its runs, and names the runs uniquely (a second "run" becomes
// "run#2").
func LoadAll(dirs []string) ([]*Run, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no run folder given")
	}
	runs := make([]*Run, 0, len(dirs))
	seen := map[string]int{}
	for _, d := range dirs {
		var batch []*Run
		if labels := RepeatLabels(d); labels != nil {
			// A folder of repeated runs stands for its runs, named
			// <folder>/run_0001 so two such folders' runs stay apart.
			rs, err := LoadRepeats(d, labels)
			if err != nil {
				return nil, err
			}
			for _, r := range rs {
				r.Name = filepath.Base(d) + "/" + r.Name
			}
			batch = rs
		} else {
			r, err := Load(d)
			if err != nil {
				return nil, err
			}
			batch = []*Run{r}
		}
		for _, r := range batch {
			if seen[r.Name]++; seen[r.Name] > 1 {
				r.Name = fmt.Sprintf("%s#%d", r.Name, seen[r.Name])
			}
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// StatOf computes the statistics of vals with linear interpolation between
// closest ranks (numpy's default, as AIPerf) and the population std.
func StatOf(vals []float64) Stat {
	s := slices.Clone(vals)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	mean := sum / float64(len(s))
	var ss float64
	for _, v := range s {
		ss += (v - mean) * (v - mean)
	}
	q := func(p float64) float64 { return stats.Quantile(s, p) }
	return Stat{Avg: mean, Min: s[0], Max: s[len(s)-1], P1: q(.01), P5: q(.05), P10: q(.1), P25: q(.25),
		P50: q(.5), P75: q(.75), P90: q(.9), P95: q(.95), P99: q(.99), Std: math.Sqrt(ss / float64(len(s))), Count: float64(len(s))}
}

// RunLevel computes a run-level metric from the profiling records (for
// AIPerf JSONL on its own); see RunLevelOf.
func (r *Run) RunLevel(tag string) (float64, string, bool) { return RunLevelOf(r.Profile(), tag) }

// RunLevelOf computes a run-level metric of recs: request_count,
// error_request_count, benchmark_duration (last response − first request)
// and request_throughput and output_token_throughput over it. It returns
// the value, its unit and whether it could be computed.
func RunLevelOf(recs []Record, tag string) (float64, string, bool) {
	if len(recs) == 0 {
		return 0, "", false
	}
	var first, last int64
	var ok, errs int
	var osl float64
	for _, rec := range recs {
		if rec.StartNs != 0 && (first == 0 || rec.StartNs < first) {
			first = rec.StartNs
		}
		last = max(last, rec.EndNs)
		if rec.Failed() {
			errs++
			continue
		}
		ok++
		osl += rec.Metrics["output_sequence_length"]
	}
	dur := float64(last-first) / 1e9
	switch tag {
	case "request_count":
		return float64(ok), "requests", true
	case "error_request_count":
		return float64(errs), "requests", true
	case "benchmark_duration":
		return dur, "sec", dur > 0
	case "request_throughput":
		return float64(ok) / dur, "requests/sec", dur > 0
	case "output_token_throughput":
		return osl / dur, "tokens/sec", dur > 0 && osl > 0
	}
	return 0, "", false
}
