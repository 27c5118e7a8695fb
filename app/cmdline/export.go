package cmdline

import (
	"time"

	"github.com/urfave/cli/v2"
)

// catExport groups, in --help, where a run's results go beside its files.
const catExport = "Export to OpenTelemetry and MLflow (docs/export.md)"

// ExportConfig is AIPerf's --otel-* and --mlflow-* flags, and surge's own
// beside them.
type ExportConfig struct {
	// OTelURL is the collector (--otel-url); OTelStream the domains sent
	// (--stream: metrics, timing, default, none); OTelResource
	// key=value pairs (--otel-resource-attributes); GenAIProvider
	// gen_ai.provider.name (--gen-ai-provider).
	OTelURL       string
	OTelStream    []string
	OTelResource  []string
	GenAIProvider string
	// OTelInterval is how often the live metrics are sent; OTelSpans the
	// fraction of requests sent as spans (surge's own).
	OTelInterval time.Duration
	OTelSpans    float64
	// MLflow*: --mlflow-tracking-uri, --mlflow-experiment,
	// --mlflow-run-name, --mlflow-tag (key:value or JSON),
	// --mlflow-parent-run-id, --mlflow-artifact-glob.
	MLflowURI, MLflowExperiment, MLflowRunName, MLflowParentRunID string
	MLflowTags, MLflowGlobs                                       []string
}

// exportOptions are the rows of those flags (flags.go's options holds
// them with the rest). Implementing AIPerf's names here shadows their
// rows in foreign.go. --help shows the two that turn a back end on; the
// rest shape it, and docs/export.md lists them.
func exportOptions() []option {
	return []option{
		{flag: &cli.StringFlag{Category: catExport, Name: "otel-url", Usage: "send metrics and spans to this OpenTelemetry collector"}, path: "output.otel_url", field: func(c *Config) any { return &c.OTelURL }},
		{flag: &cli.StringSliceFlag{Category: catExport, Hidden: true, Name: "stream", Usage: "--otel-url's metric domains: metrics (latency and throughput statistics, the GenAI histograms), timing (requests sent, ended, failed, in flight; tokens), default (both) or none"}, path: "output.stream", field: func(c *Config) any { return &c.OTelStream }, many: true},
		{flag: &cli.StringSliceFlag{Category: catExport, Hidden: true, Name: "otel-resource-attributes", Usage: "key=value pairs (comma-separated or repeated) added to the resource of everything sent"}, path: "output.otel_resource_attributes", field: func(c *Config) any { return &c.OTelResource }, many: true},
		{flag: &cli.StringFlag{Category: catExport, Hidden: true, Name: "gen-ai-provider", Usage: "gen_ai.provider.name on every metric and span (default: known from the URL's host, else _OTHER)"}, path: "output.gen_ai_provider", field: func(c *Config) any { return &c.GenAIProvider }},
		{flag: &cli.Float64Flag{Category: catExport, Hidden: true, Name: "otel-interval", Value: 10, Usage: "seconds between the live metric exports"}, path: "output.otel_interval", field: func(c *Config) any { return Secs(&c.OTelInterval) }},
		{flag: &cli.Float64Flag{Category: catExport, Hidden: true, Name: "otel-span-sample-ratio", Value: 0.1, Usage: "fraction of requests sent as spans (0: none, 1: every one), chosen evenly"}, path: "output.otel_span_sample_ratio", field: func(c *Config) any { return &c.OTelSpans }},
		{flag: &cli.StringFlag{Category: catExport, Name: "mlflow-tracking-uri", Usage: "log the run to this MLflow tracking server"}, path: "output.mlflow.tracking_uri", field: func(c *Config) any { return &c.MLflowURI }},
		{flag: &cli.StringFlag{Category: catExport, Hidden: true, Name: "mlflow-experiment", Value: "surge", Usage: "the MLflow experiment (created when missing)"}, path: "output.mlflow.experiment", field: func(c *Config) any { return &c.MLflowExperiment }},
		{flag: &cli.StringFlag{Category: catExport, Hidden: true, Name: "mlflow-run-name", Usage: "the MLflow run's name (default: the artifact folder's)"}, path: "output.mlflow.run_name", field: func(c *Config) any { return &c.MLflowRunName }},
		{flag: &cli.StringSliceFlag{Category: catExport, Hidden: true, Name: "mlflow-tag", Usage: "run tags, key:value (repeated or several after the flag) or a JSON object"}, path: "output.mlflow.tags", field: func(c *Config) any { return &c.MLflowTags }, many: true, whole: true},
		{flag: &cli.StringFlag{Category: catExport, Hidden: true, Name: "mlflow-parent-run-id", Usage: "make the run a child of this MLflow run"}, path: "output.mlflow.parent_run_id", field: func(c *Config) any { return &c.MLflowParentRunID }},
		{flag: &cli.StringSliceFlag{Category: catExport, Hidden: true, Name: "mlflow-artifact-glob", Usage: "upload only the artifact folder's files these patterns pick (relative to it; *.json, plots/*); default: every file"}, path: "output.mlflow.artifact_glob", field: func(c *Config) any { return &c.MLflowGlobs }, many: true},
	}
}

func init() { options = append(options, exportOptions()...) }
