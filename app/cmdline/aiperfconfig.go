package cmdline

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ardanlabs/jinja"
	"go.yaml.in/yaml/v3"
)

// AIPerf's YAML config (schema 2.0: an envelope of sweep, multi_run,
// variables and random_seed around a benchmark: body of models, endpoint,
// dataset, phases, artifacts, slos, …; and the flat shape before it, the
// same body at the top) is read as AIPerf runs it: each key it knows
// becomes the flag that does the same, ${VAR:default} and {{ variable }}
// are filled in first, and a key surge cannot honour is refused with
// file:line and the reason, never skipped.

// aiperfEnvelope are the schema's top-level keys besides the body.
var aiperfEnvelope = map[string]bool{"schema_version": true, "benchmark": true, "sweep": true, "multi_run": true,
	"variables": true, "random_seed": true, "no_sweep_table": true, "plot": true}

// aiperfBody are the benchmark body's keys (the flat shape's top level).
var aiperfBody = map[string]bool{"model": true, "models": true, "endpoint": true, "dataset": true, "datasets": true,
	"phases": true, "artifacts": true, "slos": true, "tokenizer": true, "gpu_telemetry": true, "server_metrics": true,
	"runtime": true, "logging": true, "metrics": true, "accuracy": true}

// isAIPerfLayout reports whether root is AIPerf's schema 2.0 layout or the
// flat shape before it, rather than surge's own (flags, or input_config's
// sections): schemaVersion or benchmark at the top, or AIPerf's body keys
// that input_config has no section for (phases, datasets).
func isAIPerfLayout(root *yaml.Node) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch snake(root.Content[i].Value) {
		case "schema_version", "benchmark", "phases", "datasets", "dataset", "models", "slos", "artifacts", "variables":
			return true
		}
	}
	return false
}

// snake writes a camelCase key in snake_case (AIPerf takes either).
func snake(k string) string {
	var b strings.Builder
	for i, r := range k {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// aiperfReader translates one AIPerf config into settings.
type aiperfReader struct {
	file string
	keys *configKeys
	vars map[string]any
	out  map[string]setting // by flag: a sweep's list replaces a phase's value
	// order keeps the flags in the order first set.
	order []string
}

func (r *aiperfReader) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: "+format, append([]any{r.file, n.Line}, args...)...)
}

// parseAIPerfConfig reads AIPerf's layout into settings.
func parseAIPerfConfig(file string, root *yaml.Node, keys *configKeys) ([]setting, error) {
	r := &aiperfReader{file: file, keys: keys, out: map[string]setting{}}
	top := fields(root)
	if v, ok := top["variables"]; ok {
		if err := r.variables(v); err != nil {
			return nil, err
		}
	}
	if err := r.fill(root); err != nil {
		return nil, err
	}
	body := root
	if b, ok := top["benchmark"]; ok {
		for k, kn := range keyNodes(root) {
			if !aiperfEnvelope[k] {
				return nil, r.errorf(kn, "%s: AIPerf's body keys go under benchmark: (a top-level %s is the flat shape, with no benchmark:)", k, k)
			}
		}
		if b.Kind != yaml.MappingNode {
			return nil, r.errorf(b, "benchmark: want a mapping")
		}
		body = b
	}
	for k, kn := range keyNodes(root) {
		if !aiperfEnvelope[k] && !aiperfBody[k] {
			return nil, r.errorf(kn, "unknown key %s%s", k, didYouMean(k, sortedKeys(aiperfEnvelope, aiperfBody), ""))
		}
	}
	if err := r.body(body); err != nil {
		return nil, err
	}
	for k, v := range fields(root) {
		switch k {
		case "schema_version":
			if v.Value != "2.0" && v.Value != "2" {
				return nil, r.errorf(v, "schemaVersion %q: surge reads AIPerf's schema 2.0 (and the flat shape before it)", v.Value)
			}
		case "random_seed":
			r.set("random-seed", k, v)
		case "sweep":
			if err := r.sweep(v); err != nil {
				return nil, err
			}
		case "multi_run":
			if err := r.section(v, "multi_run", map[string]string{"num_runs": "num-profile-runs", "cooldown_seconds": "profile-run-cooldown-seconds",
				"confidence_level": "confidence-level", "disable_warmup_after_first": "profile-run-disable-warmup-after-first",
				"set_consistent_seed": "set-consistent-seed", "vary_seed_per_trial": "vary-seed-per-trial"}, nil); err != nil {
				return nil, err
			}
		case "no_sweep_table":
			r.set("no-sweep-table", k, v)
		case "plot":
			r.set("auto-plot", k, v)
		}
	}
	out := make([]setting, 0, len(r.order))
	for _, f := range r.order {
		out = append(out, r.out[f])
	}
	return out, nil
}

func sortedKeys(ms ...map[string]bool) []string {
	var out []string
	for _, m := range ms {
		for k := range m {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// fields is a mapping's values by snake_case key.
func fields(m *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if m == nil || m.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		v := m.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		out[snake(m.Content[i].Value)] = v
	}
	return out
}

// keyNodes is a mapping's key nodes by snake_case key.
func keyNodes(m *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[snake(m.Content[i].Value)] = m.Content[i]
	}
	return out
}

// set records flag's value from node v (a scalar, or a list: a list flag's
// items, or a stage list joined by commas); key names it in errors.
func (r *aiperfReader) set(flag, key string, v *yaml.Node) {
	s := setting{flag: flag, key: key, line: v.Line}
	switch v.Kind {
	case yaml.SequenceNode:
		var items []string
		for _, it := range v.Content {
			items = append(items, it.Value)
		}
		if f, ok := r.keys.flags[flag]; ok && isList(f) {
			s.values = items
		} else {
			s.values = []string{strings.Join(items, ",")}
		}
	default:
		if v.Tag == "!!null" {
			return
		}
		s.values = []string{v.Value}
	}
	r.put(s)
}

// setValue records flag = value, as set does for a node.
func (r *aiperfReader) setValue(flag, key string, line int, values ...string) {
	r.put(setting{flag: flag, key: key, line: line, values: values})
}

func (r *aiperfReader) put(s setting) {
	if _, ok := r.out[s.flag]; !ok {
		r.order = append(r.order, s.flag)
	}
	r.out[s.flag] = s
}

// section maps each key of mapping m onto a flag (flags), or hands it to
// other; a key neither takes is refused.
func (r *aiperfReader) section(m *yaml.Node, name string, flags map[string]string, other func(k string, kn, v *yaml.Node) (bool, error)) error {
	if m.Kind != yaml.MappingNode {
		return r.errorf(m, "%s: want a mapping", name)
	}
	kns := keyNodes(m)
	for k, v := range fields(m) {
		if f, ok := flags[k]; ok {
			if f == "" {
				continue // said outright as AIPerf's default: nothing to set
			}
			r.set(f, name+"."+k, v)
			continue
		}
		if other != nil {
			ok, err := other(k, kns[k], v)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
		}
		var cands []string
		for f := range flags {
			cands = append(cands, f)
		}
		slices.Sort(cands)
		return r.errorf(kns[k], "%s.%s: not a key surge reads here%s", name, k, didYouMean(k, cands, ""))
	}
	return nil
}

// body reads the benchmark body.
func (r *aiperfReader) body(b *yaml.Node) error {
	for k, v := range fields(b) {
		kn := keyNodes(b)[k]
		if aiperfEnvelope[k] {
			continue // the flat shape: the envelope's keys beside the body's
		}
		var err error
		switch k {
		case "model":
			r.set("model", k, v)
		case "models":
			err = r.models(v)
		case "endpoint":
			err = r.endpoint(v)
		case "dataset":
			err = r.dataset(v)
		case "datasets":
			if v.Kind != yaml.SequenceNode || len(v.Content) != 1 {
				return r.errorf(v, "datasets: AIPerf takes exactly one dataset (a list of one)")
			}
			err = r.dataset(v.Content[0])
		case "phases":
			err = r.phases(v)
		case "artifacts":
			err = r.section(v, "artifacts", map[string]string{"dir": "output-artifact-dir", "slice_duration": "slice-duration",
				"export_level": "export-level", "profile_export_prefix": "profile-export-prefix", "auto_plot": "auto-plot", "plot_required": "plot-required"}, nil)
		case "slos":
			err = r.slos(v)
		case "tokenizer":
			err = r.section(v, "tokenizer", map[string]string{"name": "tokenizer", "revision": "tokenizer-revision",
				"trust_remote_code": "tokenizer-trust-remote-code", "apply_chat_template": "apply-chat-template"}, nil)
		case "gpu_telemetry", "server_metrics":
			err = r.telemetry(k, v)
		case "runtime":
			err = r.section(v, "runtime", map[string]string{"ui": "ui", "workers_max": "workers-max", "record_processors": "record-processor-service-count",
				"cells": "cells"}, nil)
		case "logging":
			err = r.section(v, "logging", map[string]string{"level": "log-level"}, nil)
		case "metrics":
			err = r.section(v, "metrics", map[string]string{"sketch": "sketch-metrics", "slice_duration": "slice-duration"}, nil)
		case "accuracy":
			return r.errorf(kn, "accuracy: surge measures performance only, not accuracy")
		default:
			return r.errorf(kn, "benchmark.%s: unknown key%s", k, didYouMean(k, sortedKeys(aiperfBody), ""))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// models reads models: a list of names, or {strategy, items: [{name,
// weight, lora}]}.
func (r *aiperfReader) models(v *yaml.Node) error {
	if v.Kind == yaml.SequenceNode || v.Kind == yaml.ScalarNode {
		r.set("model", "models", v)
		return nil
	}
	var names, weights, loras []string
	err := r.section(v, "models", map[string]string{"strategy": "model-selection-strategy"}, func(k string, kn, items *yaml.Node) (bool, error) {
		if k != "items" {
			return false, nil
		}
		if items.Kind != yaml.SequenceNode {
			return true, r.errorf(items, "models.items: want a list")
		}
		for _, it := range items.Content {
			f := fields(it)
			name, ok := f["name"]
			if !ok {
				return true, r.errorf(it, "models.items: each item needs a name")
			}
			// A LoRA adapter is asked for by its own name (vLLM's and
			// SGLang's way); its base model is kept for the results.
			sent := name.Value
			if l, ok := f["lora"]; ok {
				sent = l.Value
				loras = append(loras, l.Value+"="+name.Value)
			}
			names = append(names, sent)
			if w, ok := f["weight"]; ok {
				weights = append(weights, w.Value)
			}
			for key, kv := range keyNodes(it) {
				if key != "name" && key != "weight" && key != "lora" {
					return true, r.errorf(kv, "models.items.%s: surge sends one model name per request (a per-model tokenizer or modalities are not read)", key)
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if len(names) > 0 {
		r.setValue("model", "models.items", v.Line, names...)
	}
	if len(weights) > 0 {
		if len(weights) != len(names) {
			return r.errorf(v, "models.items: give every model a weight, or none")
		}
		r.setValue("model-weights", "models.items.weight", v.Line, strings.Join(weights, ","))
	}
	if len(loras) > 0 {
		r.setValue("lora", "models.items.lora", v.Line, loras...)
	}
	return nil
}

// endpoint reads the endpoint section.
func (r *aiperfReader) endpoint(v *yaml.Node) error {
	return r.section(v, "endpoint", map[string]string{"url": "url", "urls": "url", "type": "endpoint-type", "streaming": "streaming",
		"path": "endpoint", "custom_endpoint": "endpoint", "api_key": "api-key", "timeout": "request-timeout-seconds",
		"url_strategy": "url-strategy", "wait_for_model_timeout": "wait-for-model-timeout", "wait_for_model_mode": "wait-for-model-mode",
		"wait_for_model_interval": "wait-for-model-interval", "use_legacy_max_tokens": "use-legacy-max-tokens",
		"use_server_token_count": "use-server-token-count", "connection_reuse": "connection-reuse-strategy",
		"session_header": "session-header", "transport": "transport", "request_content_type": "request-content-type",
		"download_video_content": "download-video-content", "uuid_and_strip": "uuid-and-strip"},
		func(k string, kn, v *yaml.Node) (bool, error) {
			switch k {
			case "headers":
				return true, r.pairs("header", "endpoint.headers", v, ": ")
			case "extra":
				return true, r.pairs("extra-inputs", "endpoint.extra", v, ":")
			case "template":
				f := fields(v)
				body, ok := f["body"]
				if !ok {
					return true, r.errorf(v, "endpoint.template: needs a body")
				}
				items := []string{"payload_template:" + body.Value}
				if rf, ok := f["response_field"]; ok {
					items = append(items, "response_field:"+rf.Value)
				}
				r.addItems("extra-inputs", "endpoint.template", v.Line, items...)
				return true, nil
			}
			return false, nil
		})
}

// pairs reads a mapping of key: value into a key:value list flag.
func (r *aiperfReader) pairs(flag, key string, v *yaml.Node, sep string) error {
	if v.Kind != yaml.MappingNode {
		return r.errorf(v, "%s: want a mapping", key)
	}
	if flag == "extra-inputs" {
		obj, err := jsonOf(v)
		if err != nil {
			return r.errorf(v, "%s: %v", key, err)
		}
		r.addItems(flag, key, v.Line, obj)
		return nil
	}
	var items []string
	for i := 0; i+1 < len(v.Content); i += 2 {
		items = append(items, v.Content[i].Value+sep+v.Content[i+1].Value)
	}
	r.addItems(flag, key, v.Line, items...)
	return nil
}

// addItems appends items to a list flag's values.
func (r *aiperfReader) addItems(flag, key string, line int, items ...string) {
	s, ok := r.out[flag]
	if !ok {
		s = setting{flag: flag, key: key, line: line}
	}
	s.values = append(s.values, items...)
	r.put(s)
}

// dataset reads one dataset entry.
func (r *aiperfReader) dataset(v *yaml.Node) error {
	f := fields(v)
	typ := ""
	if t, ok := f["type"]; ok {
		typ = t.Value
	}
	return r.section(v, "dataset", map[string]string{"name": "", "type": "", "entries": "num-dataset-entries", "path": "input-file",
		"format": "custom-dataset-type", "sampling_strategy": "dataset-sampling-strategy", "random_seed": "random-seed"},
		func(k string, kn, val *yaml.Node) (bool, error) {
			switch k {
			case "prompts":
				return true, r.prompts(val)
			case "dataset_name", "public_dataset":
				r.set("public-dataset", "dataset."+k, val)
				return true, nil
			case "synthesis":
				return true, r.section(val, "dataset.synthesis", map[string]string{"idle_gap_cap_seconds": "synthesis-idle-gap-cap",
					"speedup_ratio": "synthesis-speedup-ratio", "prefix_len_multiplier": "synthesis-prefix-len-multiplier",
					"prefix_root_multiplier": "synthesis-prefix-root-multiplier", "prompt_len_multiplier": "synthesis-prompt-len-multiplier",
					"output_len_multiplier": "synthesis-output-len-multiplier", "max_isl": "synthesis-max-isl", "max_osl": "synthesis-max-osl"}, nil)
			case "records":
				return true, r.errorf(kn, "dataset.records: inline records are not read; write them to a JSONL file and give its path (dataset.path)")
			}
			if typ == "public" && k == "name" {
				r.set("public-dataset", "dataset.name", val)
				return true, nil
			}
			return false, nil
		})
}

// prompts reads a synthetic dataset's lengths: isl and osl, each a number
// or {mean, stddev}.
func (r *aiperfReader) prompts(v *yaml.Node) error {
	return r.section(v, "dataset.prompts", map[string]string{}, func(k string, kn, val *yaml.Node) (bool, error) {
		flag, ok := map[string]string{"isl": "isl", "osl": "osl"}[k]
		if !ok {
			return false, nil
		}
		if val.Kind == yaml.MappingNode {
			return true, r.section(val, "dataset.prompts."+k, map[string]string{"mean": flag, "stddev": flag + "-stddev"}, nil)
		}
		r.set(flag, "dataset.prompts."+k, val)
		return true, nil
	})
}

// slos reads slos: {metric: threshold} as --goodput.
func (r *aiperfReader) slos(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return r.errorf(v, "slos: want a mapping of metric: threshold")
	}
	var items []string
	for i := 0; i+1 < len(v.Content); i += 2 {
		items = append(items, v.Content[i].Value+":"+v.Content[i+1].Value)
	}
	r.setValue("goodput", "slos", v.Line, strings.Join(items, " "))
	return nil
}

// telemetry reads gpu_telemetry or server_metrics: enabled, urls.
func (r *aiperfReader) telemetry(k string, v *yaml.Node) error {
	off, urls := "no-gpu-telemetry", "gpu-telemetry"
	if k == "server_metrics" {
		off, urls = "no-server-metrics", "server-metrics"
	}
	if v.Kind == yaml.ScalarNode {
		if b, err := strconv.ParseBool(v.Value); err == nil && !b {
			r.setValue(off, k, v.Line, "true")
		}
		return nil
	}
	return r.section(v, k, map[string]string{"urls": urls}, func(f string, kn, val *yaml.Node) (bool, error) {
		if f != "enabled" {
			return false, nil
		}
		if b, err := strconv.ParseBool(val.Value); err == nil && !b {
			r.setValue(off, k+".enabled", val.Line, "true")
		}
		return true, nil
	})
}

// phaseFlags are a profiling phase's keys and the flags they set.
var phaseFlags = map[string]string{"concurrency": "concurrency", "rate": "request-rate", "requests": "request-count",
	"duration": "benchmark-duration", "sessions": "conversation-num", "users": "num-users", "smoothness": "arrival-smoothness",
	"grace_period": "benchmark-grace-period", "concurrency_ramp": "concurrency-ramp-duration", "rate_ramp": "request-rate-ramp-duration",
	"prefill_concurrency": "prefill-concurrency", "prefill_ramp": "prefill-concurrency-ramp-duration", "name": "", "kind": "",
	"type": "", "exclude_from_results": ""}

// warmupFlags are a warmup phase's keys and the flags they set.
var warmupFlags = map[string]string{"concurrency": "warmup-concurrency", "rate": "warmup-request-rate", "requests": "warmup-request-count",
	"duration": "warmup-duration", "sessions": "num-warmup-sessions", "grace_period": "warmup-grace-period",
	"concurrency_ramp": "warmup-concurrency-ramp-duration", "rate_ramp": "warmup-request-rate-ramp-duration",
	"prefill_concurrency": "warmup-prefill-concurrency", "prefill_ramp": "warmup-prefill-concurrency-ramp-duration",
	"name": "", "kind": "", "type": "", "exclude_from_results": ""}

// durationKeys are the phase keys that take a duration ("5m", "8h").
var durationKeys = map[string]bool{"duration": true, "grace_period": true, "concurrency_ramp": true, "rate_ramp": true, "prefill_ramp": true}

// phases reads phases: one mapping (a profiling phase) or a list of a
// warmup and one profiling phase.
func (r *aiperfReader) phases(v *yaml.Node) error {
	list := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		list = v.Content
	}
	profiling := 0
	for _, ph := range list {
		f := fields(ph)
		name, kind := "", ""
		if n, ok := f["name"]; ok {
			name = n.Value
		}
		if k, ok := f["kind"]; ok {
			kind = k.Value
		}
		if kind == "" {
			kind = "profiling"
			if name == "warmup" {
				kind = "warmup"
			}
			if ex, ok := f["exclude_from_results"]; ok && ex.Value == "true" {
				kind = "warmup"
			}
		}
		switch kind {
		case "warmup":
			if err := r.phase(ph, true); err != nil {
				return err
			}
		case "profiling":
			profiling++
			if profiling > 1 {
				return r.errorf(ph, "phases: a second profiling phase: surge runs one profiling phase a run (a sweep: over its values; several runs: one each)")
			}
			if err := r.phase(ph, false); err != nil {
				return err
			}
		default:
			return r.errorf(ph, "phases: kind %q: want warmup or profiling", kind)
		}
	}
	return nil
}

// phase reads one phase: its type and load, as the profile's or the
// warmup's flags.
func (r *aiperfReader) phase(ph *yaml.Node, warmup bool) error {
	flags, where := phaseFlags, "phases.profiling"
	if warmup {
		flags, where = warmupFlags, "phases.warmup"
	}
	f := fields(ph)
	if t, ok := f["type"]; ok {
		if err := r.phaseType(t, warmup, f); err != nil {
			return err
		}
		if t.Value == "user_centric" {
			// Its rate is the users' combined rate (phaseType set it).
			flags = maps.Clone(flags)
			flags["rate"] = ""
		}
	}
	// Durations ("5m") are converted to the flags' seconds first.
	durations := map[string]string{}
	flags = maps.Clone(flags)
	for k := range durationKeys {
		durations[k] = flags[k]
		delete(flags, k)
	}
	return r.section(ph, where, flags, func(k string, kn, v *yaml.Node) (bool, error) {
		if flag, ok := durations[k]; ok {
			secs, err := durationSeconds(v.Value)
			if err != nil {
				return true, r.errorf(v, "%s.%s %q: %v", where, k, v.Value, err)
			}
			r.setValue(flag, where+"."+k, v.Line, secs)
			return true, nil
		}
		switch {
		case k == "cancellation" && !warmup:
			return true, r.section(v, where+".cancellation", map[string]string{"rate": "request-cancellation-rate", "delay": "request-cancellation-delay"}, nil)
		case (k == "adaptive_scale" || k == "sla") && !warmup:
			return true, r.adaptive(k, v)
		}
		return false, nil
	})
}

// phaseType reads a phase's type: its arrivals.
func (r *aiperfReader) phaseType(t *yaml.Node, warmup bool, f map[string]*yaml.Node) error {
	pattern := map[string]string{"poisson": "poisson", "constant": "constant", "gamma": "gamma", "rate": "poisson", "request_rate": "poisson"}
	switch t.Value {
	case "concurrency":
	case "poisson", "constant", "gamma", "rate", "request_rate":
		flag := "arrival-pattern"
		if warmup {
			flag = "warmup-arrival-pattern"
		}
		r.setValue(flag, "phases.type", t.Line, pattern[t.Value])
	case "fixed_schedule":
		if warmup {
			return r.errorf(t, "phases.warmup.type fixed_schedule: a warmup does not replay a schedule")
		}
		r.setValue("fixed-schedule", "phases.type", t.Line, "true")
	case "user_centric":
		if warmup {
			return r.errorf(t, "phases.warmup.type user_centric: a warmup does not run users")
		}
		if rate, ok := f["rate"]; ok {
			r.setValue("user-centric-rate", "phases.rate", rate.Line, rate.Value)
		}
	default:
		return r.errorf(t, "phases.type %q: want concurrency, poisson, constant, gamma, fixed_schedule or user_centric", t.Value)
	}
	return nil
}

// adaptive reads a phase's adaptive_scale block and its sla filters.
func (r *aiperfReader) adaptive(k string, v *yaml.Node) error {
	if k == "sla" {
		return r.slaFilters(v)
	}
	if v.Kind == yaml.ScalarNode {
		r.setValue("adaptive-scale", "adaptive_scale", v.Line, v.Value)
		return nil
	}
	r.setValue("adaptive-scale", "adaptive_scale", v.Line, "true")
	return r.section(v, "adaptive_scale", map[string]string{"enabled": "adaptive-scale", "assessment_period": "adaptive-assessment-period",
		"window": "adaptive-assessment-period", "sustain_duration": "adaptive-sustain-duration", "min_completed_requests": "adaptive-min-completed-requests",
		"control_variable": "adaptive-control-variable", "control_min": "adaptive-control-min", "control_max": "adaptive-control-max"},
		func(k string, kn, val *yaml.Node) (bool, error) {
			switch k {
			case "control":
				return true, r.section(val, "adaptive_scale.control", map[string]string{"variable": "adaptive-control-variable",
					"min": "adaptive-control-min", "max": "adaptive-control-max"}, nil)
			case "strategy":
				return true, r.section(val, "adaptive_scale.strategy", map[string]string{"type": "adaptive-scale-strategy-type",
					"step_policy": "adaptive-step-policy", "base_step": "adaptive-base-step", "max_step_multiplier": "adaptive-max-step-multiplier",
					"step_percent": "adaptive-step-percent"}, nil)
			case "sla":
				return true, r.slaFilters(val)
			}
			return false, nil
		})
}

// slaFilters reads sla: {metric: {stat: {op: threshold}}} or a list of
// {metric_tag, stat, op, threshold} as --adaptive-scale-sla.
func (r *aiperfReader) slaFilters(v *yaml.Node) error {
	var items []string
	switch v.Kind {
	case yaml.SequenceNode:
		for _, it := range v.Content {
			f := fields(it)
			var parts []string
			for _, k := range []string{"metric_tag", "stat", "op", "threshold"} {
				n, ok := f[k]
				if !ok {
					return r.errorf(it, "sla: each filter needs metric_tag, stat, op and threshold")
				}
				parts = append(parts, n.Value)
			}
			items = append(items, strings.Join(parts, ":"))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			metric, stats := v.Content[i].Value, v.Content[i+1]
			for j := 0; j+1 < len(stats.Content); j += 2 {
				stat, ops := stats.Content[j].Value, stats.Content[j+1]
				for l := 0; l+1 < len(ops.Content); l += 2 {
					items = append(items, metric+":"+stat+":"+ops.Content[l].Value+":"+ops.Content[l+1].Value)
				}
			}
		}
	default:
		return r.errorf(v, "sla: want a mapping (metric: {stat: {op: threshold}}) or a list of filters")
	}
	r.addItems("adaptive-scale-sla", "sla", v.Line, items...)
	return nil
}

// sweepPaths are the sweep parameters surge sweeps, by AIPerf's path (the
// bare names, phases.profiling.X, datasets.default.prompts.X).
var sweepPaths = map[string]string{"concurrency": "concurrency", "rate": "request-rate", "requests": "request-count",
	"duration": "benchmark-duration", "users": "num-users", "prompts.isl": "isl", "prompts.osl": "osl", "isl": "isl", "osl": "osl"}

// sweep reads sweep: {type: grid|zip, parameters: {path: [values]}}.
func (r *aiperfReader) sweep(v *yaml.Node) error {
	f := fields(v)
	if t, ok := f["type"]; ok {
		switch t.Value {
		case "grid":
		case "zip":
			r.setValue("sweep-mode", "sweep.type", t.Line, "zip")
		default:
			return r.errorf(t, "sweep.type %q: surge sweeps a grid or a zip of list flags (not scenarios or an adaptive search)", t.Value)
		}
	}
	params, ok := f["parameters"]
	if !ok {
		params, ok = f["variables"] // the flat shape's name
	}
	if !ok {
		return r.errorf(v, "sweep: needs parameters")
	}
	for k, kn := range keyNodes(v) {
		if k != "type" && k != "parameters" && k != "variables" {
			return r.errorf(kn, "sweep.%s: surge's sweeps take type and parameters only", k)
		}
	}
	for i := 0; i+1 < len(params.Content); i += 2 {
		path, vals := params.Content[i].Value, params.Content[i+1]
		p := strings.TrimPrefix(path, "benchmark.")
		p = strings.TrimPrefix(strings.TrimPrefix(p, "phases.profiling."), "datasets.default.")
		p = strings.TrimPrefix(p, "dataset.")
		flag, ok := sweepPaths[p]
		if !ok {
			return r.errorf(params.Content[i], "sweep.parameters.%s: surge sweeps concurrency, rate, requests, duration, users and the prompts' isl and osl", path)
		}
		if vals.Kind != yaml.SequenceNode {
			return r.errorf(vals, "sweep.parameters.%s: want a list of values", path)
		}
		r.set(flag, "sweep.parameters."+path, vals)
	}
	return nil
}

// durationSeconds reads AIPerf's duration: seconds, or a number with a
// unit (30s, 5m, 8h, 1d).
func durationSeconds(s string) (string, error) {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil || s == "inf" {
		return s, nil
	}
	if strings.HasSuffix(s, "d") {
		n, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64)
		if err != nil {
			return "", fmt.Errorf("want seconds or a duration (30s, 5m, 8h)")
		}
		return strconv.FormatFloat(n*86400, 'g', -1, 64), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return "", fmt.Errorf("want seconds or a duration (30s, 5m, 8h)")
	}
	return strconv.FormatFloat(d.Seconds(), 'g', -1, 64), nil
}

// envRef is ${VAR} or ${VAR:default}.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}`)

// variables reads the envelope's variables (each may use the others).
func (r *aiperfReader) variables(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return r.errorf(v, "variables: want a mapping")
	}
	r.vars = map[string]any{}
	raw := map[string]*yaml.Node{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		raw[v.Content[i].Value] = v.Content[i+1]
		if err := r.fillScalar(v.Content[i+1], false); err != nil {
			return err
		}
		r.vars[v.Content[i].Value] = typed(v.Content[i+1].Value)
	}
	// Variables that use others: render until nothing changes.
	for range len(raw) + 1 {
		changed := false
		for k, n := range raw {
			if !strings.Contains(n.Value, "{{") {
				continue
			}
			if err := r.fillScalar(n, true); err != nil {
				continue // another variable first
			}
			r.vars[k], changed = typed(n.Value), true
		}
		if !changed {
			break
		}
	}
	return nil
}

// fill substitutes ${VAR:default} and {{ expression }} in every scalar.
func (r *aiperfReader) fill(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return r.fillScalar(n, true)
	case yaml.MappingNode, yaml.SequenceNode, yaml.DocumentNode:
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				continue // keys stay as written
			}
			if err := r.fill(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillScalar substitutes one scalar: environment variables first, then
// (when jinja) a {{ }} expression over the variables.
func (r *aiperfReader) fillScalar(n *yaml.Node, useJinja bool) error {
	var missing string
	n.Value = envRef.ReplaceAllStringFunc(n.Value, func(m string) string {
		sub := envRef.FindStringSubmatch(m)
		if v, ok := os.LookupEnv(sub[1]); ok {
			return v
		}
		if strings.Contains(m, ":") {
			return sub[2]
		}
		missing = sub[1]
		return m
	})
	if missing != "" {
		return r.errorf(n, "${%s}: the environment variable is not set (give ${%s:default} for a default)", missing, missing)
	}
	if !useJinja || !strings.Contains(n.Value, "{{") || strings.Contains(n.Value, "|tojson") {
		return nil // a payload template keeps its own {{ }}
	}
	tpl, err := jinja.Compile(n.Value)
	if err != nil {
		return r.errorf(n, "%q: %v", n.Value, err)
	}
	out, err := tpl.Render(r.vars)
	if err != nil {
		return r.errorf(n, "%q: %v", n.Value, err)
	}
	n.Value = strings.TrimSpace(out)
	if n.Tag == "!!str" {
		n.Tag = ""
	}
	return nil
}

// typed is a variable's value as Jinja should see it: a number when it
// reads as one.
func typed(s string) any {
	if i, err := strconv.Atoi(s); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}
