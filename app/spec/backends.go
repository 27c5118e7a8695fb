package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/metrics/mlflow"
	"github.com/surgebench/surge/metrics/otlp"
)

// Backends are where a run's results go beside its files: an
// OpenTelemetry collector, an MLflow tracking server (nil: not sent).
type Backends struct {
	OTel   *OTel
	MLflow *MLflow
}

// OTel is --otel-url and the flags beside it.
type OTel struct {
	// MetricsURL and TracesURL are the collector's endpoints (AIPerf's
	// normalisation of --otel-url).
	MetricsURL, TracesURL string
	// Statistics and Progress are --stream's domains (metrics, timing).
	Statistics, Progress bool
	Resource             map[string]string
	// Provider is --gen-ai-provider ("": from the target's host).
	Provider  string
	Interval  time.Duration
	SpanRatio float64
}

// MLflow is --mlflow-tracking-uri and the flags beside it.
type MLflow struct {
	URL                            *url.URL
	Experiment, RunName, ParentRun string
	Tags                           map[string]string
	Globs                          []string
}

// parseBackends reads --otel-* and --mlflow-*. A flag that only shapes
// one of them is refused without it, as AIPerf refuses it.
func parseBackends(s *Spec, c *cmdline.Config) error {
	e := &c.ExportConfig
	if strings.TrimSpace(e.OTelURL) == "" {
		for flag, given := range map[string]bool{"--stream": len(e.OTelStream) > 0, "--otel-resource-attributes": len(e.OTelResource) > 0, "--gen-ai-provider": e.GenAIProvider != ""} {
			if given {
				return cmdline.Usagef("%s shapes what --otel-url sends: give --otel-url too", flag)
			}
		}
	} else {
		o, err := parseOTel(e)
		if err != nil {
			return err
		}
		s.Backends.OTel = o
	}
	if strings.TrimSpace(e.MLflowURI) == "" {
		for flag, given := range map[string]bool{"--mlflow-run-name": e.MLflowRunName != "", "--mlflow-tag": len(e.MLflowTags) > 0,
			"--mlflow-parent-run-id": e.MLflowParentRunID != "", "--mlflow-artifact-glob": len(e.MLflowGlobs) > 0} {
			if given {
				return cmdline.Usagef("%s shapes what --mlflow-tracking-uri logs: give --mlflow-tracking-uri too", flag)
			}
		}
		return nil
	}
	m, err := parseMLflow(e)
	if err != nil {
		return err
	}
	s.Backends.MLflow = m
	return nil
}

func parseOTel(e *cmdline.ExportConfig) (*OTel, error) {
	mu, tu, err := otlp.Endpoints(e.OTelURL)
	if err != nil {
		return nil, cmdline.Usagef("--otel-url %w", err)
	}
	o := &OTel{MetricsURL: mu, TracesURL: tu, Provider: strings.TrimSpace(e.GenAIProvider), Interval: e.OTelInterval, SpanRatio: e.OTelSpans}
	if len(e.OTelStream) == 0 {
		o.Statistics, o.Progress = true, true
	}
	for _, d := range e.OTelStream {
		switch strings.ToLower(strings.TrimSpace(d)) {
		case "default":
			o.Statistics, o.Progress = true, true
		case "metrics":
			o.Statistics = true
		case "timing":
			o.Progress = true
		case "none":
		default:
			return nil, cmdline.Usagef("--stream %q: want metrics, timing, default or none", d)
		}
	}
	if o.Interval <= 0 || o.Interval > time.Hour {
		return nil, cmdline.Usagef("--otel-interval: want seconds > 0, at most an hour")
	}
	if math.IsNaN(o.SpanRatio) || o.SpanRatio < 0 || o.SpanRatio > 1 {
		return nil, cmdline.Usagef("--otel-span-sample-ratio %g: want a fraction from 0 to 1", o.SpanRatio)
	}
	o.Resource = map[string]string{}
	for _, item := range e.OTelResource {
		for pair := range strings.SplitSeq(item, ",") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			k, v, ok := strings.Cut(pair, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return nil, cmdline.Usagef("--otel-resource-attributes %q: want key=value", pair)
			}
			o.Resource[k] = v
		}
	}
	return o, nil
}

func parseMLflow(e *cmdline.ExportConfig) (*MLflow, error) {
	u, err := mlflow.TrackingURL(e.MLflowURI)
	if err != nil {
		return nil, cmdline.Usagef("--mlflow-tracking-uri %w", err)
	}
	m := &MLflow{URL: u, Experiment: strings.TrimSpace(e.MLflowExperiment), RunName: strings.TrimSpace(e.MLflowRunName),
		ParentRun: strings.TrimSpace(e.MLflowParentRunID), Tags: map[string]string{}}
	if m.Experiment == "" {
		return nil, cmdline.Usagef("--mlflow-experiment is empty: name the experiment")
	}
	for _, t := range e.MLflowTags {
		if err := addTags(m.Tags, t); err != nil {
			return nil, cmdline.Usagef("--mlflow-tag %w", err)
		}
	}
	for _, item := range e.MLflowGlobs {
		for g := range strings.SplitSeq(item, ",") {
			g = strings.TrimSpace(g)
			if err := mlflow.ValidGlob(g); err != nil {
				return nil, cmdline.Usagef("--mlflow-artifact-glob %w", err)
			}
			m.Globs = append(m.Globs, g)
		}
	}
	return m, nil
}

// addTags reads one --mlflow-tag: key:value, or a JSON object of them.
func addTags(into map[string]string, raw string) error {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "{") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return fmt.Errorf("%q: not a JSON object of tags: %w", raw, err)
		}
		for k, v := range obj {
			if s, ok := v.(string); ok {
				into[k] = s
			} else {
				b, _ := json.Marshal(v)
				into[k] = string(b)
			}
		}
		return nil
	}
	k, v, ok := strings.Cut(raw, ":")
	if k = strings.TrimSpace(k); !ok || k == "" {
		return fmt.Errorf("%q: want key:value or a JSON object", raw)
	}
	into[k] = strings.TrimSpace(v)
	return nil
}
