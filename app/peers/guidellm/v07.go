package guidellm

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/peers"
)

// runTool names v0.7's command in messages.
const runTool = "guidellm run"

// runFlags are `guidellm run`'s options (v0.7, guidellm/cli/run.py):
// registry options take KIND-and-key=value strings
// (kind=concurrent,streams=16) or JSON.
var runFlags = []peers.Flag{
	{Name: "backend", Kind: peers.Value, Usage: "kind=openai_http with target, model, request_format, api_key, timeout, extras, max_tokens, http2, follow_redirects, validate_backend; the rest refused"},
	{Name: "profile", Kind: peers.Value, Usage: "kind=synchronous, concurrent (streams), throughput (max_concurrency), constant or poisson or async (rate, max_concurrency), sweep (sweep_size, strategy_type, max_concurrency); rampup_duration, warmup, cooldown"},
	{Name: "constraint", Kind: peers.Value, Usage: "kind=max_duration,seconds=S (--benchmark-duration) or kind=max_requests,count=N (--request-count); the others are refused"},
	{Name: "tokenizer", Kind: peers.Value, Usage: "kind=huggingface_auto,model=ID (--tokenizer)"},
	{Name: "data", Kind: peers.Value, Usage: "kind=synthetic_text with prompt_tokens, output_tokens, their _stdev, turns; other kinds are refused"},
	{Name: "data-column-mapper", Kind: peers.Value, Usage: "kind=generative_column_mapper only (synthetic data has no columns to map)"},
	{Name: "data-preprocessor", Kind: peers.Value, Usage: "kind=encode_media only (surge encodes no media for synthetic text)"},
	{Name: "data-finalizer", Kind: peers.Value, Usage: "kind=generative only"},
	{Name: "data-loader", Kind: peers.Value, Usage: "kind=pytorch: samples -1, shuffle and num_workers change nothing for synthetic data"},
	{Name: "seed", Kind: peers.Value, Usage: "kind=static,value=N (--random-seed)"},
	{Name: "output", Kind: peers.Value, Usage: "kind=json, yaml or csv with path (default: json and csv in the current folder), kind=console; html is refused"},
	{Name: "metrics", Kind: peers.Value, Usage: "kind=generative,sample_size=N: requests of each status kept in the report"},
	{Name: "label", Aliases: []string{"l"}, Kind: peers.Value, Usage: "KEY=VALUE labels in the report's metadata"},
	{Name: "override", Kind: peers.Many, Usage: "profile.streams LIST or profile.rate LIST: one benchmark a value"},
	{Name: "disable-console", Aliases: []string{"disable-console-outputs"}, Kind: peers.Switch, Usage: "no summary and no progress (--ui none)"},
	{Name: "disable-console-interactive", Aliases: []string{"disable-progress"}, Kind: peers.Switch, Usage: "no progress display (--ui none)"},
	{Name: "config", Aliases: []string{"scenario", "c"}, Kind: peers.Value, Refused: "surge reads no GuideLLM scenario: give its settings as options"},
}

// kindConfig reads a registry option's value: JSON, or key=value pairs
// whose dotted keys nest (load_kwargs.name=x), with its kind.
func kindConfig(flag, s string) (*peers.Object, string, error) {
	o, err := keyValues(s)
	if err != nil {
		return nil, "", cmdline.Usagef("%s: --%s %q: %v (want kind=KIND,key=value… or a JSON object)", runTool, flag, s, err)
	}
	nested := &peers.Object{}
	for _, k := range o.Keys() {
		v, _ := o.Get(k)
		parts := strings.Split(k, ".")
		cur := nested
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur.Get(p)
			no, isObj := next.(*peers.Object)
			if !ok || !isObj {
				no = &peers.Object{}
				cur.Set(p, no)
			}
			cur = no
		}
		cur.Set(parts[len(parts)-1], v)
	}
	kind, _ := stringOf(nested, "kind")
	if kind == "" {
		return nil, "", cmdline.Usagef("%s: --%s %q: missing required key 'kind'", runTool, flag, s)
	}
	return nested, kind, nil
}

// checkKeys refuses keys of a registry value that surge does not take.
func checkKeys(flag string, o *peers.Object, allowed ...string) error {
	for _, k := range o.Keys() {
		ok := k == "kind"
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return cmdline.Usagef("%s: --%s: key %q is refused: surge does not take it (it takes %s)", runTool, flag, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// overlay sets every given key of src over dst.
func overlay(dst, src *peers.Object) {
	for _, k := range src.Keys() {
		v, _ := src.Get(k)
		if so, ok := v.(*peers.Object); ok {
			if do, ok := get(dst, k).(*peers.Object); ok {
				overlay(do, so)
				continue
			}
		}
		dst.Set(k, v)
	}
}

func obj(kv ...any) *peers.Object {
	o := &peers.Object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// parseRun reads a `guidellm run` command line (v0.7).
func parseRun(argv []string) (*plan, error) {
	a, err := peers.Parse(argv, runFlags, peers.Dialect{Tool: runTool})
	if err != nil {
		return nil, err
	}
	usage := func(format string, x ...any) error { return cmdline.Usagef(runTool+": "+format, x...) }
	p := &plan{version: 2, tool: runTool, console: !a.Has("disable-console"),
		progress: !a.Has("disable-console") && !a.Has("disable-console-interactive"), sample: -1, maxSeconds: math.NaN(), seed: 42}
	spec := &peers.Object{}

	// Backend.
	backend := obj("kind", "openai_http", "target", "", "model", "", "request_format", "/v1/chat/completions", "api_key", nil,
		"api_routes", obj("/health", "health", "/v1/models", "v1/models", "/v1/completions", "v1/completions",
			"/v1/chat/completions", "v1/chat/completions", "/v1/embeddings", "v1/embeddings", "/v1/responses", "v1/responses",
			"/v1/audio/transcriptions", "v1/audio/transcriptions", "/v1/audio/translations", "v1/audio/translations", "/pooling", "pooling"),
		"timeout", nil, "timeout_connect", 5.0, "http2", true, "follow_redirects", true, "verify", false, "validate_backend", true,
		"stream", true, "extras", nil, "max_tokens", nil, "server_history", false, "tool_call_missing_behavior", "error_stop", "multiturn_reasoning", false)
	v, ok := a.Value("backend")
	if !ok {
		return nil, usage("--backend kind=openai_http,target=URL is required (surge needs the server)")
	}
	bk, kind, err := kindConfig("backend", v)
	if err != nil {
		return nil, err
	}
	if kind != "openai_http" {
		return nil, usage("--backend kind=%s is refused: surge is its own HTTP client (openai_http)", kind)
	}
	if err := checkKeys("backend", bk, "target", "model", "request_format", "api_key", "timeout", "timeout_connect", "extras",
		"max_tokens", "stream", "http2", "follow_redirects", "validate_backend"); err != nil {
		return nil, err
	}
	check := &peers.Object{}
	for _, k := range bk.Keys() {
		if k != "timeout_connect" && k != "validate_backend" {
			x, _ := bk.Get(k)
			check.Set(k, x)
		}
	}
	if err := p.setBackend(check); err != nil {
		return nil, err
	}
	overlay(backend, bk)
	if f, _ := stringOf(backend, "request_format"); f == "chat_completions" || f == "text_completions" {
		backend.Set("request_format", map[string]string{"chat_completions": "/v1/chat/completions", "text_completions": "/v1/completions"}[f])
	}
	spec.Set("backend", backend)

	// Profile, and its overrides.
	pv, ok := a.Value("profile")
	if !ok {
		pv = "kind=sweep"
	}
	prof, kind, err := kindConfig("profile", pv)
	if err != nil {
		return nil, err
	}
	p.profile = kind
	profile := obj("kind", kind, "rampup_duration", 0.0, "warmup", obj("percent", nil, "value", nil, "mode", "prefer_duration"),
		"cooldown", obj("percent", nil, "value", nil, "mode", "prefer_duration"))
	var r []float64
	numbers := func(key string) ([]float64, error) {
		x, ok := prof.Get(key)
		if !ok {
			return nil, nil
		}
		switch y := x.(type) {
		case int:
			return []float64{float64(y)}, nil
		case float64:
			return []float64{y}, nil
		case []any:
			var out []float64
			for _, e := range y {
				switch z := e.(type) {
				case int:
					out = append(out, float64(z))
				case float64:
					out = append(out, z)
				default:
					return nil, usage("--profile %s: %v is not a number", key, e)
				}
			}
			return out, nil
		}
		return nil, usage("--profile %s %v: want a number or a list", key, x)
	}
	common := []string{"rampup_duration", "warmup", "cooldown"}
	var benchmarks []any
	overrides := a.Values("override")
	if len(overrides)%2 != 0 {
		return nil, usage("--override takes a key and its values (profile.streams 1,2,4)")
	}
	overridden := map[string][]float64{}
	for i := 0; i < len(overrides); i += 2 {
		key := overrides[i]
		if key != "profile.streams" && key != "profile.rate" {
			return nil, usage("--override %s is refused: surge takes profile.streams and profile.rate (GuideLLM's own support)", key)
		}
		vals, err := rates(runTool, []string{overrides[i+1]})
		if err != nil {
			return nil, err
		}
		overridden[strings.TrimPrefix(key, "profile.")] = vals
		for _, x := range vals {
			benchmarks = append(benchmarks, obj(key, numberValue(x)))
		}
	}
	switch kind {
	case "synchronous":
		err = checkKeys("profile", prof, common...)
	case "concurrent":
		if err = checkKeys("profile", prof, append(common, "streams")...); err == nil {
			r, err = numbers("streams")
		}
		if o, ok := overridden["streams"]; ok {
			r = o
		}
		if len(r) > 0 {
			profile.Set("streams", intsOf(r))
		}
	case "throughput":
		if err = checkKeys("profile", prof, append(common, "max_concurrency")...); err == nil {
			r, err = numbers("max_concurrency")
		}
		profile.Set("max_concurrency", nil)
		if len(r) > 0 {
			profile.Set("max_concurrency", int(r[0]))
		}
	case "constant", "poisson", "async":
		if err = checkKeys("profile", prof, append(common, "rate", "max_concurrency", "random_seed", "strategy_type")...); err == nil {
			r, err = numbers("rate")
		}
		if o, ok := overridden["rate"]; ok {
			r = o
		}
		profile.Set("rate", r)
		profile.Set("max_concurrency", nil)
	case "sweep":
		err = checkKeys("profile", prof, append(common, "sweep_size", "strategy_type", "max_concurrency")...)
		profile.Set("sweep_size", 10)
		profile.Set("strategy_type", "constant")
		profile.Set("max_concurrency", maxConcurrencyDefault)
		if s, e := numbers("sweep_size"); e == nil && len(s) > 0 {
			r = s[:1]
		}
	default:
		return nil, usage("--profile kind=%s: choose from synchronous, concurrent, throughput, constant, poisson, async, sweep", kind)
	}
	if err != nil {
		return nil, err
	}
	if err := p.setProfile(r); err != nil {
		return nil, err
	}
	if mc, ok, err := intOf(prof, "max_concurrency"); err != nil {
		return nil, usage("--profile max_concurrency: %v", err)
	} else if ok && mc > 0 {
		p.maxConc = mc
	}
	if kind == "sweep" && p.maxConc == 0 {
		p.maxConc = maxConcurrencyDefault
	}
	if st, ok := stringOf(prof, "strategy_type"); ok {
		if st != "constant" && st != "poisson" {
			return nil, usage("--profile strategy_type %q: want constant or poisson", st)
		}
		p.strategyType = st
	}
	if rs, ok, err := intOf(prof, "random_seed"); err != nil {
		return nil, usage("--profile random_seed: %v", err)
	} else if ok {
		p.seed = rs
	}
	if ru, ok, err := floatOf(prof, "rampup_duration"); err != nil || (ok && ru < 0) {
		return nil, usage("--profile rampup_duration: want seconds ≥ 0")
	} else if ok {
		p.rampup = ru
	}
	for _, ph := range []struct {
		key string
		dst *transient
	}{{"warmup", &p.warmup}, {"cooldown", &p.cooldown}} {
		x, ok := prof.Get(ph.key)
		if !ok {
			continue
		}
		text := fmt.Sprint(x)
		if o, isObj := x.(*peers.Object); isObj {
			b, _ := o.MarshalJSON()
			text = string(b)
		}
		t, _, err := transientOf(runTool, "--profile "+ph.key, text)
		if err != nil {
			return nil, err
		}
		*ph.dst = t
		profile.Set(ph.key, t.object())
	}
	for _, k := range prof.Keys() {
		if k == "kind" || k == "warmup" || k == "cooldown" || k == "streams" || k == "rate" {
			continue
		}
		x, _ := prof.Get(k)
		profile.Set(k, x)
	}
	spec.Set("profile", profile)

	// Constraints.
	var constraints []any
	p.constraints = &peers.Object{}
	for _, cv := range a.Values("constraint") {
		c, kind, err := kindConfig("constraint", cv)
		if err != nil {
			return nil, err
		}
		scope, _ := stringOf(c, "stopping_scope")
		if scope != "" && scope != "current" {
			return nil, usage("--constraint stopping_scope %s is refused: surge ends each benchmark on its own bounds (current)", scope)
		}
		switch kind {
		case "max_duration":
			if err := checkKeys("constraint", c, "seconds", "stopping_scope"); err != nil {
				return nil, err
			}
			s, ok, err := floatOf(c, "seconds")
			if err != nil || !ok || !(s > 0) {
				return nil, usage("--constraint kind=max_duration needs seconds > 0")
			}
			p.maxSeconds = s
			x, _ := c.Get("seconds")
			constraints = append(constraints, obj("kind", kind, "stopping_scope", "current", "seconds", x))
			p.constraints.Set("max_seconds", x)
		case "max_requests":
			if err := checkKeys("constraint", c, "count", "stopping_scope"); err != nil {
				return nil, err
			}
			n, ok, err := intOf(c, "count")
			if err != nil || !ok || n < 1 {
				return nil, usage("--constraint kind=max_requests needs count ≥ 1")
			}
			p.maxRequests = n
			constraints = append(constraints, obj("kind", kind, "stopping_scope", "current", "count", n))
			p.constraints.Set("max_requests", n)
		case "max_errors":
			return nil, usage("--constraint kind=max_errors is refused: surge stops on an error rate over a window (surge profile --stop-on error_rate:R@30s), not on an error count")
		case "max_error_rate", "max_global_error_rate":
			return nil, usage("--constraint kind=%s is refused: GuideLLM judges its rate over a window of requests; surge's --stop-on error_rate:R@WINDOW judges it over time", kind)
		case "over_saturation":
			return nil, usage("--constraint kind=over_saturation is refused: surge has no over-saturation detector (surge search finds the load a server sustains)")
		default:
			return nil, usage("--constraint kind=%s: GuideLLM's kinds are max_duration, max_requests, max_errors, max_error_rate, max_global_error_rate, over_saturation", kind)
		}
	}
	if constraints == nil {
		constraints = []any{}
	}
	spec.Set("constraints", constraints)

	// Tokenizer.
	tok := obj("kind", "huggingface_auto", "model", nil, "load_kwargs", &peers.Object{})
	if tv, ok := a.Value("tokenizer"); ok {
		t, kind, err := kindConfig("tokenizer", tv)
		if err != nil {
			return nil, err
		}
		if kind != "huggingface_auto" {
			return nil, usage("--tokenizer kind=%s is refused: surge reads a Hugging Face tokenizer.json (huggingface_auto)", kind)
		}
		if err := checkKeys("tokenizer", t, "model"); err != nil {
			return nil, err
		}
		p.processor, _ = stringOf(t, "model")
		overlay(tok, t)
	}
	spec.Set("tokenizer", tok)

	// Data.
	dv := a.Values("data")
	switch len(dv) {
	case 0:
		return nil, usage("--data is required (e.g. --data kind=synthetic_text,prompt_tokens=256,output_tokens=128)")
	case 1:
	default:
		return nil, usage("several --data sources are refused: surge sends one dataset")
	}
	d, kind, err := kindConfig("data", dv[0])
	if err != nil {
		return nil, err
	}
	if kind != "synthetic_text" {
		return nil, usage("--data kind=%s is refused: surge takes GuideLLM's synthetic_text; for files and Hub datasets use surge profile --input-file or --hf-dataset", kind)
	}
	if p.data, err = synthetic(runTool, d); err != nil {
		return nil, err
	}
	data := obj("kind", "synthetic_text", "load_kwargs", &peers.Object{}, "prompt_tokens", 0, "prompt_tokens_stdev", nil,
		"prompt_tokens_min", nil, "prompt_tokens_max", nil, "output_tokens", 0, "output_tokens_stdev", nil, "output_tokens_min", nil,
		"output_tokens_max", nil, "delay", nil, "delay_stdev", nil, "delay_min", nil, "delay_max", nil, "turns", 1, "tool_call_turns", []any{},
		"tools", nil, "tool_response_tokens", nil, "tool_response_tokens_stdev", nil, "tool_response_tokens_min", nil,
		"tool_response_tokens_max", nil, "server_tool_call_turns", []any{}, "prefix_buckets", nil)
	overlay(data, d)
	spec.Set("data", []any{data})

	// The data pipeline's other stages: GuideLLM's defaults only.
	defaults := []struct {
		flag, key, kind string
		def             *peers.Object
		list            bool
		allowed         []string
	}{
		{"data-column-mapper", "data_column_mapper", "generative_column_mapper", obj("kind", "generative_column_mapper", "column_mappings", nil), false, nil},
		{"data-preprocessor", "data_preprocessors", "encode_media", obj("kind", "encode_media", "audio_kwargs", &peers.Object{}, "image_kwargs", &peers.Object{}, "video_kwargs", &peers.Object{}), true, nil},
		{"data-finalizer", "data_finalizer", "generative", obj("kind", "generative", "tool_call_mode", "client"), false, nil},
		{"data-loader", "data_loader", "pytorch", obj("kind", "pytorch", "samples", -1, "shuffle", false, "num_workers", 1), false, []string{"samples", "shuffle", "num_workers"}},
	}
	for _, df := range defaults {
		cfg := df.def
		for _, v := range a.Values(df.flag) {
			c, kind, err := kindConfig(df.flag, v)
			if err != nil {
				return nil, err
			}
			if kind != df.kind {
				return nil, usage("--%s kind=%s is refused: surge's synthetic data takes GuideLLM's default, kind=%s", df.flag, kind, df.kind)
			}
			if err := checkKeys(df.flag, c, df.allowed...); err != nil {
				return nil, err
			}
			if n, ok, _ := intOf(c, "samples"); ok && n != -1 {
				return nil, usage("--data-loader samples=%d is refused: surge draws synthetic prompts as it sends them (-1)", n)
			}
			overlay(cfg, c)
		}
		if df.list {
			spec.Set(df.key, []any{cfg})
		} else {
			spec.Set(df.key, cfg)
		}
	}

	// Seed.
	seed := obj("kind", "static", "value", 42)
	if sv, ok := a.Value("seed"); ok {
		s, kind, err := kindConfig("seed", sv)
		if err != nil {
			return nil, err
		}
		if kind != "static" {
			return nil, usage("--seed kind=%s is refused: surge's seed is a number (kind=static,value=N)", kind)
		}
		if err := checkKeys("seed", s, "value"); err != nil {
			return nil, err
		}
		n, ok, err := intOf(s, "value")
		if err != nil || !ok || n < 0 {
			return nil, usage("--seed value: want an integer ≥ 0")
		}
		p.seed = n
		seed.Set("value", n)
	}
	spec.Set("seed", seed)

	// Outputs.
	cwd, _ := os.Getwd()
	var outs []any
	given := a.Values("output")
	if len(given) == 0 {
		given = []string{"kind=json", "kind=csv"}
	}
	for _, ov := range given {
		o, kind, err := kindConfig("output", ov)
		if err != nil {
			return nil, err
		}
		switch kind {
		case "json", "yaml", "csv":
			if err := checkKeys("output", o, "path"); err != nil {
				return nil, err
			}
			path, ok := stringOf(o, "path")
			if !ok {
				path = filepath.Join(cwd, "benchmarks."+kind)
			} else if st, err := os.Stat(path); err == nil && st.IsDir() {
				path = filepath.Join(path, "benchmarks."+kind)
			}
			p.outputs = append(p.outputs, output{kind: kind, path: path})
			outs = append(outs, obj("kind", kind, "path", path))
		case "console":
			p.console = true
			outs = append(outs, obj("kind", "console"))
		case "html":
			return nil, usage("--output kind=html is refused: surge writes its own HTML report (surge report DIR)")
		default:
			return nil, usage("--output kind=%s: want json, yaml, csv or console", kind)
		}
	}
	spec.Set("outputs", outs)

	// Metrics.
	metrics := obj("kind", "generative", "sample_size", nil, "prefer_response_metrics", true)
	if mv, ok := a.Value("metrics"); ok {
		m, kind, err := kindConfig("metrics", mv)
		if err != nil {
			return nil, err
		}
		if kind != "generative" {
			return nil, usage("--metrics kind=%s: want generative", kind)
		}
		if err := checkKeys("metrics", m, "sample_size", "prefer_response_metrics"); err != nil {
			return nil, err
		}
		if n, ok, err := intOf(m, "sample_size"); err != nil || (ok && n < 0) {
			return nil, usage("--metrics sample_size: want an integer ≥ 0")
		} else if ok {
			p.sample = n
			metrics.Set("sample_size", n)
		}
		if x, ok := m.Get("prefer_response_metrics"); ok && x != true {
			return nil, usage("--metrics prefer_response_metrics=false is refused: surge counts tokens from the server's usage when it gives them")
		}
	}
	spec.Set("metrics", metrics)

	labels := &peers.Object{}
	for _, l := range a.Values("label") {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return nil, usage("--label %q: want KEY=VALUE", l)
		}
		labels.Set(k, v)
	}
	if math.IsNaN(p.maxSeconds) && p.maxRequests == 0 {
		return nil, usage("give --constraint kind=max_duration,seconds=S or kind=max_requests,count=N: GuideLLM runs synthetic data until it is stopped; surge needs a bound")
	}
	cfg := &peers.Object{}
	cfg.Set("metadata", obj("labels", labels))
	cfg.Set("spec", spec)
	if len(benchmarks) == 0 {
		benchmarks = []any{nil}
	}
	cfg.Set("benchmarks", benchmarks)
	p.args = cfg
	return p, nil
}

func intsOf(fs []float64) []int {
	out := make([]int, len(fs))
	for i, f := range fs {
		out[i] = int(f)
	}
	return out
}

// numberValue is a float as an int when it is one.
func numberValue(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int(f)
	}
	return f
}
