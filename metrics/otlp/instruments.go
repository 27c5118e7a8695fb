package otlp

import (
	"context"
	"math"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"

	"github.com/surgebench/surge/metrics"
)

// Metric names of surge's own: surge.<AIPerf's tag> for each statistic,
// surge.requests.* and surge.output_tokens for the progress.
const (
	namePrefix   = "surge."
	nameStarted  = "surge.requests.started"
	nameFinished = "surge.requests.finished"
	nameFailed   = "surge.requests.failed"
	nameInFlight = "surge.requests.in_flight"
	nameTokens   = "surge.output_tokens"
)

// Attribute keys of surge's own on the statistics: which statistic of a
// distribution (avg, p50, …), over which window (run: the whole run so
// far; 10s: the last ten seconds).
const (
	keyStatistic = attribute.Key("surge.statistic")
	keyWindow    = attribute.Key("surge.window")
	keyStage     = attribute.Key("surge.stage")
)

// instruments registers the GenAI histograms and the observed metrics,
// read at each collection from the latest snapshot, or from the final
// summary once Close has it.
func (e *Exporter) instruments() error {
	genAI := e.genAIAttributes()
	e.okOpt = metric.WithAttributeSet(attribute.NewSet(genAI...))
	e.inputOpt = metric.WithAttributeSet(attribute.NewSet(append(genAI[:len(genAI):len(genAI)], attribute.String("gen_ai.token.type", string(genaiconv.TokenTypeInput)))...))
	e.outputOpt = metric.WithAttributeSet(attribute.NewSet(append(genAI[:len(genAI):len(genAI)], attribute.String("gen_ai.token.type", string(genaiconv.TokenTypeOutput)))...))
	e.spanAttrs = e.common
	var observed []metric.Observable
	var progress struct{ started, finished, failed, inFlight, tokens metric.Int64Observable }
	if e.o.progress {
		var err error
		if progress.started, err = e.meter.Int64ObservableCounter(nameStarted, metric.WithUnit("{request}"), metric.WithDescription("profile requests sent")); err != nil {
			return err
		}
		if progress.finished, err = e.meter.Int64ObservableCounter(nameFinished, metric.WithUnit("{request}"), metric.WithDescription("profile requests ended, failed ones included")); err != nil {
			return err
		}
		if progress.failed, err = e.meter.Int64ObservableCounter(nameFailed, metric.WithUnit("{request}"), metric.WithDescription("profile requests that failed")); err != nil {
			return err
		}
		if progress.inFlight, err = e.meter.Int64ObservableGauge(nameInFlight, metric.WithUnit("{request}"), metric.WithDescription("requests on the wire now")); err != nil {
			return err
		}
		if progress.tokens, err = e.meter.Int64ObservableCounter(nameTokens, metric.WithUnit("{token}"), metric.WithDescription("output tokens streamed so far")); err != nil {
			return err
		}
		observed = append(observed, progress.started, progress.finished, progress.failed, progress.inFlight, progress.tokens)
	}
	gauges := map[metrics.Tag]metric.Float64Observable{}
	if e.o.statistics {
		var err error
		if e.histograms.duration, err = genaiconv.NewClientOperationDuration(e.meter); err != nil {
			return err
		}
		if e.histograms.tokens, err = genaiconv.NewClientTokenUsage(e.meter); err != nil {
			return err
		}
		if e.histograms.firstChunk, err = genaiconv.NewClientOperationTimeToFirstChunk(e.meter); err != nil {
			return err
		}
		if e.histograms.perChunk, err = genaiconv.NewClientOperationTimePerOutputChunk(e.meter); err != nil {
			return err
		}
		for _, defs := range [][]metrics.Def{metrics.RequestDefs, metrics.RunDefs} {
			for _, d := range defs {
				if _, ok := gauges[d.Tag]; ok {
					continue
				}
				g, err := e.meter.Float64ObservableGauge(namePrefix+string(d.Tag), metric.WithUnit(unit(d.Unit)), metric.WithDescription(d.Name))
				if err != nil {
					return err
				}
				gauges[d.Tag] = g
				observed = append(observed, g)
			}
		}
	}
	if len(observed) == 0 {
		return nil
	}
	common := attribute.NewSet(e.common...)
	_, err := e.meter.RegisterCallback(func(_ context.Context, ob metric.Observer) error {
		// Once closing, the collector may be gone: its last snapshot
		// stands for the progress, the summary for the statistics.
		var snap metrics.Snapshot
		if e.closing.Load() {
			snap = e.last
		} else {
			snap = e.snapshot()
			e.last = snap
		}
		s := e.final.Load()
		if s != nil {
			snap.Finished = int64(s.Run[metrics.RequestCount] + s.Run[metrics.ErrorRequestCount])
			snap.Failed, snap.InFlight = int64(s.Run[metrics.ErrorRequestCount]), 0
			snap.Started = max(snap.Started, snap.Finished)
		}
		if e.o.progress {
			set := metric.WithAttributeSet(common)
			ob.ObserveInt64(progress.started, snap.Started, set)
			ob.ObserveInt64(progress.finished, snap.Finished, set)
			ob.ObserveInt64(progress.failed, snap.Failed, set)
			ob.ObserveInt64(progress.inFlight, snap.InFlight, set)
			ob.ObserveInt64(progress.tokens, snap.OutputTokens, set)
		}
		switch {
		case !e.o.statistics:
		case s != nil:
			e.observeSummary(ob, gauges, s)
		default:
			e.observeSnapshot(ob, gauges, &snap)
		}
		return nil
	}, observed...)
	return err
}

// liveStatistics are the statistics a snapshot has of a distribution.
var liveStatistics = []string{"avg", "p50", "p90", "p99"}

// observeSnapshot sends the live quantiles of the run so far and of the
// last ten seconds, and the throughput so far.
func (e *Exporter) observeSnapshot(ob metric.Observer, gauges map[metrics.Tag]metric.Float64Observable, snap *metrics.Snapshot) {
	for _, w := range []struct {
		name string
		qs   map[string]metrics.Quantiles
	}{{"run", snap.Run}, {"10s", snap.Window}} {
		for tag, q := range w.qs {
			g, ok := gauges[metrics.Tag(tag)]
			if !ok || q.Count == 0 {
				continue
			}
			for i, v := range []float64{q.Avg, q.P50, q.P90, q.P99} {
				ob.ObserveFloat64(g, v, metric.WithAttributes(e.with(keyStatistic.String(liveStatistics[i]), keyWindow.String(w.name), keyStage.Int(snap.Stage))...))
			}
		}
	}
	if secs := snap.Elapsed.Seconds(); secs > 0 {
		if g, ok := gauges[metrics.OutputTokenThroughput]; ok {
			ob.ObserveFloat64(g, float64(snap.OutputTokens)/secs, metric.WithAttributes(e.with(keyWindow.String("run"))...))
		}
	}
}

// observeSummary sends the run's final statistics: every distribution's
// every statistic, and every run-level metric.
func (e *Exporter) observeSummary(ob metric.Observer, gauges map[metrics.Tag]metric.Float64Observable, s *metrics.Summary) {
	for tag, d := range s.Metrics {
		g, ok := gauges[tag]
		if !ok || d.Count == 0 {
			continue
		}
		for _, st := range []struct {
			name string
			v    float64
		}{{"avg", d.Avg}, {"min", d.Min}, {"max", d.Max}, {"p1", d.P1}, {"p5", d.P5}, {"p10", d.P10}, {"p25", d.P25},
			{"p50", d.P50}, {"p75", d.P75}, {"p90", d.P90}, {"p95", d.P95}, {"p99", d.P99}, {"std", d.Std}} {
			if !math.IsNaN(st.v) && !math.IsInf(st.v, 0) {
				ob.ObserveFloat64(g, st.v, metric.WithAttributes(e.with(keyStatistic.String(st.name), keyWindow.String("run"))...))
			}
		}
	}
	for tag, v := range s.Run {
		if g, ok := gauges[tag]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			ob.ObserveFloat64(g, v, metric.WithAttributes(e.with(keyWindow.String("run"))...))
		}
	}
}

// with is the common attributes and more.
func (e *Exporter) with(more ...attribute.KeyValue) []attribute.KeyValue {
	return append(e.common[:len(e.common):len(e.common)], more...)
}

// unit is a metric's unit as OpenTelemetry writes units (UCUM, braces
// around a count's name).
func unit(u string) string {
	switch u {
	case "ms", "ns", "s", "%", "By":
		return u
	case "sec":
		return "s"
	case "bytes":
		return "By"
	case "KB":
		return "kBy"
	case "":
		return "1"
	}
	u = strings.ReplaceAll(u, "/sec", "/s")
	head, rest, _ := strings.Cut(u, "/")
	if rest != "" {
		return "{" + strings.TrimSuffix(head, "s") + "}/" + rest
	}
	return "{" + strings.TrimSuffix(u, "s") + "}"
}
