package inferenceperf

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
)

// stage is one load stage: a rate for a duration (constant, poisson), or
// a number of requests at a concurrency (concurrent).
type stage struct {
	rate        float64
	duration    int
	concurrency int
	requests    int
}

// count is the requests the stage sends: rate × duration, or its number.
func (s stage) count() int {
	if s.requests > 0 {
		return s.requests
	}
	return int(s.rate * float64(s.duration))
}

// plan is an inference-perf config, read and checked: the stages surge
// runs, how, and the reports to write.
type plan struct {
	url, model, apiType string
	streaming           bool
	headers             map[string]string
	apiKey              string
	body                map[string]any
	tokenizer           string
	timeout             float64
	seed                int64
	seedGiven           bool
	loadType            string
	stages              []stage
	interval            float64
	maxInFlight         int
	// data: lengths (random, synthetic) or a shared prefix.
	dataType     string
	in, out      distribution
	sharedPrefix *sharedPrefix
	// Reports.
	summary, perStage, perRequest bool
	percentiles                   []float64
	useServerOutputTokens         bool
	maxErrorMessages              int
	storagePath, prefix           string
	config                        map[string]any
}

// sharedPrefix is the shared_prefix data's groups and lengths.
type sharedPrefix struct {
	groups, perGroup            int
	systemLen, questionLen, out int
}

// buildPlan reads the config into a plan, every key taken or refused.
func buildPlan(cfg map[string]any, now time.Time) (*plan, error) {
	p := &plan{config: cfg, headers: map[string]string{}, body: map[string]any{}}
	top, _ := sectionOf("config", cfg)
	for _, k := range []struct{ key, why string }{
		{"metrics", "surge scrapes the model server's own /metrics itself (server_metrics_export.json, docs/server-metrics.md); it queries no Prometheus server: remove the metrics section"},
		{"circuit_breakers", "surge stops a run with surge profile --stop-on and --failed-request-threshold, not inference-perf's circuit breakers"},
	} {
		if err := top.refuse(k.key, k.why); err != nil {
			return nil, err
		}
	}
	steps := []func(*section) error{p.readServer, p.readAPI, p.readTokenizer, p.readLoad, p.readData, p.readReport}
	for _, step := range steps {
		if err := step(top); err != nil {
			return nil, err
		}
	}
	if err := p.readStorage(top, now); err != nil {
		return nil, err
	}
	return p, top.done()
}

func (p *plan) readServer(top *section) error {
	s, err := top.sub("server")
	if err != nil {
		return err
	}
	if len(s.m) == 0 {
		return cmdline.Usagef("%s: the server section is required (server.base_url)", tool)
	}
	typ, err := s.str("type", "vllm")
	if err != nil {
		return err
	}
	switch typ {
	case "vllm", "sglang", "tgi":
	case "mock":
		return cmdline.Usagef("%s: server.type mock is refused: it is inference-perf's in-process mock client; surge sends real requests (surge mock-server serves a mock)", tool)
	default:
		return cmdline.Usagef("%s: server.type %q: want vllm, sglang, tgi or mock", tool, typ)
	}
	if p.url, err = s.str("base_url", ""); err != nil {
		return err
	}
	if p.url == "" {
		return cmdline.Usagef("%s: server.base_url is required", tool)
	}
	if p.model, err = s.str("model_name", ""); err != nil {
		return err
	}
	ignore, err := s.boolean("ignore_eos", true)
	if err != nil {
		return err
	}
	p.body["ignore_eos"] = ignore
	if p.apiKey, err = s.str("api_key", ""); err != nil {
		return err
	}
	for _, k := range []string{"cert_path", "key_path"} {
		if err := s.refuse(k, "surge presents no client TLS certificate"); err != nil {
			return err
		}
	}
	return s.done()
}

func (p *plan) readAPI(top *section) error {
	s, err := top.sub("api")
	if err != nil {
		return err
	}
	typ, err := s.str("type", "completion")
	if err != nil {
		return err
	}
	switch typ {
	case "completion":
		p.apiType = "completions"
	case "chat":
		p.apiType = "chat"
	case "anthropic_messages":
		p.apiType = "messages"
	default:
		return cmdline.Usagef("%s: api.type %q: want completion, chat or anthropic_messages", tool, typ)
	}
	if p.streaming, err = s.boolean("streaming", false); err != nil {
		return err
	}
	if h := s.get("headers"); h != nil {
		m, ok := h.(map[string]any)
		if !ok {
			return cmdline.Usagef("%s: api.headers: want a mapping of header names to values", tool)
		}
		for k, v := range m {
			if strings.HasPrefix(strings.ToLower(k), "x-slo-") {
				return cmdline.Usagef("%s: api.headers %s is refused: surge judges objectives with surge profile --goodput, not per-request SLO headers", tool, k)
			}
			p.headers[k] = fmt.Sprint(v)
		}
	}
	for _, k := range []string{"slo_unit", "slo_tpot_header", "slo_ttft_header"} {
		if err := s.refuse(k, "surge judges objectives with surge profile --goodput, not per-request SLO headers"); err != nil {
			return err
		}
	}
	for _, k := range []string{"session_id_header_key", "session_token_header_key"} {
		if err := s.refuse(k, "for inference-perf's multi-turn session workloads, which surge refuses"); err != nil {
			return err
		}
	}
	if rf := s.get("response_format"); rf != nil {
		r, err := sectionOf("api.response_format", rf)
		if err != nil {
			return err
		}
		typ, err := r.str("type", "json_schema")
		if err != nil {
			return err
		}
		name, err := r.str("name", "structured_output")
		if err != nil {
			return err
		}
		schema := r.get("json_schema")
		switch typ {
		case "json_object":
			p.body["response_format"] = map[string]any{"type": "json_object"}
		case "json_schema":
			p.body["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": name, "schema": schema}}
		default:
			return cmdline.Usagef("%s: api.response_format.type %q: want json_schema or json_object", tool, typ)
		}
		if err := r.done(); err != nil {
			return err
		}
	}
	return s.done()
}

func (p *plan) readTokenizer(top *section) error {
	if !top.has("tokenizer") {
		top.get("tokenizer")
		return nil
	}
	s, err := top.sub("tokenizer")
	if err != nil {
		return err
	}
	if p.tokenizer, err = s.str("pretrained_model_name_or_path", ""); err != nil {
		return err
	}
	if _, err := s.boolean("trust_remote_code", false); err != nil { // surge runs no code from the Hub
		return err
	}
	if err := s.refuse("token", "surge reads the Hugging Face token from HF_TOKEN"); err != nil {
		return err
	}
	return s.done()
}

func (p *plan) readLoad(top *section) error {
	s, err := top.sub("load")
	if err != nil {
		return err
	}
	if p.loadType, err = s.str("type", "constant"); err != nil {
		return err
	}
	switch p.loadType {
	case "constant", "poisson", "concurrent":
	case "trace_replay", "trace_session_replay":
		return cmdline.Usagef("%s: load.type %s is refused: surge replays traces with surge profile --input-file --fixed-schedule", tool, p.loadType)
	default:
		return cmdline.Usagef("%s: load.type %q: want constant, poisson, concurrent, trace_replay or trace_session_replay", tool, p.loadType)
	}
	if p.interval, err = s.num("interval", 1); err != nil {
		return err
	}
	workers, err := s.integer("num_workers", defaultWorkers())
	if err != nil {
		return err
	}
	perWorker, err := s.integer("worker_max_concurrency", 100)
	if err != nil {
		return err
	}
	if workers < 1 || perWorker < 1 {
		return cmdline.Usagef("%s: load.num_workers and worker_max_concurrency must be at least 1", tool)
	}
	p.maxInFlight = workers * perWorker
	if _, err := s.integer("worker_max_tcp_connections", 2500); err != nil { // surge opens a connection per request in flight
		return err
	}
	if s.has("base_seed") {
		n, err := s.integer("base_seed", 0)
		if err != nil {
			return err
		}
		if n < 0 {
			return cmdline.Usagef("%s: load.base_seed %d: surge's seeds are not negative", tool, n)
		}
		p.seed, p.seedGiven = int64(n), true
	}
	if p.timeout, err = s.num("request_timeout", 0); err != nil {
		return err
	}
	for _, k := range []struct{ key, why string }{
		{"sweep", "surge finds the load a server sustains with surge search; inference-perf's saturation sweep is its own"},
		{"trace", "surge replays traces with surge profile --input-file --fixed-schedule"},
		{"circuit_breakers", "surge stops a run with surge profile --stop-on, not inference-perf's circuit breakers"},
		{"lora_traffic_split", "surge shares requests among models evenly or at random (surge profile --model-selection-strategy), not by weights"},
	} {
		if err := s.refuse(k.key, k.why); err != nil {
			return err
		}
	}
	raw, _ := s.get("stages").([]any)
	if len(raw) == 0 {
		return cmdline.Usagef("%s: Load stages must be configured, or sweep must be configured (load.stages)", tool)
	}
	for i, r := range raw {
		st, err := sectionOf(fmt.Sprintf("load.stages[%d]", i), r)
		if err != nil {
			return err
		}
		var g stage
		if p.loadType == "concurrent" {
			if g.requests, err = st.integer("num_requests", 0); err != nil {
				return err
			}
			if g.concurrency, err = st.integer("concurrency_level", 0); err != nil {
				return err
			}
			if g.requests < 1 || g.concurrency < 1 {
				return cmdline.Usagef("%s: load.stages[%d]: a concurrent stage needs num_requests and concurrency_level, both > 0", tool, i)
			}
			for _, k := range []string{"rate", "duration"} {
				if err := st.refuse(k, "set at run time for concurrent stages, not configured"); err != nil {
					return err
				}
			}
		} else {
			if g.rate, err = st.num("rate", 0); err != nil {
				return err
			}
			if g.duration, err = st.integer("duration", 0); err != nil {
				return err
			}
			if !(g.rate > 0) || g.duration < 1 {
				return cmdline.Usagef("%s: load.stages[%d]: a %s stage needs rate > 0 and duration > 0", tool, i, p.loadType)
			}
			for _, k := range []string{"num_requests", "concurrency_level"} {
				if err := st.refuse(k, "num_requests should not be set for CONSTANT/POISSON load types"); err != nil {
					return err
				}
			}
			if g.count() < 1 {
				return cmdline.Usagef("%s: load.stages[%d]: rate %g for %d s sends no request", tool, i, g.rate, g.duration)
			}
		}
		if err := st.done(); err != nil {
			return err
		}
		p.stages = append(p.stages, g)
	}
	return s.done()
}

func (p *plan) readData(top *section) error {
	s, err := top.sub("data")
	if err != nil {
		return err
	}
	if p.dataType, err = s.str("type", "mock"); err != nil {
		return err
	}
	if b, err := s.boolean("use_chat_template", false); err != nil {
		return err
	} else if b {
		return cmdline.Usagef("%s: data.use_chat_template is refused: surge sends prompts unwrapped (the server's chat endpoint applies its template)", tool)
	}
	for _, k := range []struct{ key, why string }{
		{"path", "for data types surge refuses (shareGPT and the dataset files)"},
		{"corpus_file_path", "surge cuts prompts from its own corpus (surge profile --prompt-corpus takes a file of one sentence a line)"},
		{"multimodal", "surge's images and audio are AIPerf's flags (surge profile --image-*, --audio-*), not inference-perf's multimodal block"},
		{"trace", "surge replays traces with surge profile --input-file"},
		{"otel_trace_replay", "surge replays traces with surge profile --input-file"},
		{"weka_trace_replay", "surge replays WEKA traces with surge profile --custom-dataset-type weka"},
		{"conversation_replay", "surge's multi-turn workloads are surge profile's"},
		{"visionarena", "surge reads VisionArena as surge profile --public-dataset vision_arena"},
	} {
		if err := s.refuse(k.key, k.why); err != nil {
			return err
		}
	}
	maxReq := 0
	for _, g := range p.stages {
		maxReq = max(maxReq, g.count())
	}
	switch p.dataType {
	case "random", "synthetic":
		for _, d := range []struct {
			key string
			dst *distribution
		}{{"input_distribution", &p.in}, {"output_distribution", &p.out}} {
			sub, err := s.sub(d.key)
			if err != nil {
				return err
			}
			if *d.dst, err = distributionOf(sub); err != nil {
				return err
			}
			if d.dst.totalCount < maxReq+1 {
				d.dst.totalCount = maxReq + 1 // inference-perf's: the largest stage's requests + 1
			}
		}
		if err := s.refuse("shared_prefix", "goes with data.type shared_prefix"); err != nil {
			return err
		}
	case "shared_prefix":
		sp, err := s.sub("shared_prefix")
		if err != nil {
			return err
		}
		if len(sp.m) == 0 {
			return cmdline.Usagef("%s: shared_prefix data generator requires 'shared_prefix' to be configured", tool)
		}
		p.sharedPrefix = &sharedPrefix{}
		alias := func(a, b string, def int) (int, error) {
			if sp.has(b) {
				return sp.integer(b, def)
			}
			return sp.integer(a, def)
		}
		if p.sharedPrefix.groups, err = alias("num_groups", "num_unique_system_prompts", 10); err != nil {
			return err
		}
		if p.sharedPrefix.perGroup, err = alias("num_prompts_per_group", "num_users_per_system_prompt", 10); err != nil {
			return err
		}
		for _, f := range []struct {
			key string
			dst *int
			def int
		}{{"system_prompt_len", &p.sharedPrefix.systemLen, 100}, {"question_len", &p.sharedPrefix.questionLen, 50}, {"output_len", &p.sharedPrefix.out, 50}} {
			if _, isMap := sp.m[f.key].(map[string]any); isMap {
				return cmdline.Usagef("%s: data.shared_prefix.%s as a distribution is refused: surge's shared prefixes have one length", tool, f.key)
			}
			if *f.dst, err = sp.integer(f.key, f.def); err != nil {
				return err
			}
			if *f.dst < 1 {
				return cmdline.Usagef("%s: data.shared_prefix.%s must be at least 1", tool, f.key)
			}
		}
		for _, k := range []string{"question_distribution", "output_distribution"} {
			if err := sp.refuse(k, "surge's shared-prefix prompts have one question and one output length"); err != nil {
				return err
			}
		}
		if err := sp.refuse("enable_multi_turn_chat", "surge sends each shared-prefix prompt on its own"); err != nil {
			return err
		}
		if err := sp.refuse("multimodal", "surge's images and audio are AIPerf's flags (surge profile --image-*), not inference-perf's block"); err != nil {
			return err
		}
		if sp.has("seed") {
			if _, err := sp.integer("seed", 0); err != nil {
				return err
			}
		}
		if p.sharedPrefix.groups < 1 || p.sharedPrefix.perGroup < 1 {
			return cmdline.Usagef("%s: data.shared_prefix: num_groups and num_prompts_per_group must be at least 1", tool)
		}
		if err := sp.done(); err != nil {
			return err
		}
		for _, k := range []string{"input_distribution", "output_distribution"} {
			if err := s.refuse(k, "shared_prefix takes its lengths from data.shared_prefix"); err != nil {
				return err
			}
		}
	case "mock":
		return cmdline.Usagef("%s: data.type mock is refused: it is inference-perf's placeholder data for its mock client; use random or synthetic", tool)
	case "shareGPT":
		return cmdline.Usagef("%s: data.type shareGPT is refused: inference-perf sends each conversation's first pair unfiltered, where surge's ShareGPT reader filters pairs by vLLM's bounds and sends every pair as a turn (surge profile --public-dataset sharegpt)", tool)
	case "cnn_dailymail", "infinity_instruct", "billsum_conversations", "visionarena":
		return cmdline.Usagef("%s: data.type %s is refused: surge reads Hub datasets by column (surge profile --hf-dataset ID --hf-column prompt=COLUMN)", tool, p.dataType)
	case "otel_trace_replay", "weka_trace_replay", "conversation_replay":
		return cmdline.Usagef("%s: data.type %s is refused: surge replays traces with surge profile --input-file (docs/workloads.md)", tool, p.dataType)
	default:
		return cmdline.Usagef("%s: data.type %q: not one of inference-perf's data types", tool, p.dataType)
	}
	return s.done()
}

func (p *plan) readReport(top *section) error {
	s, err := top.sub("report")
	if err != nil {
		return err
	}
	rl, err := s.sub("request_lifecycle")
	if err != nil {
		return err
	}
	if p.summary, err = rl.boolean("summary", true); err != nil {
		return err
	}
	if p.perStage, err = rl.boolean("per_stage", true); err != nil {
		return err
	}
	if p.perRequest, err = rl.boolean("per_request", false); err != nil {
		return err
	}
	// No LoRA adapter is ever sent: the per-adapter reports are empty,
	// as inference-perf's are without adapters.
	for _, k := range []string{"per_adapter", "per_adapter_stage"} {
		if _, err := rl.boolean(k, false); err != nil {
			return err
		}
	}
	p.percentiles = []float64{0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9}
	if v := rl.get("percentiles"); v != nil {
		list, ok := v.([]any)
		if !ok {
			return cmdline.Usagef("%s: report.request_lifecycle.percentiles: want a list of numbers", tool)
		}
		p.percentiles = nil
		for _, x := range list {
			f, ok := toFloat(x)
			if !ok || f < 0 || f > 100 {
				return cmdline.Usagef("%s: report.request_lifecycle.percentiles: %v is not a percentile", tool, x)
			}
			p.percentiles = append(p.percentiles, f)
		}
	}
	if p.useServerOutputTokens, err = rl.boolean("use_server_output_tokens", false); err != nil {
		return err
	}
	if p.maxErrorMessages, err = rl.integer("max_error_messages", 100); err != nil {
		return err
	}
	if err := rl.done(); err != nil {
		return err
	}
	// Without a metrics client inference-perf writes no Prometheus report
	// and no session report for non-session loads: so does surge.
	for _, k := range []string{"prometheus", "session_lifecycle"} {
		if sub, err := s.sub(k); err != nil {
			return err
		} else {
			for kk := range sub.m {
				if _, err := sub.boolean(kk, false); err != nil {
					return err
				}
			}
		}
	}
	if err := s.refuse("goodput", "surge judges objectives with surge profile --goodput (its goodput in surge's exports)"); err != nil {
		return err
	}
	return s.done()
}

func toFloat(x any) (float64, bool) {
	switch v := x.(type) {
	case int:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

func (p *plan) readStorage(top *section, now time.Time) error {
	s, err := top.sub("storage")
	if err != nil {
		return err
	}
	p.storagePath = "reports-{timestamp}"
	if s.has("local_storage") {
		ls, err := s.sub("local_storage")
		if err != nil {
			return err
		}
		if p.storagePath, err = ls.str("path", p.storagePath); err != nil {
			return err
		}
		if p.prefix, err = ls.str("report_file_prefix", ""); err != nil {
			return err
		}
		if err := ls.done(); err != nil {
			return err
		}
	} else {
		s.get("local_storage")
	}
	for _, k := range []string{"google_cloud_storage", "simple_storage_service"} {
		if err := s.refuse(k, "surge writes reports to local files only"); err != nil {
			return err
		}
	}
	p.storagePath = strings.ReplaceAll(p.storagePath, "{timestamp}", now.Format("20060102-150405"))
	return s.done()
}

// lengthsFile writes the random or synthetic data's lengths as
// inference-perf draws them (total_count of each distribution, clamped to
// [min, max]) into a JSON Lines trace surge builds prompts of those
// lengths from, the i-th request taking the i-th pair (cycling).
func (p *plan) lengthsFile(dir string) (string, error) {
	seed := uint64(p.seed)
	if !p.seedGiven {
		seed = uint64(time.Now().UnixMilli())
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	in, out := p.in.draw(rng), p.out.draw(rng)
	n := max(len(in), len(out))
	path := filepath.Join(dir, "inference_perf_lengths.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	enc := json.NewEncoder(f)
	for i := range n {
		if err := enc.Encode(map[string]int{"input_length": in[i%len(in)], "output_length": out[i%len(out)]}); err != nil {
			f.Close()
			return "", err
		}
	}
	return path, f.Close()
}

// draw is generate_distribution: totalCount lengths of the shape, clamped
// to [min, max] and rounded.
func (d distribution) draw(rng *rand.Rand) []int {
	out := make([]int, d.totalCount)
	for i := range out {
		var v float64
		switch d.kind {
		case "fixed":
			out[i] = int(d.mean)
			continue
		case "uniform":
			v = float64(d.min) + rng.Float64()*float64(d.max-d.min)
		default:
			v = d.mean + rng.NormFloat64()*d.stdDev
		}
		v = math.Min(math.Max(v, float64(d.min)), float64(d.max))
		out[i] = int(math.RoundToEven(v))
	}
	return out
}

// surgeArgs are the `surge profile` flags of stage i, exporting into dir.
func (p *plan) surgeArgs(i int, dir string, dataArgs []string) []string {
	g := p.stages[i]
	args := []string{"--url", p.url, "--endpoint-type", p.apiType}
	if p.streaming {
		args = append(args, "--streaming")
	}
	if p.model != "" {
		args = append(args, "--model", p.model)
	}
	if p.tokenizer != "" {
		args = append(args, "--tokenizer", p.tokenizer)
	}
	switch p.loadType {
	case "concurrent":
		args = append(args, "--concurrency", strconv.Itoa(g.concurrency), "--request-count", strconv.Itoa(g.requests))
	default:
		args = append(args, "--request-rate", strconv.FormatFloat(g.rate, 'g', -1, 64), "--arrival-pattern", p.loadType,
			"--request-count", strconv.Itoa(g.count()), "--concurrency", strconv.Itoa(p.maxInFlight))
	}
	if p.seedGiven {
		args = append(args, "--random-seed", strconv.FormatInt(p.seed+int64(i), 10))
	}
	if p.timeout > 0 {
		args = append(args, "--request-timeout-seconds", strconv.FormatFloat(p.timeout, 'g', -1, 64))
	}
	body, _ := json.Marshal(p.body)
	args = append(args, "--extra-inputs", string(body))
	if p.apiType == "chat" {
		args = append(args, "--use-legacy-max-tokens") // inference-perf's chat body carries max_tokens
	}
	if len(p.headers) > 0 {
		h, _ := json.Marshal(p.headers)
		args = append(args, "--header", string(h))
	}
	if p.apiKey != "" {
		args = append(args, "--api-key", p.apiKey)
	}
	// inference-perf counts output tokens by tokenizing the text.
	args = append(args, "--retokenize-output", "--export-outputs-json", "--output-artifact-dir", dir)
	return append(args, dataArgs...)
}

// dataArgs are the data's surge flags (the lengths file written into dir
// for random and synthetic data).
func (p *plan) dataArgs(dir string) ([]string, error) {
	if sp := p.sharedPrefix; sp != nil {
		return []string{"--isl", strconv.Itoa(sp.questionLen), "--osl", strconv.Itoa(sp.out),
			"--prompt-prefix-pool-size", strconv.Itoa(sp.groups), "--prompt-prefix-length", strconv.Itoa(sp.systemLen),
			"--num-dataset-entries", strconv.Itoa(sp.groups * sp.perGroup)}, nil
	}
	path, err := p.lengthsFile(dir)
	if err != nil {
		return nil, err
	}
	return []string{"--input-file", path, "--custom-dataset-type", "mooncake_trace", "--dataset-sampling-strategy", "sequential"}, nil
}
