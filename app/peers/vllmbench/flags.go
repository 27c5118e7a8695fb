package vllmbench

import "github.com/surgebench/surge/app/peers"

// The dataset names `vllm bench serve --dataset-name` takes.
var datasetNames = []string{"sharegpt", "burstgpt", "sonnet", "random", "random-mm", "random-rerank", "hf", "custom",
	"prefix_repetition", "spec_bench", "txt-slices"}

// flags are `vllm bench serve`'s flags (vllm/benchmarks/serve.py and
// datasets/arg_utils.py), each with what surge does with it, or why it
// refuses it.
var flags = []peers.Flag{
	// Target.
	{Name: "backend", Aliases: []string{"endpoint-type"}, Kind: peers.Value, Default: "openai", Usage: "openai and vllm send the Completions API (--endpoint-type completions), openai-chat the Chat Completions API (chat), streamed; the other backends are refused by name"},
	{Name: "base-url", Kind: peers.Value, Usage: "the server (--url); the request URL is this plus --endpoint"},
	{Name: "host", Kind: peers.Value, Default: "127.0.0.1", Usage: "the server's host when no --base-url"},
	{Name: "port", Kind: peers.Value, Default: "8000", Usage: "the server's port when no --base-url"},
	{Name: "endpoint", Kind: peers.Value, Default: "/v1/completions", Usage: "the request path (--endpoint); it must end as the backend's API does"},
	{Name: "header", Kind: peers.Many, Usage: "KEY=VALUE headers sent with every request (--header KEY:VALUE)"},
	{Name: "model", Kind: peers.Value, Usage: "the model sent (-m); none: the first the server's /v1/models lists"},
	{Name: "served-model-name", Kind: peers.Value, Usage: "the model name sent, --model then naming the tokenizer"},
	{Name: "tokenizer", Kind: peers.Value, Usage: "the tokenizer (--tokenizer: a Hugging Face id or a path; default: the model's)"},
	{Name: "tokenizer-mode", Kind: peers.Value, Default: "auto", Usage: "auto, hf and slow read the model's tokenizer.json, as surge does; mistral and plugin modes are refused"},
	{Name: "trust-remote-code", Kind: peers.Switch, Usage: "no effect: surge runs no code from the Hub (it reads tokenizer.json only)"},
	{Name: "lora-modules", Kind: peers.Many, Usage: "each request names one of these at random (-m … --model-selection-strategy random), the tokenizer being --model's"},
	{Name: "ready-check-timeout-sec", Kind: peers.Value, Default: "600", Usage: "wait this long for the server to serve the model (--wait-for-model-timeout); 0: no check before the run (--skip-preflight)"},
	{Name: "extra-body", Kind: peers.Value, Usage: "a JSON object merged into every body (--extra-inputs)"},
	{Name: "logprobs", Kind: peers.Value, Usage: "logprobs sent in Completions bodies (vLLM's chat backend leaves it out, as surge does)"},
	{Name: "request-id-prefix", Kind: peers.Value, Refused: "surge names every request with its own x-request-id (the records' x_request_id), which is not a prefix and a number"},

	// Load.
	{Name: "num-prompts", Kind: peers.Value, Default: "1000", Usage: "requests sent (--request-count)"},
	{Name: "request-rate", Kind: peers.Value, Default: "inf", Usage: "requests per second (--request-rate); inf: every request at once, at most --max-concurrency in flight (--concurrency)"},
	{Name: "burstiness", Kind: peers.Value, Default: "1.0", Usage: "the arrivals' gamma shape: 1 Poisson, inf constant, else gamma (--arrival-pattern, --arrival-smoothness)"},
	{Name: "max-concurrency", Kind: peers.Value, Usage: "requests in flight at most (--concurrency: with a rate, a cap)"},
	{Name: "num-warmups", Kind: peers.Value, Default: "0", Usage: "warmup requests, drained before the run (--warmup-request-count, --warmup-grace-period inf); surge warms up with the dataset's prompts, vLLM with copies of its first"},
	{Name: "seed", Kind: peers.Value, Default: "0", Usage: "the seed of prompts and arrivals (--random-seed)"},
	{Name: "ramp-up-strategy", Kind: peers.Value, Refused: "vLLM raises the rate request by request; surge raises it over time: use surge profile --request-rate-series or --request-rate-ramp-duration"},
	{Name: "ramp-up-start-rps", Kind: peers.Value, Refused: "goes with --ramp-up-strategy, refused"},
	{Name: "ramp-up-end-rps", Kind: peers.Value, Refused: "goes with --ramp-up-strategy, refused"},
	{Name: "profile", Kind: peers.Switch, Usage: "start and stop the server's profiler around the run (--server-profiler)"},
	{Name: "disable-tqdm", Kind: peers.Switch, Usage: "no progress display (--ui none)"},

	// Request body.
	{Name: "ignore-eos", Kind: peers.Switch, Usage: "ignore_eos: true in every body (vLLM sets it for the random datasets anyway)"},
	{Name: "temperature", Kind: peers.Value, Usage: "sent in every body (default 0.0: greedy, as vLLM sends)"},
	{Name: "top-p", Kind: peers.Value, Usage: "sent in every body as top_p"},
	{Name: "top-k", Kind: peers.Value, Usage: "sent in every body as top_k"},
	{Name: "min-p", Kind: peers.Value, Usage: "sent in every body as min_p"},
	{Name: "frequency-penalty", Kind: peers.Value, Usage: "sent in every body as frequency_penalty"},
	{Name: "presence-penalty", Kind: peers.Value, Usage: "sent in every body as presence_penalty"},
	{Name: "repetition-penalty", Kind: peers.Value, Usage: "sent in every body as repetition_penalty"},
	{Name: "use-beam-search", Kind: peers.Switch, Refused: "surge sends no beam search (vLLM's own serve benchmark does not either)"},
	{Name: "input-len", Kind: peers.Value, Usage: "the dataset's input length (--random-input-len)"},
	{Name: "output-len", Kind: peers.Value, Usage: "the dataset's output length (--random-output-len, --prefix-repetition-output-len, --custom-output-len)"},

	// Results.
	{Name: "label", Kind: peers.Value, Usage: "the result's label and its file name's start (default: --backend)"},
	{Name: "save-result", Kind: peers.Switch, Usage: "write vLLM's result JSON"},
	{Name: "save-detailed", Kind: peers.Switch, Usage: "with per-request lists: input_lens, output_lens, ttfts, itls, generated_texts, errors"},
	{Name: "append-result", Kind: peers.Switch, Usage: "append the result as a line to the file"},
	{Name: "metadata", Kind: peers.Many, Usage: "KEY=VALUE pairs written into the result JSON"},
	{Name: "result-dir", Kind: peers.Value, Usage: "the folder of the result JSON (default: the current one)"},
	{Name: "result-filename", Kind: peers.Value, Usage: "the result JSON's name (default: LABEL-RATEqps[-concurrencyN]-MODEL-DATE.json)"},
	{Name: "percentile-metrics", Kind: peers.Value, Usage: "which of ttft, tpot, itl, e2el get statistics (default ttft,tpot,itl)"},
	{Name: "metric-percentiles", Kind: peers.Value, Default: "99", Usage: "the percentiles reported"},
	{Name: "goodput", Kind: peers.Many, Usage: "ttft:MS tpot:MS e2el:MS: a request is good when it meets each (also surge's --goodput)"},

	// Datasets.
	{Name: "dataset-name", Kind: peers.Value, Default: "random", Usage: "random, sharegpt, burstgpt, custom, prefix_repetition and hf (the datasets surge has too); the others are refused by name"},
	{Name: "dataset-path", Kind: peers.Value, Usage: "the dataset's file, or its Hugging Face id (hf)"},
	{Name: "no-stream", Kind: peers.Switch, Usage: "no effect: surge reads a Hub dataset's files as a stream either way and stops when it has its rows"},
	{Name: "no-oversample", Kind: peers.Switch, Refused: "surge sends a file's prompts again when it has fewer than the requests (vLLM's default)"},
	{Name: "skip-chat-template", Kind: peers.Switch, Usage: "custom: send each prompt as the file holds it (without it vLLM wraps prompts in the chat template, which surge refuses)"},
	{Name: "disable-shuffle", Kind: peers.Switch, Usage: "send a file's prompts in order (--dataset-sampling-strategy sequential)"},
	{Name: "random-input-len", Kind: peers.Value, Default: "1024", Usage: "the prompt length in tokens (--isl)"},
	{Name: "random-output-len", Kind: peers.Value, Default: "128", Usage: "the output length in tokens (--osl)"},
	{Name: "random-range-ratio", Kind: peers.Value, Default: "0.0", Usage: "lengths drawn uniformly from [len·(1−r), len·(1+r)] (--random-range-ratio: the same rule, not AIPerf's stddev)"},
	{Name: "random-prefix-len", Kind: peers.Value, Default: "0", Usage: "a prefix of this many tokens shared by every prompt, before its own tokens (--prompt-prefix-pool-size 1 --prompt-prefix-length)"},
	{Name: "random-batch-size", Kind: peers.Value, Default: "1", Usage: "1 only: batches are for vLLM's embedding backends, which surge refuses"},
	{Name: "common-prefix-len", Kind: peers.Value, Refused: "surge shares one prefix, --random-prefix-len"},
	{Name: "no-reranker", Kind: peers.Switch, Refused: "for vLLM's rerank backends, which surge refuses"},
	{Name: "sharegpt-output-len", Kind: peers.Value, Refused: "surge caps each ShareGPT reply at its recorded length and has no override"},
	{Name: "custom-output-len", Kind: peers.Value, Default: "256", Usage: "the output cap of every custom prompt (--osl)"},
	{Name: "prefix-repetition-prefix-len", Kind: peers.Value, Default: "256", Usage: "each prefix's length (--prompt-prefix-length)"},
	{Name: "prefix-repetition-suffix-len", Kind: peers.Value, Default: "256", Usage: "each prompt's own length after its prefix (--isl)"},
	{Name: "prefix-repetition-num-prefixes", Kind: peers.Value, Default: "10", Usage: "the prefixes the prompts share (--prompt-prefix-pool-size); surge draws one per prompt at random, vLLM gives each an equal share"},
	{Name: "prefix-repetition-output-len", Kind: peers.Value, Default: "128", Usage: "the output length (--osl)"},
	{Name: "hf-subset", Kind: peers.Value, Usage: "the Hub dataset's subset (--hf-subset)"},
	{Name: "hf-split", Kind: peers.Value, Usage: "the Hub dataset's split (--hf-split)"},
	{Name: "hf-name", Kind: peers.Value, Usage: "the Hub id of a --dataset-path that is a local copy (it picks the dataset's reader)"},
	{Name: "hf-output-len", Kind: peers.Value, Refused: "surge caps a Hub dataset's turns as its reader for that dataset does and has no override"},
	{Name: "sonnet-input-len", Kind: peers.Value, Refused: "surge has no sonnet dataset: use random"},
	{Name: "sonnet-output-len", Kind: peers.Value, Refused: "surge has no sonnet dataset: use random"},
	{Name: "sonnet-prefix-len", Kind: peers.Value, Refused: "surge has no sonnet dataset: use random"},
	{Name: "spec-bench-output-len", Kind: peers.Value, Refused: "surge has no spec_bench dataset (AIPerf's spec_al_* sets are surge profile --public-dataset names)"},
	{Name: "spec-bench-category", Kind: peers.Value, Refused: "surge has no spec_bench dataset (AIPerf's spec_al_* sets are surge profile --public-dataset names)"},
	{Name: "blazedit-min-distance", Kind: peers.Value, Refused: "surge sends every Blazedit row (its edit-distance filter is vLLM's alone)"},
	{Name: "blazedit-max-distance", Kind: peers.Value, Refused: "surge sends every Blazedit row (its edit-distance filter is vLLM's alone)"},
	{Name: "random-mm-base-items-per-request", Kind: peers.Value, Default: "1", Usage: "images per request (--image-batch-size)"},
	{Name: "random-mm-num-mm-items-range-ratio", Kind: peers.Value, Default: "0", Usage: "0 only: surge sends the same number of images with every request"},
	{Name: "random-mm-limit-mm-per-prompt", Kind: peers.Value, Usage: "checked against the images per request, as vLLM clamps them"},
	{Name: "random-mm-bucket-config", Kind: peers.Value, Usage: "one image size only, {(H, W, 1): p} (--image-height-mean, --image-width-mean): surge draws every image of one size, not a mix, and sends no video"},

	// Newer vLLM's flags surge does not take.
	{Name: "plot-timeline", Kind: peers.Switch, Refused: "surge draws its own charts: surge report DIR (the requests' timeline is in profile_export.jsonl)"},
	{Name: "timeline-itl-thresholds", Kind: peers.Value, Refused: "goes with --plot-timeline, refused"},
	{Name: "plot-dataset-stats", Kind: peers.Switch, Refused: "surge draws its own charts: surge report DIR"},
	{Name: "probe-request-rate", Kind: peers.Value, Refused: "surge sends no probe requests beside the workload"},
	{Name: "enable-multimodal-chat", Kind: peers.Switch, Refused: "for vLLM's custom audio and image datasets, which surge refuses"},
	{Name: "custom-ensure-client-side-data", Kind: peers.Switch, Refused: "for vLLM's custom image dataset, which surge refuses"},
	{Name: "bfcl-categories", Kind: peers.Value, Refused: "surge has no reader for BFCL (surge's tool workloads: docs/agentic.md)"},
	{Name: "speed-bench-category", Kind: peers.Value, Refused: "SPEED-Bench needs its prepare script; surge refuses it (docs/workloads.md)"},
	{Name: "speed-bench-dataset-subset", Kind: peers.Value, Refused: "SPEED-Bench needs its prepare script; surge refuses it (docs/workloads.md)"},
}
