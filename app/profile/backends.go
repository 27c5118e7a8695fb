package profile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/fingerprint"
	"github.com/surgebench/surge/metrics/mlflow"
	"github.com/surgebench/surge/metrics/otlp"
)

// Bounds on sending the final results: a run that ended normally waits
// this long for the collector; one interrupted much less (Ctrl-C answers
// at once).
const (
	flushBound            = otlp.ExportTimeout
	flushBoundInterrupted = time.Second
)

// otelExport is a run's OpenTelemetry exporter, fed by the collector it
// is a sink of.
type otelExport struct {
	exp *otlp.Exporter
	// mu keeps a snapshot from being taken of a collector being closed:
	// attach and detach bound when col may be asked; last is the latest
	// snapshot, what the exporter reads once detached.
	mu   sync.Mutex
	col  *metrics.Collector
	last metrics.Snapshot
}

// attach lets the exporter read c's snapshots.
func (x *otelExport) attach(c *metrics.Collector) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.col = c
}

// detach stops it, before the collector closes (a snapshot of a closed
// collector is not to be had).
func (x *otelExport) detach() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.col = nil
}

// snapshot is the collector's live state, or the last one taken.
func (x *otelExport) snapshot() metrics.Snapshot {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.col != nil {
		x.last = x.col.Snapshot()
	}
	return x.last
}

// startOTel starts the exporter --otel-url asks for (nil: none). Its
// snapshots are read from the collector between attach and detach.
func (p *prepared) startOTel(target, runID string, origin time.Time, log io.Writer) (*otelExport, error) {
	o := p.s.Backends.OTel
	if o == nil {
		return nil, nil
	}
	x := &otelExport{}
	warn := func(msg string) { fmt.Fprintf(log, "warning: %s\n", msg) }
	exp, err := otlp.New(o.MetricsURL, o.TracesURL, x.snapshot,
		otlp.WithInterval(o.Interval), otlp.WithStreams(o.Statistics, o.Progress), otlp.WithSpans(o.SpanRatio),
		otlp.WithResource(o.Resource), otlp.WithRun(runID, p.s.Version), otlp.WithOrigin(origin),
		otlp.WithGenAI(p.genAI(target, o.Provider)), otlp.WithWarning(warn),
		otlp.WithDebug(func(msg string) { p.log.Debugf("%s", msg) }))
	if err != nil {
		return nil, fmt.Errorf("--otel-url: %w", err)
	}
	x.exp = exp
	return x, nil
}

// close sends the final metrics and the queued spans, within a bound a
// Ctrl-C shortens (and cuts short when it comes during the flush).
func (x *otelExport) close(ctx context.Context, s *metrics.Summary) otlp.Stats {
	bound := flushBound
	if ctx.Err() != nil {
		bound = flushBoundInterrupted
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return x.exp.Close(fctx, s)
}

// otelInfo is run_info.otel: where the run went and what missed it.
func otelInfo(o *spec.OTel, st otlp.Stats) map[string]any {
	return map[string]any{"metrics_url": o.MetricsURL, "traces_url": o.TracesURL, "span_sample_ratio": o.SpanRatio,
		"records": st.Records, "records_dropped": st.Dropped, "spans": st.Spans, "spans_dropped": st.SpansDropped,
		"spans_failed": st.SpansFailed, "metric_exports": st.MetricExports, "metric_export_failures": st.MetricFailures}
}

// genAI names the run in the GenAI semantic conventions' terms.
func (p *prepared) genAI(target, provider string) otlp.GenAI {
	g := otlp.GenAI{Operation: operationName(p.s.Endpoint.Kind), Provider: provider, Model: p.s.Target.Model()}
	if u, err := url.Parse(target); err == nil {
		g.ServerAddress = u.Hostname()
		if port, err := strconv.Atoi(u.Port()); err == nil {
			g.ServerPort = port
		} else if u.Scheme == "https" {
			g.ServerPort = 443
		} else {
			g.ServerPort = 80
		}
		if g.Provider == "" {
			g.Provider = providerOf(g.ServerAddress)
		}
	}
	if g.Provider == "" {
		g.Provider = "_OTHER"
	}
	return g
}

// operationName is gen_ai.operation.name for an endpoint type, as AIPerf
// maps it (chat for the types the conventions have no name for).
func operationName(k endpoint.Kind) string {
	switch k {
	case endpoint.Completions, endpoint.HuggingFaceGenerate:
		return "text_completion"
	case endpoint.Embeddings, endpoint.ChatEmbeddings, endpoint.NIMEmbeddings:
		return "embeddings"
	}
	return "chat"
}

// providers are the hosts whose gen_ai.provider.name is known, as AIPerf
// infers it (a suffix of the host).
var providers = []struct{ suffix, name string }{
	{"api.openai.com", "openai"}, {"api.anthropic.com", "anthropic"}, {"api.deepseek.com", "deepseek"},
	{"api.mistral.ai", "mistral_ai"}, {"api.cohere.ai", "cohere"}, {"api.cohere.com", "cohere"}, {"api.x.ai", "x_ai"},
	{"api.groq.com", "groq"}, {"api.perplexity.ai", "perplexity"}, {"generativelanguage.googleapis.com", "gcp.gemini"},
	{"-aiplatform.googleapis.com", "gcp.vertex_ai"}, {".openai.azure.com", "azure.ai.openai"},
	{".services.ai.azure.com", "azure.ai.inference"}, {".ibm.com", "ibm.watsonx.ai"},
}

func providerOf(host string) string {
	host = strings.ToLower(host)
	if strings.HasPrefix(host, "bedrock-runtime.") && strings.HasSuffix(host, ".amazonaws.com") {
		return "aws.bedrock"
	}
	for _, p := range providers {
		if strings.HasSuffix(host, p.suffix) {
			return p.name
		}
	}
	return ""
}

// publish logs the finished run to MLflow (--mlflow-tracking-uri). It
// never fails the run: an error is a warning, the artifacts stand. A
// Ctrl-C cuts it short, and the run then exits as interrupted.
func publish(ctx context.Context, s *spec.Spec, res *Result, start time.Time, log io.Writer) {
	m := s.Backends.MLflow
	if m == nil || res == nil || res.Summary == nil {
		return
	}
	status := mlflow.Finished
	switch {
	case res.Cancelled:
		status = mlflow.Killed
	case res.Aborted || res.WriteFault != nil || res.AllFailed():
		status = mlflow.Failed
	}
	name := m.RunName
	if name == "" {
		name = filepath.Base(res.Dir)
	}
	tags := map[string]string{"surge.version": s.Version}
	for k, v := range m.Tags {
		tags[k] = v
	}
	run := mlflow.Run{Experiment: m.Experiment, Name: name, ParentID: m.ParentRun, Tags: tags,
		Params: params(s.InputConfig()), Metrics: summaryMetrics(res.Summary), Dir: res.Dir, Globs: m.Globs,
		Start: start, End: time.Now(), Status: status}
	creds := mlflow.FromEnv()
	r, err := mlflow.Log(ctx, m.URL, run, mlflow.WithCredentials(creds))
	if err != nil {
		msg := err.Error()
		for _, sec := range creds.Secrets() {
			msg = strings.ReplaceAll(msg, sec, "<redacted>")
		}
		fmt.Fprintf(log, "warning: MLflow: the run was not logged to %s: %s (its artifacts in %s stand)\n", m.URL.Redacted(), sanitize.Line(msg), res.Dir)
		if ctx.Err() != nil {
			res.Cancelled = true // Ctrl-C during the upload: exit as interrupted
		}
		return
	}
	s.Logger(log).Notef("MLflow: logged as run %s of experiment %s (%d artifacts) on %s", r.RunID, r.ExperimentID, r.Artifacts, m.URL.Redacted())
}

// params are input_config as MLflow params: one per setting, its dotted
// path, its value as JSON (a string as itself).
func params(cfg map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range fingerprint.Flatten(cfg) {
		if s, ok := v.(string); ok {
			out[k] = s
			continue
		}
		b, err := json.Marshal(v)
		if err != nil || string(b) == "null" {
			continue
		}
		out[k] = string(b)
	}
	return out
}

// summaryMetrics are the summary's statistics as MLflow metrics:
// TAG_STAT for a distribution (time_to_first_token_p99), TAG for a
// run-level value.
func summaryMetrics(s *metrics.Summary) map[string]float64 {
	out := map[string]float64{}
	put := func(k string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	for tag, d := range s.Metrics {
		if d.Count == 0 {
			continue
		}
		t := string(tag)
		for _, st := range []struct {
			name string
			v    float64
		}{{"avg", d.Avg}, {"min", d.Min}, {"max", d.Max}, {"p1", d.P1}, {"p5", d.P5}, {"p10", d.P10}, {"p25", d.P25},
			{"p50", d.P50}, {"p75", d.P75}, {"p90", d.P90}, {"p95", d.P95}, {"p99", d.P99}, {"std", d.Std}} {
			put(t+"_"+st.name, st.v)
		}
	}
	for tag, v := range s.Run {
		put(string(tag), v)
	}
	return out
}
