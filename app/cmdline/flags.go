package cmdline

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/urfave/cli/v2"
)

// Flag categories group `surge profile --help`.
const (
	catTarget    = "Target"
	catLoad      = "Load"
	catWorkload  = "Dataset"
	catRequest   = "Request"
	catTelemetry = "Telemetry"
	catOutput    = "Output"
	catShard     = "Sharding (several load hosts)"
	catMedia     = "Images and audio (chat; every option: docs/multimodal.md)"
)

// option is one flag of `surge profile`: its urfave definition (name,
// default, help) and the Config field it fills. The table is the only place
// a flag is written: profileFlags binds it to a Config, and inputConfig reads
// the same fields back for the exports, so the two cannot drift.
type option struct {
	flag cli.Flag
	// field points into c: *string, *int, *bool, *float64, *uint64,
	// *[]string, or a duration (a float flag in seconds or milliseconds).
	field func(c *Config) any
	// path is where input_config keeps the value: AIPerf's config path
	// where AIPerf has the setting ("endpoint.model_names",
	// "input.prompt.input_tokens.mean"), else a name of surge's own in
	// the section it belongs to ("loadgen.knee_factor").
	path string
	// export replaces the field's value in input_config (secrets redacted);
	// h is the headers as sent, the API key's Authorization included.
	export func(c *Config, h http.Header) any
	// many (list flags) takes every value up to the next flag, as AIPerf's
	// list options do: --extra-inputs a:1 b:2.
	many bool
	// whole (list flags) keeps each value whole instead of splitting it at
	// commas: its parser splits it, JSON objects included.
	whole bool
}

// duration is a time.Duration field set by a float flag counted in unit.
type duration struct {
	d    *time.Duration
	unit time.Duration
}

func Secs(d *time.Duration) duration { return duration{d, time.Second} }
func ms(d *time.Duration) duration   { return duration{d, time.Millisecond} }

// options are AIPerf's flag names where AIPerf has the flag (design §2).
var options = []option{
	{flag: &cli.StringSliceFlag{Category: catTarget, Name: "url", Aliases: []string{"u"}, Usage: "server URL, scheme optional; several (after one flag, or repeated) take the requests round-robin (not given, or \"mock\": start the embedded mock server)"}, path: "endpoint.urls", field: func(c *Config) any { return &c.URLs }, many: true,
		export: func(c *Config, _ http.Header) any { return RedactURLs(c.URLs) }},
	{flag: &cli.StringSliceFlag{Category: catTarget, Name: "model", Aliases: []string{"m", "model-names"}, Value: cli.NewStringSlice("mock"), Usage: "model name sent in each request; several (a,b or repeated) share the requests by --model-selection-strategy"}, path: "endpoint.model_names", field: func(c *Config) any { return &c.Models }},
	{flag: &cli.BoolFlag{Category: catTarget, Name: "streaming", Usage: "stream responses over SSE (needed for TTFT and ITL)"}, path: "endpoint.streaming", field: func(c *Config) any { return &c.Streaming }},
	{flag: &cli.StringFlag{Category: catTarget, Name: "endpoint-type", Value: "chat", Usage: "chat, completions, responses, messages, embeddings, chat_embeddings, nim_embeddings, cohere_rankings, hf_tei_rankings, nim_rankings, huggingface_generate, raw or template"}, path: "endpoint.type", field: func(c *Config) any { return &c.EndpointType }},
	{flag: &cli.StringFlag{Category: catTarget, Name: "model-selection-strategy", Value: "round_robin", Usage: "with several --model: round_robin, random or weighted (--model-weights)"}, path: "endpoint.model_selection_strategy", field: func(c *Config) any { return &c.ModelSelection }},
	{flag: &cli.StringFlag{Category: catTarget, Name: "endpoint", Aliases: []string{"custom-endpoint"}, Usage: "URL path to send to instead of the endpoint type's default (\"/v1/custom\")"}, path: "endpoint.custom_endpoint", field: func(c *Config) any { return &c.CustomEndpoint }},
	{flag: &cli.StringFlag{Category: catTarget, Name: "endpoint-template", Usage: "template type: the request body as a Go text/template over the turn (.Text .Messages .Model .MaxTokens .Stream .Passages .Extra; {{json .Text}} quotes), inline or @file"}, path: "endpoint.template", field: func(c *Config) any { return &c.EndpointTemplate }},
	{flag: &cli.StringFlag{Category: catTarget, Name: "response-field", Usage: "JSON path to the text of each streamed event or body (\"output.text\", \"choices[0].text\")"}, path: "endpoint.response_field", field: func(c *Config) any { return &c.ResponseField }},
	{flag: &cli.StringFlag{Category: catTarget, Name: "reasoning-format", Value: "auto", Usage: "where reasoning is: auto (reasoning_content/reasoning fields and a leading <think> block), fields, think (every <think>…</think>) or none"}, path: "endpoint.reasoning_format", field: func(c *Config) any { return &c.ReasoningFormat }},
	{flag: &cli.BoolFlag{Category: catTarget, Name: "skip-preflight", Usage: "do not check the server before the run (by default a few seconds: it must accept a connection and answer one small request, which also tells which output-cap field it honours)"}, path: "endpoint.skip_preflight", field: func(c *Config) any { return &c.SkipPreflight }},
	{flag: &cli.Float64Flag{Category: catTarget, Name: "wait-for-model-timeout", Usage: "seconds to wait for every --url to serve the model before the run (0: start at once); the run fails if one does not"}, path: "endpoint.wait_for_model_timeout", field: func(c *Config) any { return Secs(&c.WaitTimeout) }},
	{flag: &cli.StringFlag{Category: catTarget, Name: "wait-for-model-mode", Value: ProbeInference, Usage: "readiness probe: inference (a one-token request; any answer below HTTP 500), models (/v1/models lists the model) or both"}, path: "endpoint.wait_for_model_mode", field: func(c *Config) any { return &c.WaitMode }},
	{flag: &cli.Float64Flag{Category: catTarget, Name: "wait-for-model-interval", Value: 5, Usage: "seconds between readiness probes"}, path: "endpoint.wait_for_model_interval", field: func(c *Config) any { return Secs(&c.WaitInterval) }},

	{flag: &cli.StringFlag{Category: catLoad, Name: "concurrency", Usage: "requests in flight at once, or a stage list to sweep (\"1,2,4,8\"); default 1 without a rate"}, path: "loadgen.concurrency", field: func(c *Config) any { return &c.Concurrency },
		export: func(c *Config, _ http.Header) any { return numbers(c.Concurrency) }},
	{flag: &cli.StringFlag{Category: catLoad, Name: "request-rate", Usage: "requests per second (open loop), or a stage list (\"5,10,20\")"}, path: "loadgen.request_rate", field: func(c *Config) any { return &c.RequestRate },
		export: func(c *Config, _ http.Header) any { return numbers(c.RequestRate) }},
	{flag: &cli.StringFlag{Category: catLoad, Name: "arrival-pattern", Aliases: []string{"request-rate-mode"}, Value: "poisson", Usage: "constant, poisson or gamma"}, path: "loadgen.arrival_pattern", field: func(c *Config) any { return &c.ArrivalPattern }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "arrival-smoothness", Aliases: []string{"vllm-burstiness"}, Value: 1, Usage: "gamma shape k: < 1 bursty, 1 Poisson-like, > 1 smoother (CV 1/sqrt(k)); given alone it selects --arrival-pattern gamma"}, path: "loadgen.arrival_smoothness", field: func(c *Config) any { return &c.Smoothness }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "concurrency-ramp-duration", Usage: "seconds to ramp concurrency from 1 to its target"}, path: "loadgen.concurrency_ramp_duration", field: func(c *Config) any { return Secs(&c.ConcurrencyRamp) }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "request-rate-ramp-duration", Usage: "seconds to ramp the request rate up to its target"}, path: "loadgen.request_rate_ramp_duration", field: func(c *Config) any { return Secs(&c.RateRamp) }},
	{flag: &cli.StringFlag{Category: catLoad, Hidden: true, Name: "request-rate-series", Usage: "a rate that follows points, piecewise linearly: a JSON file {\"points\": [{\"time_s\": 0, \"qps\": 1}, …]} as AIPerf's, or inline \"0:1,60:7,120:40\" (seconds:rate)"}, path: "loadgen.request_rate_series", field: func(c *Config) any { return &c.RequestRateSeries }},
	{flag: &cli.StringFlag{Category: catWorkload, Hidden: true, Name: "cache-bust", Value: "none", Usage: "a marker a session that defeats a server's prefix cache: none, system_prefix, system_suffix, first_turn_prefix or first_turn_suffix"}, path: "input.cache_bust", field: func(c *Config) any { return &c.CacheBust }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "knee-factor", Value: 2, Usage: "sweep knee: p95 TTFT rise over the first stage that, with < 10% throughput gain, marks saturation"}, path: "loadgen.knee_factor", field: func(c *Config) any { return &c.KneeFactor }},
	{flag: &cli.BoolFlag{Category: catLoad, Name: "fixed-schedule", Usage: "replay the dataset's timestamps (automatic for traces with timestamps)"}, path: "input.fixed_schedule", field: func(c *Config) any { return &c.FixedSchedule }},
	{flag: &cli.BoolFlag{Category: catLoad, Name: "no-fixed-schedule", Usage: "keep --concurrency or --request-rate for a trace with timestamps instead of replaying them"}, path: "input.disable_auto_fixed_schedule", field: func(c *Config) any { return &c.NoFixedSchedule }},
	{flag: &cli.BoolFlag{Category: catLoad, Name: "fixed-schedule-auto-offset", Usage: "start the replay at the first timestamp"}, path: "input.fixed_schedule_auto_offset", field: func(c *Config) any { return &c.AutoOffset }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "fixed-schedule-start-offset", Usage: "replay rows from this trace time (ms)"}, path: "input.fixed_schedule_start_offset", field: func(c *Config) any { return ms(&c.StartOffset) }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "fixed-schedule-end-offset", Usage: "replay rows up to this trace time (ms)"}, path: "input.fixed_schedule_end_offset", field: func(c *Config) any { return ms(&c.EndOffset) }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "user-centric-rate", Usage: "user-centric mode: the users' combined requests per second, or a list to sweep"}, path: "loadgen.user_centric_rate", field: func(c *Config) any { return sweep(c, "user-centric-rate", &c.UserCentricRate) }},
	{flag: &cli.IntFlag{Category: catLoad, Name: "num-users", Usage: "user-centric mode: users each running multi-turn sessions, or a list to sweep"}, path: "loadgen.num_users", field: func(c *Config) any { return sweep(c, "num-users", &c.NumUsers) }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "conversation-turn-delay-mean", Aliases: []string{"session-turn-delay-mean"}, Usage: "think time before each later turn of a conversation (ms): synthetic multi-turn conversations and user-centric users"}, path: "input.conversation.turn.delay.mean", field: func(c *Config) any { return ms(&c.TurnDelayMean) }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "conversation-turn-delay-stddev", Aliases: []string{"session-turn-delay-stddev"}, Usage: "think time standard deviation (ms)"}, path: "input.conversation.turn.delay.stddev", field: func(c *Config) any { return ms(&c.TurnDelayStd) }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "conversation-turn-delay-ratio", Aliases: []string{"session-delay-ratio"}, Value: 1, Usage: "multiply every turn delay (a dataset's, synthetic, user-centric think time) by this, as AIPerf: < 1 faster, > 1 slower, 0 none"}, path: "input.conversation.turn.delay.ratio", field: func(c *Config) any { return &c.TurnDelayRatio }},
	{flag: &cli.IntFlag{Category: catLoad, Name: "conversation-num", Aliases: []string{"num-conversations", "num-sessions"}, Usage: "sessions to profile, per stage, each sent whole (instead of --request-count)"}, path: "input.conversation.num", field: func(c *Config) any { return &c.ConversationNum }},
	{flag: &cli.IntFlag{Category: catLoad, Name: "request-count", Aliases: []string{"num-requests"}, Usage: "requests to profile, per stage (default, as AIPerf: max(10, 2 × concurrency) for a concurrency, 10 for a rate, unless --benchmark-duration or --conversation-num bounds the stage), or a list to sweep"}, path: "loadgen.request_count", field: func(c *Config) any { return sweep(c, "request-count", &c.RequestCount) }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "benchmark-duration", Usage: "stop issuing after this many seconds (per stage), or a list to sweep"}, path: "loadgen.benchmark_duration", field: func(c *Config) any { return sweep(c, "benchmark-duration", Secs(&c.Duration)) }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "benchmark-grace-period", Value: 30, Usage: "seconds in-flight requests may finish after issuing stops (inf: wait for every one)"}, path: "loadgen.benchmark_grace_period", field: func(c *Config) any { return Secs(&c.Grace) }},
	{flag: &cli.IntFlag{Category: catLoad, Name: "warmup-request-count", Aliases: []string{"num-warmup-requests"}, Usage: "requests sent before profiling (reported under warmup_metrics)"}, path: "loadgen.warmup_request_count", field: func(c *Config) any { return &c.WarmupCount }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "warmup-duration", Usage: "warm up for this many seconds (with --warmup-request-count too: whichever ends first)"}, path: "loadgen.warmup_duration", field: func(c *Config) any { return Secs(&c.WarmupDuration) }},
	{flag: &cli.IntFlag{Category: catLoad, Name: "warmup-concurrency", Usage: "warmup's requests in flight (default: the first stage's load)"}, path: "loadgen.warmup_concurrency", field: func(c *Config) any { return &c.WarmupConcurrency }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "warmup-request-rate", Usage: "warmup's requests per second, open loop by --arrival-pattern (capped by --warmup-concurrency)"}, path: "loadgen.warmup_request_rate", field: func(c *Config) any { return &c.WarmupRate }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "request-cancellation-rate", Usage: "percent of profile requests (0-100, chosen by --random-seed) cancelled on purpose --request-cancellation-delay after their send: recorded as cancelled, counted among the errors"}, path: "loadgen.request_cancellation_rate", field: func(c *Config) any { return &c.CancellationRate }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "request-cancellation-delay", Usage: "seconds from a chosen request's send (fully written) to its cancellation; 0: at once"}, path: "loadgen.request_cancellation_delay", field: func(c *Config) any { return Secs(&c.CancellationDelay) }},
	{flag: &cli.IntFlag{Category: catLoad, Name: "prefill-concurrency", Usage: "cap requests sent but not yet past their first token (needs --streaming; no cap when left out)"}, path: "loadgen.prefill_concurrency", field: func(c *Config) any { return &c.PrefillConcurrency }},
	{flag: &cli.IntFlag{Category: catLoad, Hidden: true, Name: "warmup-prefill-concurrency", Usage: "the warmup's cap on requests in prefill (default: --prefill-concurrency)"}, path: "loadgen.warmup_prefill_concurrency", field: func(c *Config) any { return &c.WarmupPrefillConcurrency }},
	{flag: &cli.Float64Flag{Category: catLoad, Hidden: true, Name: "prefill-concurrency-ramp-duration", Usage: "seconds to ramp --prefill-concurrency from 1 to its value as the profile starts"}, path: "loadgen.prefill_concurrency_ramp_duration", field: func(c *Config) any { return Secs(&c.PrefillRamp) }},
	{flag: &cli.Float64Flag{Category: catLoad, Name: "failed-request-threshold", Usage: "stop early once this fraction of requests failed (0: never)"}, path: "loadgen.failed_request_threshold", field: func(c *Config) any { return &c.FailedThreshold }},
	{flag: &cli.BoolFlag{Category: catLoad, Hidden: true, Name: "parameter-sweep-same-seed", Usage: "seed every value of a sweep with --random-seed (the same prompts and arrivals at each value) instead of --random-seed + the value's index"}, path: "sweep.same_seed", field: func(c *Config) any { return &c.SweepSameSeed }},
	{flag: &cli.StringFlag{Category: catLoad, Name: "sweep-mode", Aliases: []string{"sweep-type"}, Value: SweepGrid, Usage: "several list flags (--isl 128,512 --concurrency 1,4): grid (every combination) or zip (the i-th values together; equal lengths)"}, path: "sweep.type", field: func(c *Config) any { return &c.SweepMode }},
	{flag: &cli.IntFlag{Category: catLoad, Name: "num-profile-runs", Value: 1, Usage: "run the whole plan this many times (1 to 10) into profile_runs/run_NNNN/, with mean, std and a confidence interval per metric in aggregate/ (--confidence-level, --profile-run-cooldown-seconds: docs/sweeps.md)"}, path: "multi_run.num_profile_runs", field: func(c *Config) any { return &c.NumProfileRuns }},
	{flag: &cli.Float64Flag{Category: catLoad, Hidden: true, Name: "profile-run-cooldown-seconds", Usage: "seconds to wait between --num-profile-runs runs"}, path: "multi_run.profile_run_cooldown_seconds", field: func(c *Config) any { return Secs(&c.ProfileRunCooldown) }},
	{flag: &cli.Float64Flag{Category: catLoad, Hidden: true, Name: "confidence-level", Value: 0.95, Usage: "confidence level of the --num-profile-runs intervals (0 < level < 1)"}, path: "multi_run.confidence_level", field: func(c *Config) any { return &c.ConfidenceLevel }},

	{flag: &cli.IntFlag{Category: catWorkload, Name: "isl", Aliases: []string{"prompt-input-tokens-mean", "synthetic-input-tokens-mean"}, Value: 550, Usage: "synthetic prompt length in tokens (mean), or a list to sweep (\"128,512\")"}, path: "input.prompt.input_tokens.mean", field: func(c *Config) any { return sweep(c, "isl", &c.ISL) }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "osl", Aliases: []string{"prompt-output-tokens-mean", "output-tokens-mean"}, Usage: "output token cap (mean; 0: no cap, except messages: 4096, or 128 on the embedded mock), or a list to sweep"}, path: "input.prompt.output_tokens.mean", field: func(c *Config) any { return sweep(c, "osl", &c.OSL) }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "input-file", Usage: "dataset file or folder (JSONL, a trace, ShareGPT JSON, inputs.json, raw payloads), or its https://, hf:// or s3:// address"}, path: "input.file", field: func(c *Config) any { return &c.InputFile },
		export: func(c *Config, _ http.Header) any {
			if strings.Contains(c.InputFile, "://") {
				return RedactURL(c.InputFile) // a password or a signature in a remote file's URL
			}
			return c.InputFile
		}},
	{flag: &cli.BoolFlag{Category: catWorkload, Name: "allow-invalid-utf8", Usage: "read dataset lines that are not UTF-8 (by default refused with file:line): JSON fields get U+FFFD for each bad byte, raw bodies are sent byte for byte"}, path: "input.allow_invalid_utf8", field: func(c *Config) any { return &c.AllowInvalidUTF8 }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "max-memory", DefaultText: "3/4 of the machine's memory", Usage: "the memory the dataset and the requests in flight may take (e.g. 4GiB, 512MiB): a workload estimated to need more is refused before it loads"}, path: "input.max_memory", field: func(c *Config) any { return &c.MaxMemory }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "custom-dataset-type", Usage: "single_turn, multi_turn, random_pool, mooncake_trace, azure_trace, bailian_trace, burst_gpt_trace, baseten, weka, inputs_json or raw_payload (guessed when omitted; see docs/workloads.md)"}, path: "input.custom_dataset_type", field: func(c *Config) any { return &c.CustomDatasetType }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "public-dataset", Usage: "one of AIPerf's public datasets (sharegpt, mmstar, aimo, …: docs/workloads.md), downloaded once from the Hugging Face Hub into its cache"}, path: "input.public_dataset", field: func(c *Config) any { return &c.PublicDataset }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "hf-dataset", Usage: "any Hugging Face Hub dataset, ORG/NAME, its columns mapped by --hf-column (subsets, splits, filters: docs/workloads.md)"}, path: "input.hf_dataset", field: func(c *Config) any { return &c.HFDataset }},
	{flag: &cli.StringFlag{Category: catWorkload, Hidden: true, Name: "hf-subset", Usage: "the Hub dataset's subset (config), overriding a public dataset's own"}, path: "input.hf_dataset_subset", field: func(c *Config) any { return &c.HFSubset }},
	{flag: &cli.StringFlag{Category: catWorkload, Hidden: true, Name: "hf-split", DefaultText: "train, or a public dataset's own", Usage: "the Hub dataset's split"}, path: "input.hf_dataset_split", field: func(c *Config) any { return &c.HFSplit }},
	{flag: &cli.StringSliceFlag{Category: catWorkload, Name: "hf-column", Usage: "--hf-dataset's columns, ROLE=COLUMN: " + strings.Join(datasets.ColumnRoles, ", ")}, path: "input.hf_dataset_columns", field: func(c *Config) any { return &c.HFColumns }, many: true, whole: true},
	{flag: &cli.StringSliceFlag{Category: catWorkload, Hidden: true, Name: "dataset-filter", Usage: "KEY=VALUE, several after one flag or repeated: --hf-dataset keeps the rows whose column KEY holds VALUE; a public dataset takes its own keys (exgentic: harness, source_model)"}, path: "input.dataset_filter", field: func(c *Config) any { return &c.DatasetFilters }, many: true, whole: true},
	{flag: &cli.StringFlag{Category: catWorkload, Hidden: true, Name: "hf-weka-dataset", Usage: "a Hub dataset of WEKA traces, ORG/NAME, replayed as --public-dataset weka_hf (AIPerf's)"}, path: "input.hf_weka_dataset", field: func(c *Config) any { return &c.HFWekaDataset }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "isl-block-size", Aliases: []string{"prompt-input-tokens-block-size", "synthetic-input-tokens-block-size"}, Usage: "Mooncake hash block size in tokens (default 512)"}, path: "input.prompt.input_tokens.block_size", field: func(c *Config) any { return &c.ISLBlockSize }},
	{flag: &cli.Float64Flag{Category: catWorkload, Name: "isl-stddev", Aliases: []string{"prompt-input-tokens-stddev", "synthetic-input-tokens-stddev"}, Usage: "synthetic prompt length standard deviation"}, path: "input.prompt.input_tokens.stddev", field: func(c *Config) any { return &c.ISLStddev }},
	{flag: &cli.Float64Flag{Category: catWorkload, Name: "osl-stddev", Aliases: []string{"prompt-output-tokens-stddev", "output-tokens-stddev"}, Usage: "output token cap standard deviation"}, path: "input.prompt.output_tokens.stddev", field: func(c *Config) any { return &c.OSLStddev }},
	{flag: &cli.Float64Flag{Category: catWorkload, Name: "random-range-ratio", Usage: "draw ISL and OSL uniformly from [mean·(1−R), mean·(1+R)] (vLLM's and SGLang's; 0 ≤ R < 1; not with the stddevs)"}, path: "input.prompt.random_range_ratio", field: func(c *Config) any { return &c.RangeRatio }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "seq-dist", Aliases: []string{"sequence-distribution"}, Usage: `weighted ISL,OSL pairs, weights in percent: "256,128:40;512|20,256|10:60" (|stddev optional), "[(256,128):40,(512,256):60]" or {"pairs": [...]}`}, path: "input.prompt.sequence_distribution", field: func(c *Config) any { return &c.SeqDist }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "prompt-corpus", Usage: "text prompts are cut from: sonnet (surge's prose, the default), coding, or a text file of one sentence a line"}, path: "input.prompt.corpus", field: func(c *Config) any { return &c.PromptCorpus }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "prompt-prefix-pool-size", Aliases: []string{"prefix-prompt-pool-size", "num-prefix-prompts"}, Usage: "distinct shared prefixes drawn for synthetic prompts"}, path: "input.prompt.prefix_prompt.pool_size", field: func(c *Config) any { return &c.PrefixPoolSize }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "prompt-prefix-length", Aliases: []string{"prefix-prompt-length"}, Usage: "tokens per shared prefix"}, path: "input.prompt.prefix_prompt.length", field: func(c *Config) any { return &c.PrefixLength }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "system-prompt", Usage: "a system message sent with every conversation (before a dataset's own)"}, path: "input.prompt.system_prompt", field: func(c *Config) any { return &c.SystemPrompt }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "system-prompt-file", Usage: "--system-prompt read from this file (UTF-8, at most 1 MiB)"}, path: "input.prompt.system_prompt_file", field: func(c *Config) any { return &c.SystemPromptFile }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "shared-system-prompt-length", Usage: "tokens of one system prompt every conversation shares"}, path: "input.prompt.prefix_prompt.shared_system_prompt_length", field: func(c *Config) any { return &c.SharedSystemPromptLength }},
	{flag: &cli.IntFlag{Category: catWorkload, Hidden: true, Name: "user-context-prompt-length", Usage: "give every synthetic conversation a user context prompt of its own of N tokens, sent as a user message after the system prompt in each of its requests"}, path: "input.prompt.prefix_prompt.user_context_prompt_length", field: func(c *Config) any { return &c.UserContextLength }},
	{flag: &cli.Float64Flag{Category: catMedia, Name: "image-width-mean", Usage: "synthetic images: width in pixels (mean); with --image-height-mean turns images on (chat only)"}, path: "input.image.width.mean", field: func(c *Config) any { return &c.ImageWidthMean }},
	{flag: &cli.Float64Flag{Category: catMedia, Hidden: true, Name: "image-width-stddev", Usage: "synthetic images: width standard deviation"}, path: "input.image.width.stddev", field: func(c *Config) any { return &c.ImageWidthStddev }},
	{flag: &cli.Float64Flag{Category: catMedia, Name: "image-height-mean", Usage: "synthetic images: height in pixels (mean)"}, path: "input.image.height.mean", field: func(c *Config) any { return &c.ImageHeightMean }},
	{flag: &cli.Float64Flag{Category: catMedia, Hidden: true, Name: "image-height-stddev", Usage: "synthetic images: height standard deviation"}, path: "input.image.height.stddev", field: func(c *Config) any { return &c.ImageHeightStddev }},
	{flag: &cli.StringFlag{Category: catMedia, Name: "image-format", Value: "png", Usage: "png, jpeg or random (each image either)"}, path: "input.image.format", field: func(c *Config) any { return &c.ImageFormat }},
	{flag: &cli.IntFlag{Category: catMedia, Hidden: true, Name: "image-batch-size", Aliases: []string{"batch-size-image"}, Value: 1, Usage: "images per request"}, path: "input.image.batch_size", field: func(c *Config) any { return &c.ImageBatchSize }},
	{flag: &cli.StringFlag{Category: catMedia, Name: "image-source", Value: "noise", Usage: "noise (seeded, incompressible, 4 variants per size) or a folder of .png/.jpg/.gif images resized to each size"}, path: "input.image.source", field: func(c *Config) any { return &c.ImageSource }},
	{flag: &cli.StringFlag{Category: catMedia, Hidden: true, Name: "image-source-sampling", Value: "random-with-replacement", Usage: "which folder image each image starts from: random-with-replacement, shuffle-cycle or sequential-cycle"}, path: "input.image.source_sampling", field: func(c *Config) any { return &c.ImageSourceSampling }},
	{flag: &cli.Float64Flag{Category: catMedia, Name: "audio-length-mean", Usage: "synthetic audio: clip length in seconds (mean); positive turns audio on (chat only)"}, path: "input.audio.length.mean", field: func(c *Config) any { return &c.AudioLengthMean }},
	{flag: &cli.Float64Flag{Category: catMedia, Hidden: true, Name: "audio-length-stddev", Usage: "synthetic audio: clip length standard deviation"}, path: "input.audio.length.stddev", field: func(c *Config) any { return &c.AudioLengthStddev }},
	{flag: &cli.StringFlag{Category: catMedia, Name: "audio-format", Value: "wav", Usage: "wav (mp3 is refused: no pure-Go encoder)"}, path: "input.audio.format", field: func(c *Config) any { return &c.AudioFormat }},
	{flag: &cli.StringSliceFlag{Category: catMedia, Hidden: true, Name: "audio-sample-rates", Value: cli.NewStringSlice("16"), Usage: "sample rates in kHz each clip draws one of"}, path: "input.audio.sample_rates", field: func(c *Config) any { return &c.AudioSampleRates }, many: true},
	{flag: &cli.StringSliceFlag{Category: catMedia, Hidden: true, Name: "audio-depths", Value: cli.NewStringSlice("16"), Usage: "bit depths (8, 16, 24, 32) each clip draws one of"}, path: "input.audio.depths", field: func(c *Config) any { return &c.AudioDepths }, many: true},
	{flag: &cli.IntFlag{Category: catMedia, Hidden: true, Name: "audio-num-channels", Value: 1, Usage: "1 (mono) or 2 (stereo)"}, path: "input.audio.num_channels", field: func(c *Config) any { return &c.AudioChannels }},
	{flag: &cli.IntFlag{Category: catMedia, Hidden: true, Name: "audio-batch-size", Aliases: []string{"batch-size-audio"}, Value: 1, Usage: "audio clips per request"}, path: "input.audio.batch_size", field: func(c *Config) any { return &c.AudioBatchSize }},
	{flag: &cli.Float64Flag{Category: catMedia, Hidden: true, Name: "mock-prefill-per-image", Usage: "the embedded mock (no --url): milliseconds its TTFT grows per image"}, path: "mock.prefill_per_image_ms", field: func(c *Config) any { return ms(&c.MockPrefillPerImage) }},
	{flag: &cli.Float64Flag{Category: catMedia, Hidden: true, Name: "mock-prefill-per-audio-second", Usage: "the embedded mock (no --url): milliseconds its TTFT grows per second of audio"}, path: "mock.prefill_per_audio_second_ms", field: func(c *Config) any { return ms(&c.MockPrefillPerAudioSecond) }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "conversation-turn-mean", Aliases: []string{"session-turns-mean"}, Value: 1, Usage: "synthetic conversations: turns each (mean); later turns carry the earlier ones and the replies"}, path: "input.conversation.turn.mean", field: func(c *Config) any { return &c.TurnsMean }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "conversation-turn-stddev", Aliases: []string{"session-turns-stddev"}, Usage: "synthetic conversations: turns standard deviation"}, path: "input.conversation.turn.stddev", field: func(c *Config) any { return &c.TurnsStddev }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "num-dataset-entries", Aliases: []string{"num-prompts"}, Value: 100, Usage: "synthetic conversations (or random_pool draws) to build and reuse, as AIPerf (each value of a sweep its own, seeded --random-seed + the value's index); 0: one per session, so no prompt repeats"}, path: "input.conversation.num_dataset_entries", field: func(c *Config) any { return &c.NumDatasetEntries }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "dataset-sampling-strategy", Usage: "which conversation each session takes: sequential, random (with replacement) or shuffle (without, reshuffled each pass); default shuffle for synthetic and random_pool, sequential for files"}, path: "input.dataset_sampling_strategy", field: func(c *Config) any { return &c.SamplingStrategy }},
	{flag: &cli.IntFlag{Category: catWorkload, Hidden: true, Name: "batch-size-text", Aliases: []string{"prompt-batch-size", "batch-size", "b"}, Value: 1, Usage: "embeddings types: texts a request (each a synthetic prompt of --isl tokens)"}, path: "input.prompt.batch_size", field: func(c *Config) any { return &c.TextBatchSize }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "rankings-passages-mean", Value: 1, Usage: "rankings types: passages per query (generated) when the dataset gives none"}, path: "input.rankings.passages.mean", field: func(c *Config) any { return &c.RankingsPassagesMean }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "rankings-passages-stddev", Usage: "rankings types: passages per query standard deviation"}, path: "input.rankings.passages.stddev", field: func(c *Config) any { return &c.RankingsPassagesStddev }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "rankings-passages-prompt-token-mean", Value: 550, Usage: "rankings types: tokens per generated passage (mean)"}, path: "input.rankings.passages.prompt_token_mean", field: func(c *Config) any { return &c.RankingsPassageTokens }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "rankings-passages-prompt-token-stddev", Usage: "rankings types: tokens per generated passage standard deviation"}, path: "input.rankings.passages.prompt_token_stddev", field: func(c *Config) any { return &c.RankingsPassageTokensStddev }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "rankings-query-prompt-token-mean", DefaultText: "--isl", Usage: "rankings types: synthetic query length in tokens (mean)"}, path: "input.rankings.query.prompt_token_mean", field: func(c *Config) any { return &c.RankingsQueryTokens }},
	{flag: &cli.IntFlag{Category: catWorkload, Name: "rankings-query-prompt-token-stddev", DefaultText: "--isl-stddev", Usage: "rankings types: synthetic query length standard deviation"}, path: "input.rankings.query.prompt_token_stddev", field: func(c *Config) any { return &c.RankingsQueryTokensStddev }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "tokenizer", Usage: "tokenizer to build prompts and count tokens with (default: the model's): builtin (the embedded Qwen3), a tokenizer.json file or folder, or a Hugging Face model id, read from the local Hugging Face cache or downloaded into it once"}, path: "tokenizer.name", field: func(c *Config) any { return &c.Tokenizer }},
	{flag: &cli.StringFlag{Category: catWorkload, Name: "tokenizer-revision", Value: "main", Usage: "Hub revision (branch, tag or commit) of a tokenizer named by its model id"}, path: "tokenizer.revision", field: func(c *Config) any { return &c.TokenizerRevision }},
	{flag: &cli.BoolFlag{Category: catWorkload, Name: "use-server-token-count", Usage: "count input and output tokens from the server's usage (ISL too: the server's prompt count, its chat template included), not with the tokenizer (which still builds the prompts)"}, path: "endpoint.use_server_token_count", field: func(c *Config) any { return &c.UseServerTokenCount }},
	{flag: &cli.BoolFlag{Hidden: true, Category: catWorkload, Name: "apply-chat-template", Usage: "count a chat request's input tokens as the model's chat template renders its messages (tokenizer_config.json), and size synthetic prompts for the template's wrapping"}, path: "tokenizer.apply_chat_template", field: func(c *Config) any { return &c.ApplyChatTemplate }},
	{flag: &cli.BoolFlag{Category: catWorkload, Name: "retokenize-output", Usage: "count output tokens by re-tokenizing the streamed text even when a response carries the server's usage.completion_tokens (AIPerf's way; by default the server's count gives OSL and ITL, and the tokenizer's is kept beside it)"}, path: "endpoint.retokenize_output", field: func(c *Config) any { return &c.RetokenizeOutput }},
	{flag: &cli.Uint64Flag{Category: catWorkload, Name: "random-seed", DefaultText: "random, drawn per run and kept in input_config", Usage: "seed for prompts and arrival times (same seed, same requests)"}, path: "input.random_seed", field: func(c *Config) any { return &c.Seed }},

	{flag: &cli.StringSliceFlag{Category: catRequest, Name: "extra-inputs", Usage: "extra request body fields: key:value items (JSON values parsed; several after one flag, or a:1,b:2) or a JSON object"}, path: "input.extra", field: func(c *Config) any { return &c.ExtraInputs },
		export: func(c *Config, _ http.Header) any { return redactExtras(c.ExtraInputs) }, many: true, whole: true},
	{flag: &cli.StringSliceFlag{Category: catRequest, Name: "header", Aliases: []string{"H"}, Usage: "extra HTTP headers: \"Name: value\" items (several after one flag, or A:1,B:2) or a JSON object"}, path: "input.headers", field: func(c *Config) any { return &c.Headers },
		export: func(_ *Config, h http.Header) any { return redactHeaders(h) }, many: true, whole: true},
	{flag: &cli.StringFlag{Category: catRequest, Name: "api-key", EnvVars: []string{"OPENAI_API_KEY"}, Usage: "sent as Authorization: Bearer (x-api-key for --endpoint-type messages, x-goog-api-key for gemini, api-key with --auth-type azure; never exported or logged)"}, path: "endpoint.api_key", field: func(c *Config) any { return &c.APIKey },
		export: func(c *Config, _ http.Header) any { return redactValue(c.APIKey) }},
	{flag: &cli.BoolFlag{Category: catRequest, Name: "use-legacy-max-tokens", Usage: "send the output cap as max_tokens instead of max_completion_tokens (for servers that ignore the newer name)"}, path: "endpoint.use_legacy_max_tokens", field: func(c *Config) any { return &c.UseLegacyMaxTokens }},
	{flag: &cli.BoolFlag{Category: catRequest, Name: "per-chunk-usage", Usage: "ask for the running usage on every streamed chunk (stream_options.continuous_usage_stats, as vLLM names it), so chunks that carry several tokens are counted exactly"}, path: "endpoint.per_chunk_usage", field: func(c *Config) any { return &c.PerChunkUsage }},
	{flag: &cli.BoolFlag{Category: catRequest, Name: "no-cap-guard", Usage: "let a streamed response run past 4× its output cap (by default it is ended there and recorded as output_cap_exceeded, instead of running to the request timeout)"}, path: "endpoint.no_cap_guard", field: func(c *Config) any { return &c.NoCapGuard }},
	{flag: &cli.StringFlag{Category: catRequest, Name: "connection-reuse-strategy", Value: "pooled", Usage: "pooled (shared keep-alive pool), never (a connection per request) or sticky-user-sessions (one connection per conversation session)"}, path: "endpoint.connection_reuse_strategy", field: func(c *Config) any { return &c.ConnectionReuse }},
	{flag: &cli.BoolFlag{Category: catRequest, Name: "follow-redirects", Usage: "follow the server's redirects (default: a 3xx is an error record naming its Location); one to another origin goes without credentials (Authorization, x-api-key, api-key, cookies, every -H header), one that would turn the POST into a GET is an error record"}, path: "endpoint.follow_redirects", field: func(c *Config) any { return &c.FollowRedirects }},
	{flag: &cli.IntFlag{Category: catRequest, Name: "max-response-mib", Value: 64, Usage: "largest response body, in MiB: a longer one ends its request as a response_too_large error record"}, path: "endpoint.max_response_mib", field: func(c *Config) any { return &c.MaxResponseMiB }},
	{flag: &cli.StringFlag{Category: catRequest, Name: "connection-retries", Value: "1", Usage: "1: re-send a request once on a fresh connection when the server closed a reused one before answering (a server that had read it sees it twice); 0: make it an error record"}, path: "endpoint.connection_retries", field: func(c *Config) any { return &c.ConnectionRetries },
		export: func(c *Config, _ http.Header) any { return c.Retries() }},
	{flag: &cli.StringFlag{Category: catRequest, Name: "session-header", Usage: "header carrying one id per conversation session, e.g. X-Correlation-ID (for session-affine routers)"}, path: "endpoint.session_header", field: func(c *Config) any { return &c.SessionHeader }},
	{flag: &cli.Float64Flag{Category: catRequest, Name: "request-timeout-seconds", Value: 21600, Usage: "per-request limit, the whole stream included (AIPerf's 6 h; the run's end and its grace period still cancel what is left)"}, path: "endpoint.timeout_seconds", field: func(c *Config) any { return Secs(&c.Timeout) }},
	{flag: &cli.StringFlag{Category: catRequest, Name: "timestamps", Value: "kernel", Usage: "what times each token: kernel (the socket's receive stamp, immune to a busy client; Linux, HTTP/1.1) or read (when the client read it)"}, path: "endpoint.timestamps", field: func(c *Config) any { return &c.Timestamps }},
	{flag: &cli.StringFlag{Category: catRequest, Name: "goodput", Usage: "SLOs, e.g. \"time_to_first_token:200 inter_token_latency:20\" (ms)"}, path: "input.goodput", field: func(c *Config) any { return &c.Goodput }},

	{flag: &cli.BoolFlag{Category: catTelemetry, Name: "no-gpu-telemetry", Usage: "do not sample local GPUs through NVML"}, path: "no_gpu_telemetry", field: func(c *Config) any { return &c.NoGPUTelemetry }},
	{flag: &cli.StringSliceFlag{Category: catTelemetry, Name: "gpu-telemetry", Usage: "DCGM exporter URLs to scrape (several after one flag); bare, pynvml or dashboard: the default (local GPUs through NVML)"}, path: "gpu_telemetry", field: func(c *Config) any { return &c.GPUTelemetryURLs }, many: true},
	{flag: &cli.Float64Flag{Category: catTelemetry, Name: "gpu-telemetry-interval", Value: 1, Usage: "seconds between GPU samples"}, path: "gpu_telemetry_interval", field: func(c *Config) any { return Secs(&c.GPUInterval) }},
	{flag: &cli.Float64Flag{Category: catTelemetry, Name: "server-metrics-interval", Usage: "seconds between /metrics scrapes (default: --gpu-telemetry-interval)"}, path: "server_metrics_interval", field: func(c *Config) any { return Secs(&c.ServerInterval) }},
	{flag: &cli.Float64Flag{Category: catTelemetry, Name: "server-metrics-timeout", Value: 5, Usage: "seconds one /metrics scrape may take, whatever the interval (a busy server answers late; a late answer keeps its own time, and scrapes never overlap)"}, path: "server_metrics_timeout", field: func(c *Config) any { return Secs(&c.ServerTimeout) }},
	{flag: &cli.StringSliceFlag{Category: catTelemetry, Name: "server-metrics", Usage: "Prometheus /metrics URLs to scrape besides the target's own (several after one flag)"}, path: "server_metrics", field: func(c *Config) any { return &c.ServerMetricsURLs }, many: true},
	{flag: &cli.BoolFlag{Category: catTelemetry, Name: "no-server-metrics", Usage: "do not scrape the server's /metrics"}, path: "no_server_metrics", field: func(c *Config) any { return &c.NoServerMetrics }},

	{flag: &cli.StringFlag{Category: catLoad, Name: "control-addr", Usage: "serve live controls on this address, e.g. 127.0.0.1:9090 (a bare port binds loopback; name a host to accept others): GET /control, POST /control/{set,step,double,halve,pause,resume}"}, path: "loadgen.control_addr", field: func(c *Config) any { return &c.ControlAddr }},
	{flag: &cli.StringFlag{Category: catLoad, Name: "control-token", EnvVars: []string{"SURGE_CONTROL_TOKEN"}, Usage: "the token the control port asks for, as Authorization: Bearer, X-Surge-Token or ?token= (default: a random one, printed at start)"}, path: "loadgen.control_token", field: func(c *Config) any { return &c.ControlToken },
		export: func(c *Config, _ http.Header) any { return redactValue(c.ControlToken) }},
	{flag: &cli.StringSliceFlag{Category: catLoad, Name: "precision", Usage: "keep the load going until a percentile or throughput is that precise, e.g. time_to_first_token:p99:±5% (its 95% interval's half-width; several after one flag): checked each second after 100 requests, per stage of a sweep; --request-count and --benchmark-duration are then caps (default 10 minutes)"}, path: "loadgen.precision", field: func(c *Config) any { return &c.Precision }, many: true},
	{flag: &cli.StringFlag{Category: catOutput, Name: "trim", DefaultText: "none", Usage: "auto: the headline numbers are those of the steady state the data shows (MSER-5: the warm-up transient and the drain left out); none: the whole run's (the steady state is reported beside them either way)"}, path: "output.trim", field: func(c *Config) any { return &c.Trim }},
	{flag: &cli.StringFlag{Category: catLoad, Name: "stop-on", Usage: "stop early when a condition holds for a window, e.g. \"time_to_first_token:p95:2000@30s error_rate:0.1@10s kv_cache_usage>=0.99@5s\""}, path: "loadgen.stop_on", field: func(c *Config) any { return &c.StopOn }},
	{flag: &cli.StringFlag{Category: catShard, Name: "shard", Usage: "run shard i of N (i from 0 to N-1) of the plan, e.g. 0/4: each of N load hosts sends its 1/N (every N-th session start, 1/N of the concurrency, every N-th user); merge their exports with surge merge"}, path: "loadgen.shard", field: func(c *Config) any { return &c.Shard }},
	{flag: &cli.IntFlag{Category: catShard, Name: "shards", Usage: "split the plan over N load hosts, this one's index from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job sets it)"}, path: "loadgen.shards", field: func(c *Config) any { return &c.Shards }},
	{flag: &cli.StringFlag{Category: catShard, Name: "start-at", Usage: "start issuing at this instant (RFC 3339, e.g. 2026-05-01T12:00:00Z), so every shard starts together; a late start is reported, never hidden"}, path: "loadgen.start_at", field: func(c *Config) any { return &c.StartAt }},
	{flag: &cli.StringFlag{Category: catOutput, Name: ConfigFlag, Aliases: []string{"f"}, Usage: "YAML file of settings: flags by their long names (isl: 128) or nested as input_config (loadgen: {concurrency: 4}); the command line wins (docs/config-file.md)"}, path: "config_file", field: func(c *Config) any { return &c.ConfigFile }},
	{flag: &cli.StringFlag{Category: catOutput, Name: "ui", Aliases: []string{"ui-type"}, Usage: "dashboard, simple (a progress line a second), progress (a line on stderr every 10 s) or none (default: dashboard on a terminal, progress otherwise; simple with -v)"}, path: "service.ui_type", field: func(c *Config) any { return &c.UI }},
	{flag: &cli.BoolFlag{Category: catOutput, Name: "wide", Usage: "print AIPerf's whole summary table (every metric's avg, min, max, p99, p90, p50, std) and every interval, however wide; the default is the headline numbers, to fit the terminal"}, path: "output.wide", field: func(c *Config) any { return &c.Wide }},
	{flag: &cli.StringFlag{Category: catOutput, Name: "output-artifact-dir", Aliases: []string{"artifact-dir"}, Usage: "export folder (default artifacts/<model>-<endpoint>-<mode><value>)"}, path: "output.artifact_directory", field: func(c *Config) any { return &c.ArtifactDir }},
	{flag: &cli.StringFlag{Category: catOutput, Name: "log-level", Usage: "TRACE, DEBUG, INFO (default), NOTICE, WARNING, SUCCESS, ERROR or CRITICAL: DEBUG and TRACE add surge's debug lines (and pick --ui simple); WARNING and above keep its notes off stderr"}, path: "service.log_level", field: func(c *Config) any { return &c.LogLevel }},
	{flag: &cli.BoolFlag{Category: catOutput, Name: "verbose", Aliases: []string{"v"}, Usage: "--log-level DEBUG"}, path: "service.verbose", field: func(c *Config) any { return &c.Verbose }},
	{flag: &cli.BoolFlag{Category: catOutput, Name: "extra-verbose", Aliases: []string{"vv"}, Usage: "--log-level TRACE"}, path: "service.extra_verbose", field: func(c *Config) any { return &c.ExtraVerbose }},
	{flag: &cli.BoolFlag{Category: catOutput, Name: "report", Usage: "also write report.html (as surge report does) in the export folder at the end"}, path: "output.report", field: func(c *Config) any { return &c.Report }},
	{flag: &cli.BoolFlag{Category: catOutput, Name: "auto-plot", Usage: "also draw the report's charts as PNG files into plots/ in the export folder at the end, as AIPerf's --auto-plot"}, path: "output.auto_plot", field: func(c *Config) any { return &c.AutoPlot },
		export: plotted},
	{flag: &cli.BoolFlag{Category: catOutput, Hidden: true, Name: "no-auto-plot", Usage: "draw no PNG charts (the default)"}, path: "output.no_auto_plot", field: func(c *Config) any { return &c.NoAutoPlot }},
	{flag: &cli.BoolFlag{Category: catOutput, Hidden: true, Name: "export-outputs-json", Usage: "also write outputs.json: every response's generated text with its ids and metrics, as AIPerf's"}, path: "output.export_outputs_json", field: func(c *Config) any { return &c.ExportOutputs }},
	{flag: &cli.StringFlag{Category: catOutput, Name: "profile-export-prefix", Aliases: []string{"profile-export-file"}, Usage: "base name of the exports: foo writes foo.json, foo.csv, foo.jsonl, foo_raw.jsonl, foo_timeslices.{json,csv} (a known suffix such as .json is dropped)"}, path: "output.profile_export_prefix", field: func(c *Config) any { return &c.ExportPrefix }},
	{flag: &cli.StringFlag{Category: catOutput, Name: "export-level", Aliases: []string{"profile-export-level"}, Value: "records", Usage: "summary (the summary files only), records (and the per-request JSONL) or raw (and <base>_raw.jsonl: every request body and response event as sent and read)"}, path: "output.export_level", field: func(c *Config) any { return &c.ExportLevel }},
	{flag: &cli.StringFlag{Category: catOutput, Name: "slice-duration", Usage: "also summarise each window of this length (seconds, or 30s, 5m, 2h) into <base>_timeslices.{json,csv}, as AIPerf's timeslices"}, path: "output.slice_duration", field: func(c *Config) any { return &c.SliceDuration }},
	{flag: &cli.StringFlag{Category: catOutput, Name: "history", Usage: "add the run to this history database (default: $XDG_DATA_HOME/surge/history.db; docs/history.md)"}, path: "output.history", field: func(c *Config) any { return &c.History }},
	{flag: &cli.BoolFlag{Category: catOutput, Name: "no-history", Usage: "record the run in no history database"}, path: "output.no_history", field: func(c *Config) any { return &c.NoHistory }},
	{flag: &cli.StringFlag{Category: catOutput, Name: "history-label", Usage: "the run's name in the history (compare --baseline history:label=NAME)"}, path: "output.history_label", field: func(c *Config) any { return &c.HistoryLabel }},
	{flag: &cli.Float64Flag{Category: catOutput, Name: "cost-per-hour", Usage: "the server's price in US dollars an hour: exports add a million tokens' cost"}, path: "output.cost_per_hour_usd", field: func(c *Config) any { return &c.CostPerHour }},
}

// init adds the rows kept in files of their own (trace.go,
// synthesis.go, warmup.go, hooks.go, multirun.go, network.go, cloud.go): they are options as the rest.
func init() {
	options = append(options, traceOptions()...)
	options = append(options, synthesisOptions()...)
	options = append(options, warmupOptions()...)
	options = append(options, hookOptions()...)
	options = append(options, multiRunOptions()...)
	options = append(options, networkOptions()...)
	options = append(options, adaptiveOptions()...)
	options = append(options, recipeOptions()...)
	options = append(options, nativeOptions()...)
	options = append(options, modelOptions()...)
	options = append(options, cloudOptions()...)
}

// names is o's flag's name and its aliases, as Names gives them without
// the regexp urfave's own flag types run over every name (FlagNames, a v1
// migration aid none of these names needs): flagsFor asks each option's
// twice, for the two commands it binds, which cost ≈ 2 % of the CPU of
// surge --version.
func (o *option) names() []string {
	switch f := o.flag.(type) {
	case *cli.StringFlag:
		return namesOf(f.Name, f.Aliases)
	case *cli.IntFlag:
		return namesOf(f.Name, f.Aliases)
	case *cli.BoolFlag:
		return namesOf(f.Name, f.Aliases)
	case *cli.Uint64Flag:
		return namesOf(f.Name, f.Aliases)
	case *cli.Float64Flag:
		return namesOf(f.Name, f.Aliases)
	case *cli.StringSliceFlag:
		return namesOf(f.Name, f.Aliases)
	}
	return o.flag.Names()
}

// plotted is output.auto_plot as input_config shows it: whether the run
// drew its charts, whichever of the two switches was given.
func plotted(c *Config, _ http.Header) any { return c.AutoPlot && !c.NoAutoPlot }

// ProfileFlags binds every option to c: parsing the command line fills c,
// the defaults included.
func ProfileFlags(c *Config) []cli.Flag { return flagsFor(c, nil) }

// notInSearch names the profile flags a search refuses or has no use for
// (repeats, sweeps, trace replay, ramps that would blur a probe): search still parses them, so each
// answers with its reason, but its --help leaves them out.
var notInSearch = map[string]bool{
	"num-profile-runs": true, "sweep-mode": true, "knee-factor": true, "fixed-schedule": true, "no-fixed-schedule": true,
	"fixed-schedule-auto-offset": true, "fixed-schedule-start-offset": true, "fixed-schedule-end-offset": true,
	"concurrency-ramp-duration": true, "request-rate-ramp-duration": true,
}

// SearchFlags is ProfileFlags for surge search: the same options bound to
// c, those in notInSearch hidden from its --help.
func SearchFlags(c *Config) []cli.Flag { return flagsFor(c, notInSearch) }

// flagsFor binds every option to c, hiding those named in hide.
func flagsFor(c *Config, hide map[string]bool) []cli.Flag {
	out := make([]cli.Flag, 0, len(options)+len(foreignOptions))
	taken := map[string]bool{}
	for _, o := range options {
		names := o.names()
		if hide[names[0]] {
			o.flag = hidden(o.flag)
		}
		out = append(out, bind(o, o.field(c)))
		for _, n := range names {
			taken[n] = true
		}
	}
	out = append(out, &boolFlag{cli.BoolFlag{Name: HelpAIPerfFlag,
		Usage: "list AIPerf's flags that surge accepts without implementing, and what it does with each"}, namesOf(HelpAIPerfFlag, nil)})
	return append(out, foreignFlags(c, taken)...)
}

// hidden returns a copy of f that --help leaves out.
func hidden(f cli.Flag) cli.Flag {
	switch f := f.(type) {
	case *cli.StringFlag:
		g := *f
		g.Hidden = true
		return &g
	case *cli.IntFlag:
		g := *f
		g.Hidden = true
		return &g
	case *cli.BoolFlag:
		g := *f
		g.Hidden = true
		return &g
	case *cli.Float64Flag:
		g := *f
		g.Hidden = true
		return &g
	}
	panic(fmt.Sprintf("cmdline: cannot hide %T", f))
}

// bind returns a copy of o's flag that parses into field. Durations and
// lists become generic flags over values that write c's own types.
func bind(o option, field any) cli.Flag {
	if s, ok := field.(sweepable); ok {
		return bindSweep(o, s)
	}
	switch f := o.flag.(type) {
	case *cli.StringFlag:
		g := *f
		g.Destination = field.(*string)
		return &stringFlag{g, namesOf(g.Name, g.Aliases)}
	case *cli.IntFlag:
		g := *f
		g.Destination = field.(*int)
		return &intFlag{g, namesOf(g.Name, g.Aliases)}
	case *cli.BoolFlag:
		g := *f
		g.Destination = field.(*bool)
		return &boolFlag{g, namesOf(g.Name, g.Aliases)}
	case *cli.Uint64Flag:
		g := *f
		g.Destination = field.(*uint64)
		return &uint64Flag{g, namesOf(g.Name, g.Aliases)}
	case *cli.Float64Flag:
		if d, ok := field.(duration); ok {
			*d.d = time.Duration(f.Value * float64(d.unit)) // the default, shown by --help
			return NewValueFlag(cli.GenericFlag{Category: f.Category, Hidden: f.Hidden, Name: f.Name, Aliases: f.Aliases, Usage: f.Usage, EnvVars: f.EnvVars,
				Value: &DurationValue{d}})
		}
		g := *f
		g.Destination = field.(*float64)
		return &float64Flag{g, namesOf(g.Name, g.Aliases)}
	case *cli.StringSliceFlag:
		// DefaultText: --help shows the default as given, not String's
		// listCopy form (a control byte in the help).
		var dflt string
		if f.Value != nil {
			dflt = strings.Join(f.Value.Value(), ",")
		}
		return &repeatableFlag{cli.GenericFlag{Category: f.Category, Hidden: f.Hidden, Name: f.Name, Aliases: f.Aliases, Usage: f.Usage, EnvVars: f.EnvVars,
			DefaultText: dflt, Value: newListValue(field.(*[]string), f.Value, o.many, o.whole)}, namesOf(f.Name, f.Aliases)}
	}
	panic("flags: no binding for " + o.names()[0])
}

// DurationValue parses a float flag in its unit into a time.Duration.
type DurationValue struct{ duration }

// Forever is a duration given as "inf" (--benchmark-grace-period inf:
// wait for every request).
const Forever = time.Duration(math.MaxInt64)

func (v *DurationValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return errors.New("parse error")
	case math.IsInf(f, 1):
		*v.d = Forever
	case math.IsNaN(f) || math.IsInf(f, -1):
		return errors.New("parse error")
	case math.Abs(f*float64(v.unit)) >= float64(Forever):
		// 1e308 seconds is no "wait for ever": a unit mistake, refused in
		// the flag's own unit (inf says for ever).
		return durationOverflow(v.unit)
	default:
		*v.d = time.Duration(f * float64(v.unit))
	}
	return nil
}

func (v *DurationValue) String() string {
	switch {
	case v.d == nil:
		return ""
	case *v.d == Forever:
		return "inf"
	}
	return strconv.FormatFloat(float64(*v.d)/float64(v.unit), 'g', -1, 64)
}

// ValueFlag is a generic flag whose Names costs no regexp. urfave/cli's
// Names strips every name with one (v1 migration), and before a command
// runs it looks up each flag's names once per name of every flag
// (runFlagActions → IsSet → lookupFlag): over profile's 281 flags that
// was half the CPU of a one-request run. The generic flags (durations,
// lists, AIPerf's options) are three quarters of them. Build one with
// NewValueFlag, which computes its names once.
type ValueFlag struct {
	cli.GenericFlag
	names flagNames
}

// NewValueFlag returns the flag g with its names computed: g's Name and
// Aliases must not change afterwards.
func NewValueFlag(g cli.GenericFlag) *ValueFlag {
	return &ValueFlag{g, namesOf(g.Name, g.Aliases)}
}

// Names is the flag's name and its aliases.
func (f *ValueFlag) Names() []string { return f.names.or(f.Name, f.Aliases) }

// flagNames is a flag's name and its aliases, computed when the flag is
// built: urfave calls Names ≈ 79,000 times before a profile run starts
// (see ValueFlag), and a new slice each time was ≈ 3 % of the CPU of a
// two-request run, most of it in the GC. The slice is shared by every
// call: callers read it and must not change it (its capacity is its
// length, so an append copies it).
type flagNames []string

func namesOf(name string, aliases []string) flagNames {
	return slices.Clip(append([]string{name}, aliases...))
}

// or returns n, or the names from name and aliases for a flag built
// without them (a ValueFlag literal).
func (n flagNames) or(name string, aliases []string) []string {
	if n != nil {
		return n
	}
	return namesOf(name, aliases)
}

// The bound copies of urfave's own flag types, with Names as ValueFlag's.
type (
	stringFlag struct {
		cli.StringFlag
		names flagNames
	}
	intFlag struct {
		cli.IntFlag
		names flagNames
	}
	boolFlag struct {
		cli.BoolFlag
		names flagNames
	}
	uint64Flag struct {
		cli.Uint64Flag
		names flagNames
	}
	float64Flag struct {
		cli.Float64Flag
		names flagNames
	}
)

func (f *stringFlag) Names() []string  { return f.names.or(f.Name, f.Aliases) }
func (f *intFlag) Names() []string     { return f.names.or(f.Name, f.Aliases) }
func (f *boolFlag) Names() []string    { return f.names.or(f.Name, f.Aliases) }
func (f *uint64Flag) Names() []string  { return f.names.or(f.Name, f.Aliases) }
func (f *float64Flag) Names() []string { return f.names.or(f.Name, f.Aliases) }

// repeatableFlag is a generic flag that --help shows as repeatable, as it
// shows urfave's own slice flags.
type repeatableFlag struct {
	cli.GenericFlag
	names flagNames
}

// Names is the flag's name and its aliases (see ValueFlag).
func (f *repeatableFlag) Names() []string { return f.names.or(f.Name, f.Aliases) }

// IsSliceFlag reports that the flag may be given more than once.
func (*repeatableFlag) IsSliceFlag() bool { return true }

// String is the flag's help line (the embedded flag's would not see
// IsSliceFlag).
func (f *repeatableFlag) String() string { return cli.FlagStringer(f) }

// listValue collects a repeatable flag. Like urfave's string slices it
// splits an item on commas, unless whole.
type listValue struct {
	p           *[]string
	many, whole bool
	dflt        bool // *p holds the default, which the first value replaces
}

// newListValue binds p, set to the flag's default if it has one.
func newListValue(p *[]string, dflt *cli.StringSlice, many, whole bool) *listValue {
	v := &listValue{p: p, many: many, whole: whole}
	if dflt != nil && len(dflt.Value()) > 0 {
		*p, v.dflt = dflt.Value(), true
	}
	return v
}

// TakesMany reports whether the flag takes every value up to the next
// flag (expandArgs).
func (v *listValue) TakesMany() bool { return v.many }

// listCopy marks String's form. urfave copies a flag's value to its
// aliases by Set(String()); that copy must replace the list, not extend it.
const listCopy = "\x00"

func (v *listValue) Set(s string) error {
	if rest, ok := strings.CutPrefix(s, listCopy); ok {
		*v.p, v.dflt = strings.Split(rest, listCopy), false
		return nil
	}
	if v.dflt {
		*v.p, v.dflt = nil, false
	}
	if v.whole {
		*v.p = append(*v.p, s)
		return nil
	}
	*v.p = append(*v.p, strings.Split(s, ",")...)
	return nil
}

func (v *listValue) String() string {
	if v.p == nil || len(*v.p) == 0 {
		return ""
	}
	return listCopy + strings.Join(*v.p, listCopy)
}

// InputConfig is the configuration as exports show it, nested as AIPerf
// nests its own (endpoint, input, loadgen, output, tokenizer, …): every
// flag's effective value at its row's path, and AIPerf's flags surge does
// not implement where they were given. Secrets are redacted; headers are
// the headers as sent.
func (c *Config) InputConfig(headers http.Header) map[string]any {
	out := map[string]any{}
	for _, o := range options {
		setPath(out, o.path, o.value(c, headers))
	}
	for i := range foreignOptions {
		f := &foreignOptions[i]
		vals, ok := c.Foreign[f.names()[0]]
		if !ok {
			continue
		}
		var v any = vals
		switch {
		case f.kind == argSwitch:
			v = vals[0] == "true"
		case f.kind == argValue:
			v = vals[len(vals)-1]
		}
		setPath(out, f.path, v)
	}
	return out
}

// value is the row's field as input_config shows it, in the flag's units.
func (o *option) value(c *Config, headers http.Header) any {
	if o.export != nil {
		return o.export(c, headers)
	}
	switch p := o.field(c).(type) {
	case sweepable:
		return p.exportValue()
	case *string:
		return *p
	case *int:
		return *p
	case *bool:
		return *p
	case *float64:
		return *p
	case *uint64:
		return *p
	case *[]string:
		if *p == nil {
			return []string{} // a list, as AIPerf's, even when empty
		}
		return *p
	case duration:
		if *p.d == Forever {
			return "inf"
		}
		return float64(*p.d) / float64(p.unit)
	}
	panic("flags: no value for " + o.names()[0])
}

// FlagAt names the flag whose value input_config keeps at path ("" for
// none).
func FlagAt(path string) string {
	for _, o := range options {
		if o.path == path {
			return "--" + o.names()[0]
		}
	}
	return ""
}

// setPath sets m's value at a dotted path, making the maps on the way.
func setPath(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// PathValue is m's value at a dotted path.
func PathValue(m map[string]any, path string) (any, bool) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		var ok bool
		if m, ok = m[p].(map[string]any); !ok {
			return nil, false
		}
	}
	v, ok := m[parts[len(parts)-1]]
	return v, ok
}

// SecondsFlagValue is a flag value that reads seconds (or "inf") into d, as
// AIPerf's duration flags do.
func SecondsFlagValue(d *time.Duration) *DurationValue { return &DurationValue{Secs(d)} }
