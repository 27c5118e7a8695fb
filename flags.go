package main

import "github.com/urfave/cli/v2"

// Flag categories group `surge profile --help`.
const (
	catTarget    = "Target"
	catLoad      = "Load"
	catWorkload  = "Workload"
	catRequest   = "Request"
	catTelemetry = "Telemetry"
	catOutput    = "Output"
)

// profileFlags are AIPerf's flag names where AIPerf has the flag (design §2).
func profileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Category: catTarget, Name: "model", Aliases: []string{"m"}, Value: "mock", Usage: "model name sent in every request"},
		&cli.StringFlag{Category: catTarget, Name: "url", Aliases: []string{"u"}, Usage: "server URL, scheme optional (empty or \"mock\": start the embedded mock server)"},
		&cli.StringFlag{Category: catTarget, Name: "endpoint-type", Value: "chat", Usage: "chat or completions"},
		&cli.BoolFlag{Category: catTarget, Name: "streaming", Usage: "stream responses over SSE (needed for TTFT and ITL)"},

		&cli.StringFlag{Category: catLoad, Name: "concurrency", Usage: "requests in flight at once, or a stage list to sweep (\"1,2,4,8\"); default 1 without a rate"},
		&cli.StringFlag{Category: catLoad, Name: "request-rate", Usage: "requests per second (open loop), or a stage list (\"5,10,20\")"},
		&cli.StringFlag{Category: catLoad, Name: "arrival-pattern", Value: "poisson", Usage: "constant, poisson or gamma"},
		&cli.Float64Flag{Category: catLoad, Name: "arrival-smoothness", Value: 1, Usage: "gamma shape k: < 1 bursty, 1 Poisson-like, > 1 smoother (CV 1/sqrt(k))"},
		&cli.Float64Flag{Category: catLoad, Name: "concurrency-ramp-duration", Usage: "seconds to ramp concurrency from 1 to its target"},
		&cli.Float64Flag{Category: catLoad, Name: "request-rate-ramp-duration", Usage: "seconds to ramp the request rate up to its target"},
		&cli.Float64Flag{Category: catLoad, Name: "knee-factor", Value: 2, Usage: "sweep knee: p95 TTFT rise over the first stage that, with < 10% throughput gain, marks saturation"},
		&cli.BoolFlag{Category: catLoad, Name: "fixed-schedule", Usage: "replay the dataset's timestamps (automatic for traces with timestamps)"},
		&cli.BoolFlag{Category: catLoad, Name: "fixed-schedule-auto-offset", Usage: "start the replay at the first timestamp"},
		&cli.Float64Flag{Category: catLoad, Name: "fixed-schedule-start-offset", Usage: "replay rows from this trace time (ms)"},
		&cli.Float64Flag{Category: catLoad, Name: "fixed-schedule-end-offset", Usage: "replay rows up to this trace time (ms)"},
		&cli.Float64Flag{Category: catLoad, Name: "user-centric-rate", Usage: "user-centric mode: the users' combined requests per second"},
		&cli.IntFlag{Category: catLoad, Name: "num-users", Usage: "user-centric mode: users each running multi-turn sessions"},
		&cli.Float64Flag{Category: catLoad, Name: "conversation-turn-delay-mean", Usage: "think time between a user's turns (ms)"},
		&cli.Float64Flag{Category: catLoad, Name: "conversation-turn-delay-stddev", Usage: "think time standard deviation (ms)"},
		&cli.IntFlag{Category: catLoad, Name: "request-count", Usage: "requests to profile, per stage (default 10 unless --benchmark-duration is set)"},
		&cli.Float64Flag{Category: catLoad, Name: "benchmark-duration", Usage: "stop issuing after this many seconds (per stage)"},
		&cli.Float64Flag{Category: catLoad, Name: "benchmark-grace-period", Value: 30, Usage: "seconds in-flight requests may finish after issuing stops"},
		&cli.IntFlag{Category: catLoad, Name: "warmup-request-count", Usage: "requests sent before profiling (reported under warmup_metrics)"},
		&cli.Float64Flag{Category: catLoad, Name: "failed-request-threshold", Usage: "stop early once this fraction of requests failed (0: never)"},

		&cli.StringFlag{Category: catWorkload, Name: "input-file", Usage: "dataset file (JSONL, Mooncake/Azure trace, ShareGPT JSON)"},
		&cli.StringFlag{Category: catWorkload, Name: "custom-dataset-type", Usage: "single_turn, multi_turn, random_pool, mooncake_trace or azure_trace (guessed when omitted)"},
		&cli.StringFlag{Category: catWorkload, Name: "public-dataset", Usage: "sharegpt (read from --input-file or the cache folder; never downloaded)"},
		&cli.IntFlag{Category: catWorkload, Name: "isl-block-size", Usage: "Mooncake hash block size in tokens (default 512)"},
		&cli.IntFlag{Category: catWorkload, Name: "isl", Aliases: []string{"synthetic-input-tokens-mean"}, Value: 550, Usage: "synthetic prompt length in tokens (mean)"},
		&cli.IntFlag{Category: catWorkload, Name: "isl-stddev", Aliases: []string{"synthetic-input-tokens-stddev"}, Usage: "synthetic prompt length standard deviation"},
		&cli.IntFlag{Category: catWorkload, Name: "osl", Aliases: []string{"output-tokens-mean"}, Usage: "output token cap (mean; 0: no cap)"},
		&cli.IntFlag{Category: catWorkload, Name: "osl-stddev", Aliases: []string{"output-tokens-stddev"}, Usage: "output token cap standard deviation"},
		&cli.IntFlag{Category: catWorkload, Name: "prompt-prefix-pool-size", Usage: "distinct shared prefixes drawn for synthetic prompts"},
		&cli.IntFlag{Category: catWorkload, Name: "prompt-prefix-length", Usage: "tokens per shared prefix"},
		&cli.IntFlag{Category: catWorkload, Name: "shared-system-prompt-length", Usage: "tokens of one system prompt every conversation shares"},
		&cli.StringFlag{Category: catWorkload, Name: "tokenizer", Usage: "Hugging Face tokenizer.json (file or folder) to count and build tokens with"},
		&cli.Uint64Flag{Category: catWorkload, Name: "random-seed", Usage: "seed for prompts and arrival times (same seed, same requests)"},

		&cli.StringSliceFlag{Category: catRequest, Name: "extra-inputs", Usage: "extra request body field key:value (JSON values parsed), repeatable"},
		&cli.StringSliceFlag{Category: catRequest, Name: "header", Aliases: []string{"H"}, Usage: "extra HTTP header \"Name: value\", repeatable"},
		&cli.StringFlag{Category: catRequest, Name: "api-key", EnvVars: []string{"OPENAI_API_KEY"}, Usage: "sent as Authorization: Bearer (never exported or logged)"},
		&cli.Float64Flag{Category: catRequest, Name: "request-timeout-seconds", Value: 600, Usage: "per-request limit, the whole stream included"},
		&cli.StringFlag{Category: catRequest, Name: "goodput", Usage: "SLOs, e.g. \"time_to_first_token:200 inter_token_latency:20\" (ms)"},

		&cli.BoolFlag{Category: catTelemetry, Name: "no-gpu-telemetry", Usage: "do not sample local GPUs through NVML"},
		&cli.StringSliceFlag{Category: catTelemetry, Name: "gpu-telemetry", Usage: "DCGM exporter URL to scrape, repeatable"},
		&cli.Float64Flag{Category: catTelemetry, Name: "gpu-telemetry-interval", Value: 1, Usage: "seconds between telemetry samples"},
		&cli.StringSliceFlag{Category: catTelemetry, Name: "server-metrics", Usage: "Prometheus /metrics URL of the server, repeatable (default: the target's /metrics)"},
		&cli.BoolFlag{Category: catTelemetry, Name: "no-server-metrics", Usage: "do not scrape the server's /metrics"},

		&cli.StringFlag{Category: catOutput, Name: "ui", Usage: "dashboard, simple or none (default: dashboard on a terminal, none otherwise)"},
		&cli.StringFlag{Category: catOutput, Name: "output-artifact-dir", Usage: "export folder (default artifacts/<model>-<endpoint>-<mode><value>)"},
	}
}
