package guidellm

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/peers"
)

// benchmarkTool names v0.6's command in messages.
const benchmarkTool = "guidellm benchmark"

// benchmarkFlags are `guidellm benchmark [run]`'s options (v0.6,
// guidellm/__main__.py), each with what surge does with it or why it
// refuses it.
var benchmarkFlags = []peers.Flag{
	{Name: "target", Kind: peers.Value, Usage: "the server (--url); a trailing /v1 is dropped, as GuideLLM drops it"},
	{Name: "data", Kind: peers.Value, Usage: "synthetic data: prompt_tokens=N,output_tokens=M (and _stdev, turns) as key=value or JSON; files and Hub datasets are refused"},
	{Name: "profile", Aliases: []string{"rate-type"}, Kind: peers.Value, Default: "sweep", Usage: "synchronous, concurrent, throughput, constant, poisson, async or sweep (one surge run per benchmark)"},
	{Name: "rate", Kind: peers.Value, Usage: "the profile's numbers: streams (concurrent), requests/s (constant, poisson, async), the sweep's size, throughput's max concurrency"},
	{Name: "backend", Aliases: []string{"backend-type"}, Kind: peers.Value, Default: "openai_http", Usage: "openai_http only (vllm_python runs vLLM in-process: refused)"},
	{Name: "backend-kwargs", Aliases: []string{"backend-args"}, Kind: peers.Value, Usage: "JSON: target, model, request_format, api_key, timeout, extras (merged into every body), max_tokens, http2, follow_redirects; the rest refused"},
	{Name: "model", Kind: peers.Value, Usage: "the model sent (-m); none: the server's first"},
	{Name: "request-format", Aliases: []string{"request-type"}, Kind: peers.Value, Usage: "chat_completions or /v1/chat/completions (default), text_completions or /v1/completions"},
	{Name: "processor", Kind: peers.Value, Usage: "the tokenizer (--tokenizer; default the model's)"},
	{Name: "processor-args", Kind: peers.Value, Refused: "surge loads a tokenizer.json with no arguments"},
	{Name: "data-args", Kind: peers.Value, Refused: "surge's synthetic data takes no loader arguments (Hub datasets: surge profile --hf-dataset)"},
	{Name: "data-samples", Kind: peers.Value, Default: "-1", Usage: "-1 only: surge draws synthetic prompts as it sends them"},
	{Name: "data-column-mapper", Kind: peers.Value, Refused: "synthetic data has no columns to map (Hub datasets: surge profile --hf-column)"},
	{Name: "data-preprocessors", Kind: peers.Value, Refused: "surge applies no GuideLLM preprocessors"},
	{Name: "data-preprocessors-kwargs", Kind: peers.Value, Refused: "surge applies no GuideLLM preprocessors"},
	{Name: "data-finalizer", Kind: peers.Value, Refused: "surge builds requests its own way (the generative finalizer's)"},
	{Name: "data-sampler", Kind: peers.Value, Usage: "shuffle: no effect on synthetic data, which has no order"},
	{Name: "data-num-workers", Kind: peers.Value, Usage: "no effect: surge builds prompts in its own process"},
	{Name: "dataloader-kwargs", Kind: peers.Value, Refused: "surge has no data loader to configure"},
	{Name: "random-seed", Kind: peers.Value, Default: "42", Usage: "the seed (--random-seed)"},
	{Name: "output-dir", Kind: peers.Value, Usage: "where --outputs go (default: the current folder)"},
	{Name: "outputs", Kind: peers.Value, Usage: "json, yaml, csv or file names by extension (default json and csv: benchmarks.json, benchmarks.csv); console is the summary; html is refused"},
	{Name: "output-path", Kind: peers.Value, Usage: "a folder for the outputs, or one file (its type by extension)"},
	{Name: "disable-console", Aliases: []string{"disable-console-outputs"}, Kind: peers.Switch, Usage: "no summary and no progress (--ui none)"},
	{Name: "disable-console-interactive", Aliases: []string{"disable-progress"}, Kind: peers.Switch, Usage: "no progress display (--ui none)"},
	{Name: "warmup", Aliases: []string{"warmup-percent"}, Kind: peers.Value, Usage: "the start left out of the metrics: a share below 1, seconds or requests, or {percent, value, mode}"},
	{Name: "cooldown", Aliases: []string{"cooldown-percent"}, Kind: peers.Value, Usage: "the end left out of the metrics, as --warmup"},
	{Name: "rampup", Kind: peers.Value, Default: "0", Usage: "seconds to ramp concurrency or rate up (--concurrency-ramp-duration, --request-rate-ramp-duration)"},
	{Name: "sample-requests", Aliases: []string{"output-sampling"}, Kind: peers.Value, Usage: "requests of each status kept in the report (default: all)"},
	{Name: "max-seconds", Kind: peers.Value, Usage: "each benchmark's length (--benchmark-duration; what is in flight then is cancelled: incomplete)"},
	{Name: "max-requests", Kind: peers.Value, Usage: "each benchmark's requests (--request-count)"},
	{Name: "max-errors", Kind: peers.Value, Refused: "surge stops on an error rate over a window (surge profile --stop-on error_rate:R@30s, --failed-request-threshold), not on an error count"},
	{Name: "max-error-rate", Kind: peers.Value, Refused: "GuideLLM judges its rate over a window of requests; surge's --stop-on error_rate:R@WINDOW judges it over time"},
	{Name: "max-global-error-rate", Kind: peers.Value, Refused: "surge stops on --failed-request-threshold (a share of the whole run's requests), not GuideLLM's global rate"},
	{Name: "over-saturation", Kind: peers.Value, Refused: "surge has no over-saturation detector: surge search finds the load a server sustains"},
	{Name: "detect-saturation", Aliases: []string{"default-over-saturation"}, Kind: peers.Switch, Refused: "surge has no over-saturation detector: surge search finds the load a server sustains"},
	{Name: "scenario", Aliases: []string{"c"}, Kind: peers.Value, Refused: "surge reads no GuideLLM scenario: give its settings as flags"},
}

// parseBenchmark reads a `guidellm benchmark [run]` command line (v0.6).
func parseBenchmark(argv []string) (*plan, error) {
	d := peers.Dialect{Tool: benchmarkTool}
	a, err := peers.Parse(argv, benchmarkFlags, d)
	if err != nil {
		return nil, err
	}
	p := &plan{version: 1, tool: benchmarkTool, console: !a.Has("disable-console"),
		progress: !a.Has("disable-console") && !a.Has("disable-console-interactive"), sample: -1, maxSeconds: math.NaN()}
	usage := func(format string, x ...any) error { return cmdline.Usagef(benchmarkTool+": "+format, x...) }
	args := &peers.Object{}

	// Data.
	data := a.Values("data")
	switch len(data) {
	case 0:
		return nil, usage("--data is required (e.g. --data prompt_tokens=256,output_tokens=128)")
	case 1:
	default:
		return nil, usage("several --data sources are refused: surge sends one dataset")
	}
	cfg, err := keyValues(data[0])
	if err != nil || looksLikeFile(data[0]) {
		return nil, usage("--data %q is refused: surge takes GuideLLM's synthetic data (prompt_tokens=N,output_tokens=M); for files and Hub datasets use surge profile --input-file or --hf-dataset", data[0])
	}
	if p.data, err = synthetic(benchmarkTool, cfg); err != nil {
		return nil, err
	}
	args.Set("data", data)

	// Profile.
	p.profile = strOr(a, "profile", "sweep")
	r, err := rates(benchmarkTool, a.Values("rate"))
	if err != nil {
		return nil, err
	}
	if err := p.setProfile(r); err != nil {
		return nil, err
	}
	args.Set("profile", p.profile)
	if len(r) > 0 {
		args.Set("rate", r)
	} else {
		args.Set("rate", nil)
	}

	// Backend.
	if b := strOr(a, "backend", "openai_http"); b != "openai_http" {
		return nil, usage("--backend %s is refused: surge is its own HTTP client (openai_http); vllm_python runs vLLM inside GuideLLM", b)
	}
	args.Set("backend", "openai_http")
	bk := &peers.Object{}
	if v, ok := a.Value("backend-kwargs"); ok {
		if bk, err = keyValues(v); err != nil {
			return nil, usage("--backend-kwargs %q: %v", v, err)
		}
	}
	for _, f := range []string{"target", "model", "request-format"} {
		if v, ok := a.Value(f); ok {
			bk.Set(strings.ReplaceAll(f, "-", "_"), v)
		}
	}
	if err := p.setBackend(bk); err != nil {
		return nil, err
	}
	for _, k := range []string{"target", "model", "request_format"} {
		if _, ok := bk.Get(k); !ok {
			bk.Set(k, nil)
		}
	}
	args.Set("backend_kwargs", bk)

	// Tokenizer and data options that change nothing here.
	p.processor = strOr(a, "processor", "")
	args.Set("processor", nilIfEmpty(p.processor))
	args.Set("processor_args", nil)
	args.Set("data_args", []any{})
	if v, ok := a.Value("data-samples"); ok && strings.TrimSpace(v) != "-1" {
		return nil, usage("--data-samples %s is refused: surge draws synthetic prompts as it sends them (-1)", v)
	}
	args.Set("data_samples", -1)
	args.Set("data_column_mapper", "generative_column_mapper")
	args.Set("data_preprocessors", []string{"encode_media"})
	args.Set("data_preprocessors_kwargs", &peers.Object{})
	args.Set("data_finalizer", "generative")
	args.Set("data_collator", "generative")
	if v, ok := a.Value("data-sampler"); ok && v != "shuffle" {
		return nil, usage("--data-sampler %s: GuideLLM takes shuffle only", v)
	} else if ok {
		args.Set("data_sampler", "shuffle")
	} else {
		args.Set("data_sampler", nil)
	}
	workers := 1
	if v, ok := a.Value("data-num-workers"); ok {
		if workers, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
			return nil, usage("--data-num-workers %q: not an integer", v)
		}
	}
	args.Set("data_num_workers", workers)
	args.Set("dataloader_kwargs", nil)
	p.seed = 42
	if v, ok := a.Value("random-seed"); ok {
		if p.seed, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || p.seed < 0 {
			return nil, usage("--random-seed %q: want an integer ≥ 0", v)
		}
	}
	args.Set("random_seed", p.seed)

	// Outputs.
	outs, dir, err := p.setOutputs(a)
	if err != nil {
		return nil, err
	}
	args.Set("outputs", outs)
	args.Set("output_dir", dir)

	// Benchmarker and constraints.
	if v, ok := a.Value("sample-requests"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return nil, usage("--sample-requests %q: want an integer ≥ 0", v)
		}
		p.sample = n
		args.Set("sample_requests", n)
	} else {
		args.Set("sample_requests", nil)
	}
	for _, f := range []struct {
		flag string
		dst  *transient
	}{{"warmup", &p.warmup}, {"cooldown", &p.cooldown}} {
		if v, ok := a.Value(f.flag); ok {
			t, raw, err := transientOf(benchmarkTool, "--"+f.flag, v)
			if err != nil {
				return nil, err
			}
			*f.dst = t
			args.Set(f.flag, raw)
		} else {
			args.Set(f.flag, nil)
		}
	}
	if v, ok := a.Value("rampup"); ok {
		if p.rampup, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || p.rampup < 0 {
			return nil, usage("--rampup %q: want seconds ≥ 0", v)
		}
	}
	args.Set("rampup", p.rampup)
	args.Set("prefer_response_metrics", true)
	p.constraints = &peers.Object{}
	if v, ok := a.Value("max-seconds"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f > 0) {
			return nil, usage("--max-seconds %q: want seconds > 0", v)
		}
		p.maxSeconds = f
		args.Set("max_seconds", numeric(v, f))
		p.constraints.Set("max_seconds", numeric(v, f))
	} else {
		args.Set("max_seconds", nil)
	}
	if v, ok := a.Value("max-requests"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, usage("--max-requests %q: want an integer ≥ 1", v)
		}
		p.maxRequests = n
		args.Set("max_requests", n)
		p.constraints.Set("max_requests", n)
	} else {
		args.Set("max_requests", nil)
	}
	if math.IsNaN(p.maxSeconds) && p.maxRequests == 0 {
		return nil, usage("give --max-seconds or --max-requests: GuideLLM runs synthetic data until it is stopped; surge needs a bound")
	}
	for _, k := range []string{"max_errors", "max_error_rate", "max_global_error_rate", "over_saturation"} {
		args.Set(k, nil)
	}
	p.args = args
	return p, nil
}

// numeric is a number flag as GuideLLM's args keep it: an int when given
// as one.
func numeric(text string, f float64) any {
	if !strings.ContainsAny(text, ".eE") && f == math.Trunc(f) {
		return int(f)
	}
	return f
}

func strOr(a peers.Args, name, def string) string {
	if v, ok := a.Value(name); ok {
		return v
	}
	return def
}

// looksLikeFile reports whether --data names a file or a Hub dataset
// rather than synthetic data.
func looksLikeFile(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		return false
	}
	if !strings.Contains(s, "=") {
		return true
	}
	for _, ext := range []string{".json", ".jsonl", ".csv", ".txt", ".parquet", ".yaml", ".yml"} {
		if strings.HasSuffix(strings.ToLower(s), ext) {
			return true
		}
	}
	return false
}

// setProfile checks the profile's rates as GuideLLM's profiles resolve
// them.
func (p *plan) setProfile(r []float64) error {
	usage := func(format string, x ...any) error { return cmdline.Usagef(p.tool+": "+format, x...) }
	for _, v := range r {
		if !(v > 0) {
			return usage("--rate %g: want a positive number", v)
		}
	}
	switch p.profile {
	case "synchronous":
		if len(r) > 0 {
			return usage("SynchronousProfile does not accept a rate parameter")
		}
	case "concurrent":
		if len(r) == 0 {
			return usage("the concurrent profile needs --rate STREAMS[,STREAMS…]")
		}
		for _, v := range r {
			p.streams = append(p.streams, int(v))
		}
	case "throughput":
		if len(r) == 0 {
			return usage("ThroughputProfile requires a rate parameter (--rate MAX_CONCURRENCY)")
		}
		p.maxConc = int(r[0])
	case "constant", "poisson", "async":
		if len(r) == 0 {
			return usage("AsyncProfile requires a rate parameter (--rate REQUESTS_PER_SECOND[,…])")
		}
		p.rates = r
		p.strategyType = p.profile
		if p.profile == "async" {
			p.strategyType = "constant"
		}
	case "sweep":
		p.sweepSize = 10
		if len(r) > 0 {
			p.sweepSize = int(r[0])
		}
		if p.sweepSize < 2 {
			return usage("sweep_size %d: want at least 2", p.sweepSize)
		}
		p.strategyType = "constant"
	default:
		return usage("--profile %q: choose from synchronous, concurrent, throughput, constant, poisson, async, sweep", p.profile)
	}
	return nil
}

// setBackend reads the OpenAI HTTP backend's arguments.
func (p *plan) setBackend(bk *peers.Object) error {
	usage := func(format string, x ...any) error { return cmdline.Usagef(p.tool+": "+format, x...) }
	p.extras = map[string]any{}
	p.headers = map[string]string{}
	for _, k := range bk.Keys() {
		v, _ := bk.Get(k)
		switch k {
		case "kind", "type_":
		case "target":
			s, _ := v.(string)
			p.target = strings.TrimSuffix(strings.TrimRight(s, "/"), "/v1")
		case "model":
			p.model, _ = v.(string)
		case "request_format":
			s, _ := v.(string)
			f, err := requestFormat(p.tool, s)
			if err != nil {
				return err
			}
			p.format = f
		case "api_key":
			s, _ := v.(string)
			if s != "" {
				p.headers["Authorization"] = "Bearer " + s
			}
		case "timeout":
			f, _, err := floatOf(bk, k)
			if err != nil || f <= 0 {
				return usage("backend timeout %v: want seconds > 0", v)
			}
			p.timeout = f
		case "extras":
			o, ok := v.(*peers.Object)
			if !ok {
				return usage("backend extras: want an object of body fields")
			}
			body := o
			if b, ok := o.Get("body"); ok {
				if bo, ok := b.(*peers.Object); ok {
					body = bo
				}
			}
			for _, bkk := range body.Keys() {
				x, _ := body.Get(bkk)
				p.extras[bkk] = plainValue(x)
			}
		case "max_tokens", "max_completion_tokens":
			n, _, err := intOf(bk, k)
			if err != nil || n < 1 {
				return usage("backend %s %v: want an integer ≥ 1", k, v)
			}
			p.extras[k] = n
		case "stream":
			if b, ok := v.(bool); !ok || !b {
				return usage("backend stream false is refused: surge times tokens from the stream")
			}
		case "http2", "follow_redirects":
			// GuideLLM's client over http:// speaks HTTP/1.1 as surge does;
			// surge follows redirects within an origin's rules.
		default:
			return usage("backend argument %q is refused: surge sets it its own way (docs/network-edges.md)", k)
		}
	}
	if p.target == "" {
		return usage("Backend 'openai_http' requires a target parameter. Please provide --target with a valid endpoint URL.")
	}
	if p.format == "" {
		p.format = "chat"
	}
	return nil
}

// plainValue turns report objects back into plain JSON values.
func plainValue(v any) any {
	if o, ok := v.(*peers.Object); ok {
		m := map[string]any{}
		for _, k := range o.Keys() {
			x, _ := o.Get(k)
			m[k] = plainValue(x)
		}
		return m
	}
	return v
}

// setOutputs reads --outputs, --output-dir and --output-path as GuideLLM
// resolves them, and returns the args' outputs and output_dir.
func (p *plan) setOutputs(a peers.Args) ([]string, string, error) {
	usage := func(format string, x ...any) error { return cmdline.Usagef(p.tool+": "+format, x...) }
	cwd, _ := os.Getwd()
	dir := cwd
	outs := []string{"json", "csv"}
	if v, ok := a.Value("output-dir"); ok {
		dir = v
	}
	if given := a.Values("outputs"); len(given) > 0 {
		outs = nil
		for _, g := range given {
			for _, o := range strings.Split(g, ",") {
				if o = strings.TrimSpace(o); o != "" {
					outs = append(outs, o)
				}
			}
		}
	}
	if v, ok := a.Value("output-path"); ok {
		if a.Has("output-dir") {
			return nil, "", usage("Cannot use --output-path with --output-dir.")
		}
		if st, err := os.Stat(v); err == nil && st.IsDir() {
			dir = v
		} else {
			dir, outs = filepath.Dir(v), []string{filepath.Base(v)}
		}
	}
	for _, o := range outs {
		kind, path := o, ""
		if strings.Contains(o, ".") {
			kind = strings.ToLower(strings.TrimPrefix(filepath.Ext(o), "."))
			path = filepath.Join(dir, o)
		} else {
			path = filepath.Join(dir, "benchmarks."+o)
		}
		switch kind {
		case "json", "yaml", "csv":
			p.outputs = append(p.outputs, output{kind: kind, path: path})
		case "yml":
			p.outputs = append(p.outputs, output{kind: "yaml", path: path})
		case "console":
			p.console = true
		case "html":
			return nil, "", usage("output html is refused: surge writes its own HTML report (surge report DIR)")
		default:
			return nil, "", usage("Output format '%s' is not registered. Available formats: json, yaml, csv, console", kind)
		}
	}
	return outs, dir, nil
}
