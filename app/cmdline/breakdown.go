package cmdline

import (
	"time"

	"github.com/urfave/cli/v2"
)

// catBreakdown groups the time breakdown's flags in --help.
const catBreakdown = "Where the time went (every option: docs/time-breakdown.md)"

// BreakdownConfig holds the flags of the time breakdown's sources: the
// embedded OTLP receiver a tracing server sends its spans to, koboldcpp's
// perf endpoint, and the embedded mock's own account.
type BreakdownConfig struct {
	// OTLPReceiver is --otlp-receiver's address ("": none); OTLPWait how
	// long a request's record waits for its span (--otlp-wait).
	OTLPReceiver string
	OTLPWait     time.Duration
	// KoboldPerf is --koboldcpp-perf: ask /api/extra/perf after each
	// request (one at a time only).
	KoboldPerf bool
	// MockTimings is --mock-server-timings: how the embedded mock reports
	// its own times (none, llamacpp, mock, otlp; "" picks).
	MockTimings string
}

// breakdownOptions are the rows of those flags (flags.go's options holds
// them with the rest).
var breakdownOptions = []option{
	// The one shown in --help-all (beside the other telemetry: --help
	// has a page's room); the rest are in docs/time-breakdown.md.
	{flag: &cli.StringFlag{Category: catTelemetry, Name: "otlp-receiver", Usage: "receive a tracing server's OTLP spans at ADDR"},
		path: "time_breakdown.otlp_receiver", field: func(c *Config) any { return &c.OTLPReceiver }},
	{flag: &cli.Float64Flag{Category: catBreakdown, Hidden: true, Name: "otlp-wait", Value: 10, Usage: "seconds a request's record waits for its span (exporters send batches every few seconds); its JSONL line waits with it"},
		path: "time_breakdown.otlp_wait", field: func(c *Config) any { return Secs(&c.OTLPWait) }},
	{flag: &cli.BoolFlag{Category: catBreakdown, Hidden: true, Name: "koboldcpp-perf", Usage: "ask koboldcpp's /api/extra/perf for each request's prompt and generation times after it (one request at a time: --concurrency 1)"},
		path: "time_breakdown.koboldcpp_perf", field: func(c *Config) any { return &c.KoboldPerf }},
	{flag: &cli.StringFlag{Category: catBreakdown, Hidden: true, Name: "mock-server-timings", Usage: "the embedded mock (no --url) reports its own queue, prefill and decode: none, llamacpp (llama.cpp's timings), mock (with its queue) or otlp (spans sent to --otlp-receiver; the default with one, none without)"},
		path: "mock.server_timings", field: func(c *Config) any { return &c.MockTimings }},
}

// The breakdown's options join the table (flags.go) here.
func init() { options = append(options, breakdownOptions...) }
