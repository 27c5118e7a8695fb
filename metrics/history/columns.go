package history

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// timeLayout is how times are stored: UTC, fixed width (so text order is
// time order) and read by SQLite's date functions.
const timeLayout = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(timeLayout)
}

// col is one column of runs: its name, the value a row stores in it and
// where a read puts it back.
type col struct {
	name string
	get  func(r *Row) any
	scan func(r *Row) any
}

// num stores a float, NaN as NULL.
func num(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

// text stores a string, "" as NULL.
func text(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullFloat reads a REAL column, NULL as NaN.
type nullFloat struct{ f *float64 }

func (n nullFloat) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.f = math.NaN()
	case float64:
		*n.f = x
	case int64:
		*n.f = float64(x)
	default:
		return fmt.Errorf("want a number, got %T", v)
	}
	return nil
}

// nullString reads a TEXT column, NULL as "".
type nullString struct{ s *string }

func (n nullString) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.s = ""
	case string:
		*n.s = x
	case []byte:
		*n.s = string(x)
	default:
		return fmt.Errorf("want text, got %T", v)
	}
	return nil
}

// nullInt reads an INTEGER column, NULL as 0.
type nullInt[T int | int64] struct{ i *T }

func (n nullInt[T]) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.i = 0
	case int64:
		*n.i = T(x)
	case float64:
		*n.i = T(x)
	default:
		return fmt.Errorf("want an integer, got %T", v)
	}
	return nil
}

// nullTime reads a time column written by formatTime.
type nullTime struct{ t *time.Time }

func (n nullTime) Scan(v any) error {
	var s string
	if err := (nullString{&s}).Scan(v); err != nil {
		return err
	}
	if s == "" {
		*n.t = time.Time{}
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*n.t = t
	return nil
}

// intervalEnd reads one end of an interval stored in two columns; a
// non-NULL end makes the interval.
type intervalEnd struct {
	iv *(*Interval)
	hi bool
}

func (e intervalEnd) Scan(v any) error {
	if v == nil {
		return nil
	}
	var f float64
	if err := (nullFloat{&f}).Scan(v); err != nil {
		return err
	}
	if *e.iv == nil {
		*e.iv = &Interval{Lo: math.NaN(), Hi: math.NaN()}
	}
	if e.hi {
		(*e.iv).Hi = f
	} else {
		(*e.iv).Lo = f
	}
	return nil
}

func ivEnd(iv *Interval, hi bool) any {
	if iv == nil {
		return nil
	}
	if hi {
		return num(iv.Hi)
	}
	return num(iv.Lo)
}

// boolInt stores a bool as 0 or 1.
type boolInt struct{ b *bool }

func (b boolInt) Scan(v any) error {
	var i int64
	if err := (nullInt[int64]{&i}).Scan(v); err != nil {
		return err
	}
	*b.b = i != 0
	return nil
}

func (b boolInt) Value() (driver.Value, error) {
	if *b.b {
		return int64(1), nil
	}
	return int64(0), nil
}

func floatCol(name string, f func(r *Row) *float64) col {
	return col{name, func(r *Row) any { return num(*f(r)) }, func(r *Row) any { return nullFloat{f(r)} }}
}

func textCol(name string, f func(r *Row) *string) col {
	return col{name, func(r *Row) any { return text(*f(r)) }, func(r *Row) any { return nullString{f(r)} }}
}

func intCol(name string, f func(r *Row) *int) col {
	return col{name, func(r *Row) any { return int64(*f(r)) }, func(r *Row) any { return nullInt[int]{f(r)} }}
}

func int64Col(name string, f func(r *Row) *int64) col {
	return col{name, func(r *Row) any { return *f(r) }, func(r *Row) any { return nullInt[int64]{f(r)} }}
}

func timeCol(name string, f func(r *Row) *time.Time) col {
	return col{name, func(r *Row) any { return formatTime(*f(r)) }, func(r *Row) any { return nullTime{f(r)} }}
}

func ivCols(name, unit string, f func(r *Row) **Interval) []col {
	return []col{
		{name + "_lo" + unit, func(r *Row) any { return ivEnd(*f(r), false) }, func(r *Row) any { return intervalEnd{f(r), false} }},
		{name + "_hi" + unit, func(r *Row) any { return ivEnd(*f(r), true) }, func(r *Row) any { return intervalEnd{f(r), true} }},
	}
}

// columns are the runs table's columns but id, in the schema's order.
var columns = func() []col {
	cs := []col{
		textCol("run_uid", func(r *Row) *string { return &r.RunUID }),
		textCol("benchmark_id", func(r *Row) *string { return &r.BenchmarkID }),
		textCol("kind", func(r *Row) *string { return &r.Kind }),
		intCol("repeat_index", func(r *Row) *int { return &r.Repeat }),
		intCol("stage_index", func(r *Row) *int { return &r.Stage }),
		timeCol("recorded_at", func(r *Row) *time.Time { return &r.RecordedAt }),
		timeCol("started_at", func(r *Row) *time.Time { return &r.StartedAt }),
		timeCol("ended_at", func(r *Row) *time.Time { return &r.EndedAt }),
		textCol("label", func(r *Row) *string { return &r.Label }),
		textCol("artifact_dir", func(r *Row) *string { return &r.Dir }),
		textCol("model", func(r *Row) *string { return &r.Model }),
		textCol("endpoint_type", func(r *Row) *string { return &r.EndpointType }),
		textCol("endpoint", func(r *Row) *string { return &r.Endpoint }),
		textCol("target", func(r *Row) *string { return &r.Target }),
		textCol("engine", func(r *Row) *string { return &r.Engine }),
		textCol("server_version", func(r *Row) *string { return &r.ServerVersion }),
		textCol("gpu", func(r *Row) *string { return &r.GPU }),
		textCol("server_hash", func(r *Row) *string { return &r.ServerHash }),
		textCol("workload_hash", func(r *Row) *string { return &r.Workload }),
		textCol("config_hash", func(r *Row) *string { return &r.Config }),
		textCol("dataset_hash", func(r *Row) *string { return &r.Dataset }),
		textCol("tokenizer_hash", func(r *Row) *string { return &r.Tokenizer }),
		textCol("load_mode", func(r *Row) *string { return &r.LoadMode }),
		floatCol("load_value", func(r *Row) *float64 { return &r.LoadValue }),
		textCol("surge_version", func(r *Row) *string { return &r.SurgeVersion }),
		intCol("client_cpus", func(r *Row) *int { return &r.ClientCPUs }),
		intCol("client_gomaxprocs", func(r *Row) *int { return &r.ClientGOMAXPROCS }),
		int64Col("request_count", func(r *Row) *int64 { return &r.Requests }),
		int64Col("error_count", func(r *Row) *int64 { return &r.Errors }),
		floatCol("duration_s", func(r *Row) *float64 { return &r.DurationSec }),
		floatCol("request_throughput", func(r *Row) *float64 { return &r.RequestThroughput }),
		floatCol("output_token_throughput", func(r *Row) *float64 { return &r.OutputTokenThroughput }),
	}
	cs = append(cs, ivCols("output_token_throughput", "", func(r *Row) **Interval { return &r.OutputTokenThroughputCI })...)
	cs = append(cs,
		floatCol("total_token_throughput", func(r *Row) *float64 { return &r.TotalTokenThroughput }),
		floatCol("ttft_p50_ms", func(r *Row) *float64 { return &r.TTFTP50 }),
		floatCol("ttft_p95_ms", func(r *Row) *float64 { return &r.TTFTP95 }))
	cs = append(cs, ivCols("ttft_p95", "_ms", func(r *Row) **Interval { return &r.TTFTP95CI })...)
	cs = append(cs,
		floatCol("ttft_p99_ms", func(r *Row) *float64 { return &r.TTFTP99 }),
		floatCol("itl_p50_ms", func(r *Row) *float64 { return &r.ITLP50 }),
		floatCol("itl_p99_ms", func(r *Row) *float64 { return &r.ITLP99 }),
		floatCol("latency_p50_ms", func(r *Row) *float64 { return &r.LatencyP50 }),
		floatCol("latency_p95_ms", func(r *Row) *float64 { return &r.LatencyP95 }))
	cs = append(cs, ivCols("latency_p95", "_ms", func(r *Row) **Interval { return &r.LatencyP95CI })...)
	return append(cs,
		floatCol("latency_p99_ms", func(r *Row) *float64 { return &r.LatencyP99 }),
		floatCol("cost_per_hour_usd", func(r *Row) *float64 { return &r.CostPerHour }),
		floatCol("cost_per_1m_output_tokens_usd", func(r *Row) *float64 { return &r.CostPerMOutputTokens }),
		floatCol("cost_per_1m_total_tokens_usd", func(r *Row) *float64 { return &r.CostPerMTotalTokens }),
		col{"was_cancelled", func(r *Row) any { return boolInt{&r.Cancelled} }, func(r *Row) any { return boolInt{&r.Cancelled} }},
	)
}()

func columnNames(prefix string) string {
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = prefix + c.name
	}
	return strings.Join(names, ", ")
}

var (
	insertRun = "INSERT OR IGNORE INTO runs (" + columnNames("") + ") VALUES (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + ")"
	selectRuns = "SELECT runs.id, " + columnNames("runs.") + " FROM runs"
)

func (r *Row) values() []any {
	out := make([]any, len(columns))
	for i, c := range columns {
		out[i] = c.get(r)
	}
	return out
}

func (r *Row) targets() []any {
	out := make([]any, 0, len(columns)+1)
	out = append(out, &r.ID)
	for _, c := range columns {
		out = append(out, c.scan(r))
	}
	return out
}

// MarshalJSON writes the row with the database's column names (NULL
// values as null), its id first and its statistics, when read, last.
func (r Row) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString(`{"id":`)
	b.WriteString(strconv.FormatInt(r.ID, 10))
	for _, c := range columns {
		v := c.get(&r)
		if vv, ok := v.(driver.Valuer); ok {
			var err error
			if v, err = vv.Value(); err != nil {
				return nil, err
			}
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"` + c.name + `":`)
		b.Write(enc)
	}
	if r.Metrics != nil {
		b.WriteString(`,"metrics":[`)
		first := true
		for _, m := range r.Metrics {
			if num(m.Value) == nil {
				continue
			}
			enc, err := json.Marshal(map[string]any{"metric": m.Metric, "stat": m.Stat, "value": m.Value, "unit": m.Unit})
			if err != nil {
				return nil, err
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.Write(enc)
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
