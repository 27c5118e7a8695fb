package telemetry

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Server-metrics file names, AIPerf's.
const (
	// ServerMetricsJSONFile is AIPerf's server-metrics summary (its
	// ServerMetricsExportData).
	ServerMetricsJSONFile = "server_metrics_export.json"
	// ServerMetricsCSVFile is the same summary as a CSV, a section per
	// Prometheus type.
	ServerMetricsCSVFile = "server_metrics_export.csv"
)

// ExportHeader is what the server-metrics files say of the run beside
// the metrics.
type ExportHeader struct {
	// AIPerfVersion is the AIPerf release whose shapes the files follow;
	// SurgeVersion surge's own.
	AIPerfVersion, SurgeVersion string
	// BenchmarkID is the run's id ("": omitted).
	BenchmarkID string
	// InputConfig is the run's configuration, secrets already redacted.
	InputConfig any
}

// ServerMetricsSchemaVersion is the schema AIPerf's ServerMetricsExportData
// declares for server_metrics_export.json and .csv (it versions them apart
// from profile_export_aiperf.json's 1.5).
const ServerMetricsSchemaVersion = "1.0"

// WriteJSON writes server_metrics_export.json in AIPerf's shape:
// schema_version, aiperf_version, benchmark_id, summary (endpoints and the
// span, each endpoint's scrape statistics), metrics by family name (type,
// description, unit, a series per endpoint and label set with its stats)
// and input_config. surge_version sits beside aiperf_version.
func (m *ServerExport) WriteJSON(w io.Writer, run ExportHeader) error {
	o := &ordered{}
	o.set("schema_version", ServerMetricsSchemaVersion)
	o.set("aiperf_version", run.AIPerfVersion)
	o.set("surge_version", run.SurgeVersion)
	if run.BenchmarkID != "" {
		o.set("benchmark_id", run.BenchmarkID)
	}
	sum := &ordered{}
	sum.set("endpoints_configured", orEmpty(m.Configured))
	sum.set("endpoints_successful", orEmpty(m.Successful))
	sum.set("start_time", m.Start.UTC().Format(time.RFC3339Nano))
	sum.set("end_time", m.End.UTC().Format(time.RFC3339Nano))
	if len(m.Endpoints) > 0 {
		info := &ordered{}
		for _, u := range slices.Sorted(maps.Keys(m.Endpoints)) {
			info.set(u, m.Endpoints[u])
		}
		sum.set("endpoint_info", info)
	}
	o.set("summary", sum)
	metrics := &ordered{}
	for _, name := range slices.Sorted(maps.Keys(m.Metrics)) {
		metrics.set(name, m.Metrics[name])
	}
	o.set("metrics", metrics)
	if run.InputConfig != nil {
		o.set("input_config", run.InputConfig)
	} else {
		o.set("input_config", map[string]any{})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(o)
}

// Stat columns of each section of AIPerf's server-metrics CSV, in its
// order (they are SeriesStats' JSON names).
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var (
	gaugeStatKeys     = []string{"avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}
	counterStatKeys   = []string{"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"}
	histogramStatKeys = []string{"count", "count_rate", "sum", "sum_rate", "avg", "p1_estimate", "p5_estimate",
		"p10_estimate", "p25_estimate", "p50_estimate", "p75_estimate", "p90_estimate", "p95_estimate", "p99_estimate"}
)

// csvRow is one series in the CSV, with the family it belongs to.
type csvRow struct {
	endpoint, name, unit, help string
	s                          Series
}

func (r csvRow) info() bool { return strings.HasSuffix(r.name, "_info") }

// WriteCSV writes server_metrics_export.csv as AIPerf does: a
// comment header (version, schema, benchmark_id), then a section per type
// (gauge, counter, histogram; a blank line between), each with Endpoint,
// Type, Metric, Unit, the type's stats, a column per label and
// Description (histograms add their buckets, "le=count;…"), and last the
// *_info families, one row per label (Endpoint, Metric, Key, Value,
// Description). Integers print as integers, other numbers with 4 decimals,
// a stat the series lacks as an empty cell.
func (m *ServerExport) WriteCSV(w io.Writer, run ExportHeader) error {
	var head strings.Builder
	head.WriteString("# AIPerf Server Metrics Export (CSV)\n")
	fmt.Fprintf(&head, "# aiperf_version: %s\n", run.AIPerfVersion)
	fmt.Fprintf(&head, "# schema_version: %s\n", ServerMetricsSchemaVersion)
	fmt.Fprintf(&head, "# benchmark_id: %s\n", cmp.Or(run.BenchmarkID, "None"))
	head.WriteString("# Note: Same benchmark_id and version appear in JSON and Parquet exports\n")
	fmt.Fprintf(&head, "# surge_version: %s\n#\n", run.SurgeVersion)
	if _, err := io.WriteString(w, head.String()); err != nil {
		return err
	}
	byType := map[string][]csvRow{}
	var infos []csvRow
	for _, name := range slices.Sorted(maps.Keys(m.Metrics)) {
		md := m.Metrics[name]
		for _, s := range md.Series {
			r := csvRow{endpoint: EndpointName(s.EndpointURL), name: name, unit: md.Unit, help: md.Description, s: s}
			if md.Type == TypeGauge && r.info() {
				infos = append(infos, r)
				continue
			}
			byType[md.Type] = append(byType[md.Type], r)
		}
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true // Python's csv module ends rows so
	first := true
	for _, typ := range []string{TypeGauge, TypeCounter, TypeHistogram} {
		rows := byType[typ]
		if len(rows) == 0 {
			continue
		}
		if !first {
			if err := cw.Write(nil); err != nil {
				return err
			}
		}
		first = false
		if err := writeSection(cw, typ, rows); err != nil {
			return err
		}
	}
	if len(infos) > 0 {
		if !first {
			if err := cw.Write(nil); err != nil {
				return err
			}
		}
		if err := writeInfoSection(cw, infos); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeSection(cw *csv.Writer, typ string, rows []csvRow) error {
	keys := map[string][]string{TypeGauge: gaugeStatKeys, TypeCounter: counterStatKeys,
		TypeHistogram: histogramStatKeys}[typ]
	labels := labelColumns(rows)
	header := append(append(append([]string{"Endpoint", "Type", "Metric", "Unit"}, keys...), labels...), "Description")
	if typ == TypeHistogram {
		header = append(header, "buckets")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	slices.SortStableFunc(rows, func(a, b csvRow) int {
		return cmp.Or(strings.Compare(fillPattern(a, labels), fillPattern(b, labels)), strings.Compare(a.name, b.name),
			strings.Compare(a.endpoint, b.endpoint), strings.Compare(labelText(a.s.Labels), labelText(b.s.Labels)))
	})
	for _, r := range rows {
		rec := []string{r.endpoint, typ, r.name, r.unit}
		stats := statValues(r.s.Stats)
		for _, k := range keys {
			rec = append(rec, stats[k])
		}
		for _, l := range labels {
			rec = append(rec, r.s.Labels[l])
		}
		rec = append(rec, r.help)
		if typ == TypeHistogram {
			rec = append(rec, bucketText(r.s.Buckets))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	return nil
}

func writeInfoSection(cw *csv.Writer, rows []csvRow) error {
	if err := cw.Write([]string{"Endpoint", "Metric", "Key", "Value", "Description"}); err != nil {
		return err
	}
	slices.SortStableFunc(rows, func(a, b csvRow) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.endpoint, b.endpoint))
	})
	for _, r := range rows {
		for _, k := range slices.Sorted(maps.Keys(r.s.Labels)) {
			if err := cw.Write([]string{r.endpoint, r.name, k, r.s.Labels[k], r.help}); err != nil {
				return err
			}
		}
	}
	return nil
}

// statValues formats a series' stats by JSON name: integers as integers,
// other numbers with 4 decimals (AIPerf's _format_number); absent ones
// are missing from the map (an empty cell).
func statValues(st SeriesStats) map[string]string {
	out := map[string]string{}
	v := reflect.ValueOf(st)
	t := v.Type()
	for i := range t.NumField() {
		f := v.Field(i)
		if f.IsNil() {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		switch x := f.Elem().Interface().(type) {
		case int64:
			out[name] = strconv.FormatInt(x, 10)
		case float64:
			out[name] = strconv.FormatFloat(x, 'f', 4, 64)
		}
	}
	return out
}

// bucketText is a histogram's buckets as AIPerf's CSV writes them,
// "le=count" joined by ";", in increasing bound.
func bucketText(b map[string]int64) string {
	les := slices.Collect(maps.Keys(b))
	slices.SortFunc(les, func(x, y string) int {
		fx, _ := strconv.ParseFloat(x, 64) // "+Inf" parses as +Inf
		fy, _ := strconv.ParseFloat(y, 64)
		return cmp.Compare(fx, fy)
	})
	parts := make([]string, len(les))
	for i, le := range les {
		parts[i] = le + "=" + strconv.FormatInt(b[le], 10)
	}
	return strings.Join(parts, ";")
}

// labelColumns orders the label columns as AIPerf does, to keep the CSV
// dense: labels that occur together form a family (union-find); families
// in the order of their least name, and in each, the labels only one
// label set has before those several share, each group sorted.
func labelColumns(rows []csvRow) []string {
	var sets [][]string
	all := map[string]bool{}
	for _, r := range rows {
		if len(r.s.Labels) == 0 {
			continue
		}
		ks := slices.Sorted(maps.Keys(r.s.Labels))
		sets = append(sets, ks)
		for _, k := range ks {
			all[k] = true
		}
	}
	if len(all) == 0 {
		return nil
	}
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok {
			parent[x] = x
			return x
		}
		if p == x {
			return x
		}
		return find(p)
	}
	for _, ks := range sets {
		for i := 0; i+1 < len(ks); i++ {
			parent[find(ks[i+1])] = find(ks[i])
		}
	}
	fams := map[string][]string{}
	for k := range all {
		r := find(k)
		fams[r] = append(fams[r], k)
	}
	shared := map[string]bool{}
	for k := range all {
		n := 0
		for _, ks := range sets {
			if slices.Contains(ks, k) {
				n++
			}
		}
		shared[k] = n > 1
	}
	groups := slices.Collect(maps.Values(fams))
	for _, g := range groups {
		slices.Sort(g)
	}
	slices.SortFunc(groups, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	var out []string
	for _, g := range groups {
		for _, k := range g {
			if !shared[k] {
				out = append(out, k)
			}
		}
		for _, k := range g {
			if shared[k] {
				out = append(out, k)
			}
		}
	}
	return out
}

// fillPattern marks which label columns a row fills ("1") or leaves empty
// ("0"): AIPerf sorts rows by it first, so alike rows cluster.
func fillPattern(r csvRow, labels []string) string {
	b := make([]byte, len(labels))
	for i, l := range labels {
		b[i] = '0'
		if _, ok := r.s.Labels[l]; ok {
			b[i] = '1'
		}
	}
	return string(b)
}

func labelText(l map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(l)) {
		b.WriteString(k + "=" + l[k] + ",")
	}
	return b.String()
}

// ordered is a JSON object that keeps its keys in insertion order, so
// the file reads in AIPerf's order and goldens are stable.
type ordered struct {
	keys []string
	vals []any
}

func (o *ordered) set(k string, v any) { o.keys, o.vals = append(o.keys, k), append(o.vals, v) }

// MarshalJSON writes the keys in insertion order.
func (o *ordered) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}
