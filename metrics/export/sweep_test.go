package export

import (
	"bytes"
	"encoding/json"
	"github.com/surgebench/surge/metrics/export/shape"
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics"
)

// sweepAggregateShape is AIPerf's sweep aggregate JSON (its
// AggregateSweepJsonExporter over SweepAnalyzer.compute, docs/api/
// sweep-aggregates.md); knee is surge's addition.
var sweepAggregateShape = func() shape.Shape {
	params := shape.Dict(shape.Number)
	return shape.Model{
		Fields: map[string]shape.Shape{
			"aggregation_type":    shape.String,
			"num_profile_runs":    shape.Integer,
			"num_successful_runs": shape.Integer,
			"failed_runs":         shape.List(shape.Model{Fields: map[string]shape.Shape{"label": shape.String, "error": shape.String}}),
			"metadata": shape.Model{Fields: map[string]shape.Shape{
				"sweep_parameters": shape.List(shape.Model{Fields: map[string]shape.Shape{"name": shape.String, "values": shape.List(shape.Number)}}),
				"num_combinations": shape.Integer,
			}},
			"per_combination_metrics": shape.List(shape.Model{Fields: map[string]shape.Shape{
				"parameters": params,
				"metrics": shape.Dict(shape.Model{
					Fields:   map[string]shape.Shape{"mean": shape.Number, "std": shape.Number, "min": shape.Number, "max": shape.Number, "cv": shape.Number, "ci_low": shape.Number, "ci_high": shape.Number, "unit": shape.String},
					Optional: []string{"std", "min", "max", "cv", "ci_low", "ci_high"},
				}),
			}}),
			"best_configurations": shape.Dict(shape.Model{Fields: map[string]shape.Shape{"parameters": params, "metric": shape.Number, "unit": shape.String}}),
			"pareto_optimal":      shape.List(params),
		},
		Extra: map[string]shape.Shape{"knee": shape.OrNull(shape.Model{Fields: map[string]shape.Shape{
			"parameter": shape.String, "knee_value": shape.Number, "knee_label": shape.String, "recommended_value": shape.Number, "recommended_label": shape.String,
		}})},
	}
}()

// stageSummary is a made-up value of a sweep: its throughput and its
// TTFT and latency percentiles.
func stageSummary(reqs, errs, tput, ttftP99, latP99 float64) *metrics.Summary {
	s := &metrics.Summary{Metrics: map[metrics.Tag]metrics.Distribution{}, Run: map[metrics.Tag]float64{
		metrics.RequestCount: reqs, metrics.ErrorRequestCount: errs, metrics.RequestThroughput: tput,
		metrics.OutputTokenThroughput: 100 * tput,
	}}
	if reqs > 0 {
		s.Metrics[metrics.TTFT] = metrics.Distribution{Unit: "ms", Avg: ttftP99 / 2, Min: 1, Max: ttftP99 + 1, P50: ttftP99 / 2, P90: ttftP99 * 0.9, P95: ttftP99 * 0.95, P99: ttftP99, Std: 1.5, Count: int64(reqs)}
		s.Metrics[metrics.RequestLatency] = metrics.Distribution{Unit: "ms", Avg: latP99 / 2, Min: 2, Max: latP99 + 1, P50: latP99 / 2, P99: latP99, Count: int64(reqs)}
	}
	return s
}

func goldenSweep() Sweep {
	return Sweep{Parameter: "concurrency", Knee: 3, Operating: 2, Values: []SweepValue{
		{Label: "concurrency_1", Value: 1, Integer: true, Summary: stageSummary(16, 0, 10.5, 25, 300)},
		{Label: "concurrency_2", Value: 2, Integer: true, Summary: stageSummary(16, 0, 20.25, 24, 310)},
		{Label: "concurrency_4", Value: 4, Integer: true, Summary: stageSummary(16, 0, 38, 60, 420)},
		{Label: "concurrency_8", Value: 8, Integer: true, Summary: stageSummary(16, 1, 39, 180, 800)},
		{Label: "concurrency_16", Value: 16, Integer: true, Summary: stageSummary(0, 16, 0, 0, 0)},
	}}
}

// TestGoldenSweepAggregate pins both sweep aggregate files and checks the
// JSON against AIPerf's model: the throughput/latency Pareto set (2 beats 1
// on both; 4 and 8 trade latency for throughput), the best values, the
// failed value left out of the analysis.
func TestGoldenSweepAggregate(t *testing.T) {
	var js, csv bytes.Buffer
	if err := SweepJSON(&js, goldenSweep()); err != nil {
		t.Fatal(err)
	}
	if err := SweepCSV(&csv, goldenSweep()); err != nil {
		t.Fatal(err)
	}
	golden(t, SweepJSONFile, js.Bytes())
	golden(t, SweepCSVFile, csv.Bytes())
	checkShape(t, SweepJSONFile, js.Bytes(), sweepAggregateShape)

	var doc struct {
		NumRuns    int                             `json:"num_profile_runs"`
		NumOK      int                             `json:"num_successful_runs"`
		FailedRuns []struct{ Label, Error string } `json:"failed_runs"`
		Best       map[string]struct {
			Parameters map[string]float64
			Metric     float64
		} `json:"best_configurations"`
		Pareto []map[string]float64 `json:"pareto_optimal"`
		Knee   struct {
			KneeValue        float64 `json:"knee_value"`
			RecommendedValue float64 `json:"recommended_value"`
		}
		PerCombination []struct {
			Metrics map[string]struct{ Mean float64 }
		} `json:"per_combination_metrics"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.NumRuns != 5 || doc.NumOK != 4 || len(doc.PerCombination) != 4 || len(doc.FailedRuns) != 1 ||
		doc.FailedRuns[0].Label != "concurrency_16" || doc.FailedRuns[0].Error != "All 16 requests failed" {
		t.Errorf("runs %d ok %d combinations %d failed %+v", doc.NumRuns, doc.NumOK, len(doc.PerCombination), doc.FailedRuns)
	}
	if b := doc.Best["best_throughput"]; b.Parameters["concurrency"] != 8 || b.Metric != 39 {
		t.Errorf("best throughput %+v, want concurrency 8 at 39", b)
	}
	if b := doc.Best["best_latency_p99"]; b.Parameters["concurrency"] != 2 || b.Metric != 24 {
		t.Errorf("best latency %+v, want concurrency 2 at 24 ms (TTFT p99)", b)
	}
	var pareto []float64
	for _, p := range doc.Pareto {
		pareto = append(pareto, p["concurrency"])
	}
	if got := pareto; len(got) != 3 || got[0] != 2 || got[1] != 4 || got[2] != 8 {
		t.Errorf("pareto %v, want [2 4 8] (1 is beaten by 2 on both)", got)
	}
	if doc.Knee.KneeValue != 8 || doc.Knee.RecommendedValue != 4 {
		t.Errorf("knee %+v", doc.Knee)
	}
	if m := doc.PerCombination[0].Metrics; m["time_to_first_token_p99"].Mean != 25 || m["request_throughput_avg"].Mean != 10.5 {
		t.Errorf("flattened metrics: ttft p99 %v, throughput %v", m["time_to_first_token_p99"], m["request_throughput_avg"])
	}
	lines := strings.Split(csv.String(), "\r\n")
	if !strings.HasPrefix(lines[0], "concurrency,error_request_count_avg_mean,") || lines[1][:2] != "1," {
		t.Errorf("csv starts %q / %q", lines[0][:40], lines[1])
	}
}

// TestSweepWithoutLatency: a sweep whose values have no latency metric
// (embeddings without TTFT keep request_latency; here none at all) has no
// Pareto set and only the throughput best, as AIPerf's analyzer drops the
// objectives it cannot judge.
func TestSweepWithoutLatency(t *testing.T) {
	sw := Sweep{Parameter: "request_rate", Knee: -1, Operating: -1, Values: []SweepValue{
		{Label: "request_rate_5.0", Value: 5, Summary: &metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 10, metrics.RequestThroughput: 5}}},
		{Label: "request_rate_7.5", Value: 7.5, Summary: &metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 10, metrics.RequestThroughput: 7}}},
	}}
	var js, csv bytes.Buffer
	if err := SweepJSON(&js, sw); err != nil {
		t.Fatal(err)
	}
	checkShape(t, "rate sweep", js.Bytes(), sweepAggregateShape)
	if err := SweepCSV(&csv, sw); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"request_rate": 7.5`, `"pareto_optimal": []`, `"knee": null`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, js.String())
		}
	}
	for _, want := range []string{"\r\n5.0,", "Best Throughput,7.5,7.00,requests/sec\r\n", "Pareto Optimal Points\r\nNone\r\n"} {
		if !strings.Contains(csv.String(), want) {
			t.Errorf("CSV lacks %q:\n%s", want, csv.String())
		}
	}
}
