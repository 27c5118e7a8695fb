// Package vllmbench is `surge vllm-bench serve`: `vllm bench serve`'s
// command line as vLLM defines it (vllm/benchmarks/serve.py), run by
// surge's engine, with vLLM's summary block on stdout and vLLM's result
// JSON (--save-result) beside surge's own exports, its metrics defined as
// vLLM defines them (its TPOT excludes the first token, its ITLs are the
// gaps between streamed chunks, its percentiles numpy's).
package vllmbench

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/peers"
)

// tool names the command in messages.
const tool = "vllm bench serve"

var dialect = peers.Dialect{Tool: tool, Underscores: true}

// The backends surge runs: the two OpenAI APIs vLLM's openai-compatible
// backends send.
var completionsBackends = []string{"openai", "vllm"}

const chatBackend = "openai-chat"

// refusedBackends are vLLM's other backends, each with why surge refuses it.
var refusedBackends = map[string]string{
	"openai-audio":              "surge's audio requests carry the audio in a chat message, not the transcription API's form upload",
	"openai-embeddings":         "vLLM reports pooling backends with metrics of their own (e2el only); run surge profile --endpoint-type embeddings",
	"openai-embeddings-chat":    "a pooling backend: run surge profile --endpoint-type embeddings",
	"openai-embeddings-clip":    "a pooling backend: run surge profile --endpoint-type embeddings",
	"openai-embeddings-vlm2vec": "a pooling backend: run surge profile --endpoint-type embeddings",
	"infinity-embeddings":       "a pooling backend: run surge profile --endpoint-type embeddings",
	"infinity-embeddings-clip":  "a pooling backend: run surge profile --endpoint-type embeddings",
	"vllm-pooling":              "a pooling backend surge has no endpoint type for",
	"vllm-rerank":               "a pooling backend: run surge profile --endpoint-type rankings",
	"openai-responses":          "surge's responses endpoint reads the Responses stream its own way: run surge profile --endpoint-type responses",
}

// refusedDatasets are vLLM's datasets surge has no equivalent of.
var refusedDatasets = map[string]string{
	"sonnet":        "surge has no sonnet dataset: use random (or custom with --skip-chat-template)",
	"random-rerank": "for vLLM's rerank backends, which surge refuses",
	"spec_bench":    "surge has no spec_bench dataset (AIPerf's spec_al_* sets are surge profile --public-dataset names)",
	"txt-slices":    "surge has no txt-slices dataset: use random, or custom with --skip-chat-template",
	"custom_audio":  "surge sends audio inside a chat message, not vLLM's custom audio requests",
	"custom_image":  "surge's images are synthetic or a folder's (surge profile --image-source), not vLLM's custom image file",
	"custom_mm":     "surge's images are synthetic or a folder's (surge profile --image-source), not vLLM's custom file",
	"speed_bench":   "SPEED-Bench needs its prepare script; surge refuses it (docs/workloads.md)",
	"timed_trace":   "surge replays traces with surge profile --input-file --fixed-schedule",
}

// bench is a `vllm bench serve` command line, read and checked: what surge
// runs for it, and what vLLM's result JSON and summary need.
type bench struct {
	args    peers.Args
	backend string
	label   string // --label ("": none given)
	// baseURL is the server, endpoint the request path.
	baseURL, endpoint string
	// model is --model ("": the server's first); served the name sent
	// (--served-model-name); tokenizer --tokenizer.
	model, served, tokenizer string
	lora                     []string
	numPrompts               int
	// rate is --request-rate (+Inf: every request at once).
	rate       float64
	burstiness float64
	maxConc    int // 0: none
	warmups    int
	seed       int64
	ignoreEOS  bool
	// percentileMetrics and percentiles pick the statistics reported.
	percentileMetrics []string
	percentiles       []float64
	// goodput is --goodput's objectives in ms, by vLLM's names, in order.
	goodput []objective
	// metadata is --metadata's KEY=VALUE pairs, in order.
	metadata                               [][2]string
	saveResult, saveDetailed, appendResult bool
	resultDir, resultFile                  string
	dataset                                data
	extraBody                              map[string]any
	headers                                map[string]string
}

// objective is one --goodput objective: ttft, tpot or e2el, in ms.
type objective struct {
	name string
	ms   float64
}

// usage is a usage error naming this tool.
func usage(format string, a ...any) error {
	return cmdline.Usagef(tool+": "+format, a...)
}

// intFlag reads an int flag as argparse's type=int does.
func intFlag(a peers.Args, name string, def int) (int, error) {
	v, ok := a.Value(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(v), "_", ""))
	if err != nil {
		return 0, usage("argument --%s: invalid int value: %q", name, v)
	}
	return n, nil
}

// floatFlag reads a float flag as argparse's type=float does (inf too).
func floatFlag(a peers.Args, name string, def float64) (float64, error) {
	v, ok := a.Value(name)
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(v), "_", ""), 64)
	if err != nil || math.IsNaN(f) {
		return 0, usage("argument --%s: invalid float value: %q", name, v)
	}
	return f, nil
}

func str(a peers.Args, name, def string) string {
	if v, ok := a.Value(name); ok {
		return v
	}
	return def
}

// parse reads a `vllm bench serve` command line and checks it as vLLM
// does, before any work.
func parse(argv []string) (*bench, error) {
	a, err := peers.Parse(argv, flags, dialect)
	if err != nil {
		return nil, err
	}
	b := &bench{args: a, backend: str(a, "backend", "openai"), label: str(a, "label", "")}
	if why, ok := refusedBackends[b.backend]; ok {
		return nil, usage("--backend %s is refused: %s", b.backend, why)
	}
	if !slices.Contains(completionsBackends, b.backend) && b.backend != chatBackend {
		return nil, usage("argument --backend: invalid choice: %q (choose from %s)", b.backend, strings.Join(backendChoices(), ", "))
	}
	if err := b.parseTarget(a); err != nil {
		return nil, err
	}
	if err := b.parseLoad(a); err != nil {
		return nil, err
	}
	if err := b.parseBody(a); err != nil {
		return nil, err
	}
	if err := b.parseResults(a); err != nil {
		return nil, err
	}
	if b.dataset, err = parseData(a, b); err != nil {
		return nil, err
	}
	// vLLM: the random datasets ignore EOS on the OpenAI-compatible
	// backends, so that every answer runs to its length.
	if b.dataset.name == "random" || b.dataset.name == "random-mm" {
		b.ignoreEOS = true
	}
	return b, nil
}

func backendChoices() []string {
	out := append(slices.Clone(completionsBackends), chatBackend)
	for k := range refusedBackends {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (b *bench) parseTarget(a peers.Args) error {
	b.endpoint = str(a, "endpoint", "/v1/completions")
	if v, ok := a.Value("base-url"); ok {
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return usage("--base-url %q: want http://HOST:PORT or https://…", v)
		}
		b.baseURL = strings.TrimRight(v, "/")
	} else {
		port, err := intFlag(a, "port", 8000)
		if err != nil {
			return err
		}
		host := str(a, "host", "127.0.0.1")
		if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
			host = "[" + host + "]" // vLLM's join_host_port
		}
		b.baseURL = fmt.Sprintf("http://%s:%d", host, port)
	}
	// vLLM checks the request URL's end against its API.
	api := b.baseURL + b.endpoint
	want := []string{"completions", "profile"}
	name := "OpenAI Completions API"
	if b.backend == chatBackend {
		want, name = []string{"chat/completions", "profile"}, "OpenAI Chat Completions API"
	}
	if !slices.ContainsFunc(want, func(s string) bool { return strings.HasSuffix(api, s) }) {
		return usage("%s URL must end with one of: %q (got %s; --endpoint /v1/chat/completions goes with --backend openai-chat)", name, want, api)
	}
	b.model = str(a, "model", "")
	b.served = str(a, "served-model-name", "")
	b.tokenizer = str(a, "tokenizer", "")
	b.lora = a.Values("lora-modules")
	if a.Has("lora-modules") && len(b.lora) == 0 {
		return usage("argument --lora-modules: expected at least one argument")
	}
	switch m := str(a, "tokenizer-mode", "auto"); m {
	case "auto", "hf", "slow":
	default:
		return usage("--tokenizer-mode %s is refused: surge reads the model's tokenizer.json (the Hugging Face fast tokenizer), not %s's", m, m)
	}
	b.headers = map[string]string{}
	for _, h := range a.Values("header") {
		k, v, ok := strings.Cut(h, "=")
		if !ok {
			return usage("Invalid header format %q. Please use KEY=VALUE format.", h)
		}
		b.headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return nil
}

func (b *bench) parseLoad(a peers.Args) (err error) {
	if b.numPrompts, err = intFlag(a, "num-prompts", 1000); err != nil {
		return err
	}
	if b.numPrompts < 1 {
		return usage("--num-prompts %d: want at least 1", b.numPrompts)
	}
	if b.rate, err = floatFlag(a, "request-rate", math.Inf(1)); err != nil {
		return err
	}
	if !(b.rate > 0) {
		return usage("--request-rate %g: want a positive rate or inf", b.rate)
	}
	if b.burstiness, err = floatFlag(a, "burstiness", 1); err != nil {
		return err
	}
	if !(b.burstiness > 0) {
		return usage("A positive burstiness factor is expected, but given %g.", b.burstiness)
	}
	if b.maxConc, err = intFlag(a, "max-concurrency", 0); err != nil {
		return err
	}
	if a.Has("max-concurrency") && b.maxConc < 1 {
		return usage("--max-concurrency %d: want at least 1", b.maxConc)
	}
	if b.warmups, err = intFlag(a, "num-warmups", 0); err != nil {
		return err
	}
	if b.warmups < 0 {
		return usage("--num-warmups %d: want 0 or more", b.warmups)
	}
	seed, err := intFlag(a, "seed", 0)
	if err != nil {
		return err
	}
	b.seed = int64(seed)
	if b.seed < 0 {
		return usage("--seed %d: surge's seeds are not negative", b.seed)
	}
	t, err := intFlag(a, "ready-check-timeout-sec", 600)
	if err != nil {
		return err
	}
	if t < 0 {
		return usage("--ready-check-timeout-sec %d: want 0 (no check) or more", t)
	}
	return nil
}

// samplingFlags are vLLM's sampling flags and the body fields they set.
var samplingFlags = []struct{ flag, field string }{
	{"top-p", "top_p"}, {"top-k", "top_k"}, {"min-p", "min_p"}, {"temperature", "temperature"},
	{"frequency-penalty", "frequency_penalty"}, {"presence-penalty", "presence_penalty"}, {"repetition-penalty", "repetition_penalty"},
}

func (b *bench) parseBody(a peers.Args) error {
	b.ignoreEOS = a.Has("ignore-eos")
	b.extraBody = map[string]any{}
	if b.backend != chatBackend {
		// vLLM's Completions request always carries repetition_penalty 1.0,
		// and logprobs.
		b.extraBody["repetition_penalty"] = 1.0
		if a.Has("logprobs") { // else null, as a server takes its absence
			n, err := intFlag(a, "logprobs", 0)
			if err != nil {
				return err
			}
			b.extraBody["logprobs"] = n
		}
	}
	// vLLM's sampling parameters, then --extra-body over them.
	sampling := map[string]any{}
	for _, s := range samplingFlags {
		if !a.Has(s.flag) {
			continue
		}
		if s.flag == "top-k" {
			n, err := intFlag(a, s.flag, 0)
			if err != nil {
				return err
			}
			sampling[s.field] = n
			continue
		}
		f, err := floatFlag(a, s.flag, 0)
		if err != nil {
			return err
		}
		sampling[s.field] = f
	}
	if _, ok := sampling["temperature"]; !ok {
		sampling["temperature"] = 0.0 // vLLM: greedy unless told
	}
	for k, v := range sampling {
		b.extraBody[k] = v
	}
	if v, ok := a.Value("extra-body"); ok {
		var extra map[string]any
		if err := json.Unmarshal([]byte(v), &extra); err != nil || extra == nil {
			return usage("argument --extra-body: invalid loads value: %q (want a JSON object)", v)
		}
		for k, x := range extra {
			b.extraBody[k] = x
		}
	}
	return nil
}

func (b *bench) parseResults(a peers.Args) error {
	b.saveResult, b.saveDetailed, b.appendResult = a.Has("save-result"), a.Has("save-detailed"), a.Has("append-result")
	b.resultDir, b.resultFile = str(a, "result-dir", ""), str(a, "result-filename", "")
	for _, m := range a.Values("metadata") {
		k, v, ok := strings.Cut(m, "=")
		if !ok {
			return usage("Invalid metadata format %q. Please use KEY=VALUE format.", m)
		}
		b.metadata = append(b.metadata, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	pm := str(a, "percentile-metrics", "ttft,tpot,itl")
	for _, m := range strings.Split(pm, ",") {
		if !slices.Contains([]string{"ttft", "tpot", "itl", "e2el"}, m) {
			return usage("--percentile-metrics %q: %q is not one of ttft, tpot, itl, e2el", pm, m)
		}
		b.percentileMetrics = append(b.percentileMetrics, m)
	}
	ps := str(a, "metric-percentiles", "99")
	for _, p := range strings.Split(ps, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(f >= 0 && f <= 100) {
			return usage("--metric-percentiles %q: %q is not a percentile between 0 and 100", ps, p)
		}
		b.percentiles = append(b.percentiles, f)
	}
	if a.Has("goodput") && len(a.Values("goodput")) == 0 {
		return usage("argument --goodput: expected at least one argument")
	}
	for _, g := range a.Values("goodput") {
		k, v, ok := strings.Cut(g, ":")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || strings.Contains(v, ":") || err != nil {
			return usage(`Invalid format found for service level objectives. Specify service level objectives for goodput as "KEY:VALUE" pairs, where the key is a metric name, and the value is a number in milliseconds (got %q).`, g)
		}
		if !slices.Contains([]string{"ttft", "tpot", "e2el"}, k) {
			return usage("Invalid metric name found, %s: %g. The service level objective name should be one of ['ttft', 'tpot', 'e2el'].", k, f)
		}
		if f < 0 {
			return usage("Invalid value found, %s: %g. The service level objective value should be non-negative.", k, f)
		}
		b.goodput = slices.DeleteFunc(b.goodput, func(o objective) bool { return o.name == k })
		b.goodput = append(b.goodput, objective{k, f})
	}
	return nil
}
