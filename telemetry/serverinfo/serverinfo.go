// Package serverinfo asks an inference server what it is, where its own
// endpoints say so: vLLM's /version, SGLang's /get_server_info,
// llama.cpp's /props, TGI's /info and Ollama's /api/version, with the
// OpenAI /v1/models list beside them; and the GPUs' names and driver from a
// telemetry.GPUSource (NVML). A result remembers what measured it: the
// engine, its version, the model and the engine settings that change
// performance (tensor parallelism, dtype, context length, batch limits).
//
// Every answer is bounded (its size, a second for each request and 3 s
// for the whole probe), and only settings on an allow-list are kept: a
// server's own account of its arguments may hold its API key (SGLang's
// does), which must never reach an export. The endpoints are asked one at
// a time, each on a connection of its own that closes with its answer: a
// small server (llama.cpp with one slot has three HTTP threads) serves
// them all, where requests at once, or connections kept open, would hold
// its threads while the rest wait out their time.
package serverinfo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
)

// Engine names.
const (
	VLLM     = "vllm"
	SGLang   = "sglang"
	LlamaCPP = "llama.cpp"
	TGI      = "tgi"
	Ollama   = "ollama"
)

// Facts is what a server said about itself; an empty field was not said.
type Facts struct {
	// Engine is the serving engine recognised by the endpoint that
	// answered (VLLM, SGLang, …).
	Engine string `json:"engine,omitempty"`
	// Version is the engine's version (llama.cpp: its build, "b4567-1a2b3c").
	Version string `json:"version,omitempty"`
	// Model is the model served (the first of several).
	Model string `json:"model,omitempty"`
	// Flags are the engine's settings that change its performance, as the
	// engine names them (tp_size, max_model_len, n_ctx), values as text.
	Flags map[string]string `json:"flags,omitempty"`
	// GPUs are the accelerators, when a GPU source was given (GPUs).
	GPUs []GPU `json:"gpus,omitempty"`
}

// GPU is one accelerator as NVML names it.
type GPU struct {
	Index     int    `json:"index"`
	Name      string `json:"name,omitempty"`
	MemoryMiB uint64 `json:"memory_mib,omitempty"`
	Driver    string `json:"driver,omitempty"`
}

// Defaults bounding a probe.
const (
	// DefaultTimeout bounds the whole probe: what has not answered by
	// then is left out.
	DefaultTimeout = 3 * time.Second
	// DefaultRequestTimeout bounds each request: a path the server does
	// not answer costs no more.
	DefaultRequestTimeout = time.Second
	// DefaultMaxBody bounds each answer read (llama.cpp's /props carries
	// the chat template, SGLang's every argument).
	DefaultMaxBody = 1 << 20
	// maxFlags and maxValue bound what a server's settings add to a row.
	maxFlags = 64
	maxValue = 256
)

type config struct {
	client           *http.Client
	header           http.Header
	timeout, request time.Duration
	maxBody          int64
	skipped          func(error)
}

// Option configures Probe.
type Option func(*config)

// WithClient sends the probe's requests through c (default: outbound's
// shared client).
func WithClient(c *http.Client) Option { return func(o *config) { o.client = c } }

// WithHeader sends h with every request (the run's credentials: the
// server may want them); nothing of it reaches the Facts.
func WithHeader(h http.Header) Option { return func(o *config) { o.header = h } }

// WithTimeout bounds the whole probe (default DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(o *config) { o.timeout = d } }

// WithRequestTimeout bounds each request (default DefaultRequestTimeout).
func WithRequestTimeout(d time.Duration) Option { return func(o *config) { o.request = d } }

// WithSkipped calls f with each answer the probe could not use for its
// size (a *bounded.TooLargeError naming the path and the bound), so the
// caller can say why a fact is missing.
func WithSkipped(f func(error)) Option { return func(o *config) { o.skipped = f } }

// WithMaxBody bounds each answer read (default DefaultMaxBody); a longer
// one is not read at all.
func WithMaxBody(n int64) Option { return func(o *config) { o.maxBody = n } }

// endpoint is one path asked, and what its answer says when it is the
// engine's shape.
type endpoint struct {
	path   string
	engine string
	parse  func(b []byte) (*Facts, bool)
}

// endpoints in order of precedence: the most specific shape first
// (SGLang's and TGI's answers name their model and version together; a
// bare {"version"} is vLLM's at /version, Ollama's at /api/version).
var endpoints = []endpoint{
	{"/get_server_info", SGLang, ParseSGLang},
	{"/props", LlamaCPP, ParseLlamaCPP},
	{"/info", TGI, ParseTGI},
	{"/version", VLLM, ParseVersion(VLLM)},
	{"/api/version", Ollama, ParseVersion(Ollama)},
}

// ErrNothingSaid is Probe's error when no endpoint answered in a shape it
// knows.
var ErrNothingSaid = errors.New("the server said nothing about itself")

// Probe asks the server at base (scheme://host[:port]) its endpoints one
// at a time, most specific first, until one answers in its engine's
// shape, then its model list, and returns what that answer says, the
// list's first model and its max_model_len added. A server none of whose
// endpoints answered in a known shape is ErrNothingSaid, joined with what
// went wrong (a timeout, a 404, an answer too large).
func Probe(ctx context.Context, base string, opts ...Option) (*Facts, error) {
	cfg := config{timeout: DefaultTimeout, request: DefaultRequestTimeout, maxBody: DefaultMaxBody}
	for _, o := range opts {
		o(&cfg)
	}
	client := cfg.client
	if client == nil {
		client = outbound.NewClient()
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	base = strings.TrimRight(base, "/")
	var errs []error
	ask := func(path string) []byte {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("GET %s: not asked: %w", path, err))
			return nil
		}
		b, err := get(ctx, client, base+path, cfg)
		if err != nil {
			errs = append(errs, err)
			var tl *bounded.TooLargeError
			if errors.As(err, &tl) && cfg.skipped != nil {
				cfg.skipped(err)
			}
		}
		return b
	}
	var facts *Facts
	for _, e := range endpoints {
		b := ask(e.path)
		if b == nil {
			continue
		}
		if f, ok := e.parse(b); ok {
			facts = f
			break
		}
		errs = append(errs, fmt.Errorf("GET %s: not %s's answer", e.path, e.engine))
	}
	models := ParseModels(ask("/v1/models"))
	if facts == nil && models == nil {
		return nil, errors.Join(append([]error{ErrNothingSaid}, errs...)...)
	}
	if facts == nil {
		facts = &Facts{}
	}
	if models != nil {
		if facts.Model == "" {
			facts.Model = models.Model
		}
		for k, v := range models.Flags {
			if _, ok := facts.Flags[k]; !ok {
				if facts.Flags == nil {
					facts.Flags = map[string]string{}
				}
				facts.Flags[k] = v
			}
		}
	}
	return facts, nil
}

// get reads url's answer within cfg's request timeout, at most its
// maxBody bytes, on a connection closed after it; a status other than 200
// or a longer answer is an error.
func get(ctx context.Context, client *http.Client, url string, cfg config) ([]byte, error) {
	if cfg.request > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.request)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range cfg.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	req.Close = true // no connection kept to hold one of the server's threads
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	path := req.URL.Path
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	b, err := outbound.ReadBody(ctx, resp, cfg.maxBody, "the answer to GET "+path)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// object decodes b as a JSON object (numbers kept as written).
func object(b []byte) (map[string]any, bool) {
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// text is a scalar JSON value as text ("" for objects, lists and null),
// cut to maxValue.
func text(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	case bool:
		s = strconv.FormatBool(x)
	default:
		return ""
	}
	if len(s) > maxValue {
		s = s[:maxValue]
	}
	return s
}

// keep copies the allowed keys of m that hold a scalar into flags.
func keep(flags map[string]string, m map[string]any, allowed []string) {
	for _, k := range allowed {
		if len(flags) >= maxFlags {
			return
		}
		if s := text(m[k]); s != "" {
			flags[k] = s
		}
	}
}

func nonEmpty(flags map[string]string) map[string]string {
	if len(flags) == 0 {
		return nil
	}
	return flags
}

// sglangFlags are the ServerArgs SGLang reports that shape its
// performance; the rest (its API key among them) are never kept.
var sglangFlags = []string{
	"tp_size", "dp_size", "pp_size", "ep_size", "dtype", "kv_cache_dtype", "quantization", "context_length",
	"max_running_requests", "max_total_tokens", "max_prefill_tokens", "chunked_prefill_size", "mem_fraction_static",
	"schedule_policy", "attention_backend", "sampling_backend", "page_size", "disable_radix_cache",
	"enable_dp_attention", "disable_cuda_graph", "cuda_graph_max_bs", "speculative_algorithm",
	"speculative_num_steps", "speculative_num_draft_tokens", "enable_torch_compile", "load_balance_method",
	"moe_runner_backend", "disaggregation_mode", "max_req_input_len",
}

// ParseSGLang reads SGLang's /get_server_info: its ServerArgs flattened
// with the scheduler's info, "version" beside them. It is SGLang's when it
// names a version and a model_path.
func ParseSGLang(b []byte) (*Facts, bool) {
	m, ok := object(b)
	if !ok || text(m["version"]) == "" || text(m["model_path"]) == "" {
		return nil, false
	}
	f := &Facts{Engine: SGLang, Version: text(m["version"]), Model: text(m["model_path"]), Flags: map[string]string{}}
	if s := text(m["served_model_name"]); s != "" {
		f.Model = s
	}
	keep(f.Flags, m, sglangFlags)
	f.Flags = nonEmpty(f.Flags)
	return f, true
}

// ParseLlamaCPP reads llama.cpp's /props: build_info is its version,
// total_slots its parallel slots, default_generation_settings.n_ctx a
// slot's context. It is llama.cpp's when it has build_info or
// default_generation_settings.
func ParseLlamaCPP(b []byte) (*Facts, bool) {
	m, ok := object(b)
	if !ok {
		return nil, false
	}
	gen, hasGen := m["default_generation_settings"].(map[string]any)
	if text(m["build_info"]) == "" && !hasGen {
		return nil, false
	}
	f := &Facts{Engine: LlamaCPP, Version: text(m["build_info"]), Flags: map[string]string{}}
	f.Model = text(m["model_alias"])
	if f.Model == "" {
		f.Model = text(m["model_path"])
	}
	keep(f.Flags, m, []string{"total_slots"})
	if hasGen {
		keep(f.Flags, gen, []string{"n_ctx"})
		if p, ok := gen["params"].(map[string]any); ok {
			keep(f.Flags, p, []string{"n_predict"})
		}
	}
	f.Flags = nonEmpty(f.Flags)
	return f, true
}

// tgiFlags are the router settings TGI's /info reports.
var tgiFlags = []string{
	"model_dtype", "model_device_type", "model_sha", "max_concurrent_requests", "max_best_of", "max_stop_sequences",
	"max_input_tokens", "max_input_length", "max_total_tokens", "waiting_served_ratio", "max_batch_total_tokens",
	"max_batch_prefill_tokens", "max_waiting_tokens", "max_batch_size", "max_client_batch_size", "validation_workers",
	"sha", "docker_label", "router",
}

// ParseTGI reads Text Generation Inference's /info. It is TGI's when it
// names a model_id and a version.
func ParseTGI(b []byte) (*Facts, bool) {
	m, ok := object(b)
	if !ok || text(m["model_id"]) == "" || text(m["version"]) == "" {
		return nil, false
	}
	f := &Facts{Engine: TGI, Version: text(m["version"]), Model: text(m["model_id"]), Flags: map[string]string{}}
	keep(f.Flags, m, tgiFlags)
	f.Flags = nonEmpty(f.Flags)
	return f, true
}

// ParseVersion reads a bare {"version": "…"} (vLLM's /version, Ollama's
// /api/version) as engine's.
func ParseVersion(engine string) func(b []byte) (*Facts, bool) {
	return func(b []byte) (*Facts, bool) {
		m, ok := object(b)
		if !ok || text(m["version"]) == "" {
			return nil, false
		}
		return &Facts{Engine: engine, Version: text(m["version"])}, true
	}
}

// ParseModels reads an OpenAI model list: the first model's id, and what
// vLLM adds to it (max_model_len, the root weights); nil when it lists
// none.
func ParseModels(b []byte) *Facts {
	if b == nil {
		return nil
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if d.Decode(&list) != nil || len(list.Data) == 0 {
		return nil
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if id := text(m["id"]); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	f := &Facts{Model: ids[0], Flags: map[string]string{}}
	keep(f.Flags, list.Data[0], []string{"max_model_len", "root"})
	if len(ids) > 1 {
		f.Flags["models"] = text(strings.Join(ids, ","))
	}
	f.Flags = nonEmpty(f.Flags)
	return f
}

// String is the facts in one line: "vllm 0.6.3, model m, tp_size=2, …,
// 2× NVIDIA H100 80GB HBM3 (driver 550.54.15)".
func (f *Facts) String() string {
	if f == nil {
		return "unknown"
	}
	var parts []string
	head := strings.TrimSpace(f.Engine + " " + f.Version)
	if head != "" {
		parts = append(parts, head)
	}
	if f.Model != "" {
		parts = append(parts, "model "+f.Model)
	}
	for _, k := range slices.Sorted(maps.Keys(f.Flags)) {
		parts = append(parts, k+"="+f.Flags[k])
	}
	if g := GPUSummary(f.GPUs); g != "" {
		parts = append(parts, g)
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}

// GPUSummary says what GPUs are in one phrase ("2× NVIDIA H100 80GB HBM3
// (driver 550.54.15)"; mixed models listed each); "" for none.
func GPUSummary(gpus []GPU) string {
	if len(gpus) == 0 {
		return ""
	}
	count := map[string]int{}
	var names []string
	drivers := map[string]bool{}
	for _, g := range gpus {
		if count[g.Name] == 0 {
			names = append(names, g.Name)
		}
		count[g.Name]++
		if g.Driver != "" {
			drivers[g.Driver] = true
		}
	}
	var parts []string
	for _, n := range names {
		label := n
		if label == "" {
			label = "GPU"
		}
		parts = append(parts, fmt.Sprintf("%d× %s", count[n], label))
	}
	s := strings.Join(parts, " + ")
	if len(drivers) > 0 {
		s += " (driver " + strings.Join(slices.Sorted(maps.Keys(drivers)), ", ") + ")"
	}
	return s
}
