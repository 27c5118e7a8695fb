package report

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/export"
)

// warmRun writes the exports of a 60 s closed-loop run whose server is
// three times slower at the start, easing over 10 s, into a folder.
func warmRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f, err := os.Create(filepath.Join(dir, artifact.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	c := metrics.NewCollector(metrics.WithShards(2), metrics.WithOrigin(start), metrics.WithSink(export.NewJSONL(f, start)))
	r := rand.New(rand.NewPCG(1, 2))
	var idx int64
	for u := range 16 {
		at := int64(time.Second) + int64(u)*1e6
		for at < int64(61*time.Second) {
			slow := 1 + 2*max(0, 1-float64(at-1e9)/10e9)
			jitter := math.Exp(0.2 * r.NormFloat64())
			osl := 50 + r.IntN(101)
			tokens := make([]int64, osl)
			tok := at + int64(40e6*slow*jitter)
			for k := range tokens {
				tokens[k] = tok
				tok += int64(20e6 * slow * jitter)
			}
			c.Add(&metrics.Record{Index: idx, Session: idx, Streamed: true, SentNs: at, EndNs: tokens[osl-1], TokenNs: tokens,
				FirstContentNs: tokens[0], Usage: metrics.Usage{Present: true, CompletionTokens: osl}})
			idx++
			at = tokens[osl-1]
		}
	}
	s := c.Close()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := export.JSON(&js, s, export.Run{SurgeVersion: "test", Start: start, End: start.Add(70 * time.Second),
		InputConfig: map[string]any{}, RunInfo: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.SummaryFile), js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestIntervalsAndSteadyState: a run's intervals reach the summary table,
// its steady state the run's line, and its warm-up and drain are shaded on
// every time chart where they happened.
func TestIntervalsAndSteadyState(t *testing.T) {
	t.Parallel()
	runs, err := artifact.LoadAll([]string{warmRun(t)})
	if err != nil {
		t.Fatal(err)
	}
	s := runs[0].Summary
	if s.Precision == nil || s.Steady == nil || !s.Steady.Found || s.Precision.Level != 0.95 {
		t.Fatalf("read back: precision %+v, steady %+v", s.Precision, s.Steady)
	}
	d := Build(runs)
	cis := map[string]string{}
	for _, row := range d.Summary {
		if len(row.CI) == 1 {
			cis[row.Metric] = row.CI[0]
		}
	}
	for _, m := range []string{"time_to_first_token.p50", "time_to_first_token.p99", "request_latency.p90", "output_token_throughput"} {
		if !strings.Contains(cis[m], "±") {
			t.Errorf("%s: interval %q", m, cis[m])
		}
	}
	// 960-odd requests: the p99s rest on fewer than 10 values beyond them.
	if !strings.HasSuffix(cis["time_to_first_token.p99"], "†") || strings.HasSuffix(cis["time_to_first_token.p50"], "†") {
		t.Errorf("thin marks: p99 %q, p50 %q", cis["time_to_first_token.p99"], cis["time_to_first_token.p50"])
	}
	if st := d.Runs[0].Steady; !strings.HasPrefix(st, "steady state ") || !strings.Contains(st, "MSER-5") || !strings.Contains(st, "TTFT p50") {
		t.Errorf("steady line %q", st)
	}
	for _, c := range d.Charts {
		if c.Group != "timelines" {
			continue
		}
		if len(c.Shades) != 2 || c.Shades[0].Label != "warm-up" || c.Shades[1].Label != "drain" {
			t.Fatalf("chart %s: shades %+v", c.ID, c.Shades)
		}
		w, dr := c.Shades[0], c.Shades[1]
		// The timeline starts at the first request; the warm-up ends once
		// the slow requests have (10–22 s), the drain runs to the end.
		if math.Abs(float64(w.From)) > 0.01 || w.To < 10 || w.To > 22 || dr.From < 50 || dr.To < dr.From || float64(dr.To-w.From) < float64(s.Steady.RunSec)-0.01 {
			t.Errorf("chart %s: warm-up %v–%v s, drain %v–%v s", c.ID, w.From, w.To, dr.From, dr.To)
		}
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<span class="ci">`, `class="steady"`, `"shades":[{"run":0,"from":0,"to":`} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
