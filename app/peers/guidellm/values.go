package guidellm

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/peers"
)

// The values GuideLLM's options take as text: key=value pairs or JSON
// (its cli_tools), numbers, and the synthetic data's description.

// keyValues reads "a=1,b=x" or a JSON object into an ordered object,
// numbers and booleans as such (GuideLLM's parse of a kv string).
func keyValues(s string) (*peers.Object, error) {
	s = strings.TrimSpace(s)
	o := &peers.Object{}
	if strings.HasPrefix(s, "{") {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		// JSON objects keep the order the text gives.
		keys, err := jsonKeys(s)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			o.Set(k, plainJSON(m[k]))
		}
		return o, nil
	}
	for _, part := range splitTop(s) {
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%q is not key=value", part)
		}
		o.Set(strings.TrimSpace(k), scalar(strings.TrimSpace(v)))
	}
	return o, nil
}

// splitTop splits on the commas outside brackets and quotes.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '[' || r == '{' || r == '(':
			depth++
		case r == ']' || r == '}' || r == ')':
			depth--
		case r == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if strings.TrimSpace(s[start:]) != "" || len(out) > 0 {
		out = append(out, s[start:])
	}
	return out
}

// scalar is a kv value: a number, a boolean, null, JSON, else text.
func scalar(v string) any {
	if i, err := strconv.Atoi(v); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	case "none", "null":
		return nil
	}
	if strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") {
		var x any
		if json.Unmarshal([]byte(v), &x) == nil {
			return plainJSON(x)
		}
	}
	return strings.Trim(v, `"'`)
}

// plainJSON turns json.Number into int or float64 and objects into
// ordered objects (keys sorted: their order is lost by then).
func plainJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
		return x
	case map[string]any:
		o := &peers.Object{}
		for _, k := range sortedKeys(x) {
			o.Set(k, plainJSON(x[k]))
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainJSON(e)
		}
		return out
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// jsonKeys are a JSON object's top-level keys in the text's order.
func jsonKeys(s string) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := t.(string)
		if !ok {
			return nil, fmt.Errorf("not an object")
		}
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// intOf and floatOf read an object's value as a number.
func intOf(o *peers.Object, key string) (int, bool, error) {
	v, ok := o.Get(key)
	if !ok || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case int:
		return x, true, nil
	case float64:
		if x == math.Trunc(x) {
			return int(x), true, nil
		}
	}
	return 0, true, fmt.Errorf("%s: %v is not an integer", key, v)
}

func floatOf(o *peers.Object, key string) (float64, bool, error) {
	v, ok := o.Get(key)
	if !ok || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case int:
		return float64(x), true, nil
	case float64:
		return x, true, nil
	}
	return 0, true, fmt.Errorf("%s: %v is not a number", key, v)
}

func stringOf(o *peers.Object, key string) (string, bool) {
	v, ok := o.Get(key)
	if !ok || v == nil {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		return fmt.Sprint(v), true
	}
	return s, true
}

// synthetic reads GuideLLM's synthetic text data (SyntheticTextDatasetConfig)
// into surge's dataset flags: prompt and output lengths, their stddevs,
// and turns. Bounds (min, max) and shared prefixes are refused: surge draws
// a normal length that is not clipped to a range, and shares prefixes its
// own way.
func synthetic(tool string, cfg *peers.Object) (dataSpec, error) {
	bad := func(format string, a ...any) (dataSpec, error) {
		return dataSpec{}, cmdline.Usagef(tool+": --data: "+format, a...)
	}
	known := map[string]bool{"prompt_tokens": true, "prompt_tokens_stdev": true, "output_tokens": true, "output_tokens_stdev": true,
		"turns": true, "kind": true, "type_": true}
	refused := map[string]string{
		"prompt_tokens_min": "surge draws prompt lengths from a normal around prompt_tokens (prompt_tokens_stdev), not clipped to a range",
		"prompt_tokens_max": "surge draws prompt lengths from a normal around prompt_tokens (prompt_tokens_stdev), not clipped to a range",
		"output_tokens_min": "surge draws output lengths from a normal around output_tokens (output_tokens_stdev), not clipped to a range",
		"output_tokens_max": "surge draws output lengths from a normal around output_tokens (output_tokens_stdev), not clipped to a range",
		"prefix_buckets":    "surge shares prefixes as a pool drawn at random (surge profile --prompt-prefix-pool-size), not in GuideLLM's weighted buckets",
		"prefix_tokens":     "surge shares prefixes as a pool drawn at random (surge profile --prompt-prefix-pool-size), not in GuideLLM's weighted buckets",
		"source":            "surge builds prompts from its own corpus",
	}
	for _, k := range cfg.Keys() {
		if why, ok := refused[k]; ok {
			return bad("%s is refused: %s", k, why)
		}
		if !known[k] {
			return bad("unknown synthetic data key %q (GuideLLM's are prompt_tokens, prompt_tokens_stdev, output_tokens, output_tokens_stdev, turns, …)", k)
		}
	}
	var d dataSpec
	for _, f := range []struct{ key, flag string }{{"prompt_tokens", "--isl"}, {"output_tokens", "--osl"}} {
		n, ok, err := intOf(cfg, f.key)
		if err != nil {
			return bad("%v", err)
		}
		if !ok {
			return bad("synthetic data needs %s", f.key)
		}
		if n < 1 {
			return bad("%s %d: want at least 1", f.key, n)
		}
		d.args = append(d.args, f.flag, strconv.Itoa(n))
	}
	d.fixedOutput = true
	for _, f := range []struct{ key, flag string }{{"prompt_tokens_stdev", "--isl-stddev"}, {"output_tokens_stdev", "--osl-stddev"}} {
		v, ok, err := floatOf(cfg, f.key)
		if err != nil {
			return bad("%v", err)
		}
		if ok && v > 0 {
			d.args = append(d.args, f.flag, fmtFloat(v))
		}
	}
	if t, ok, err := intOf(cfg, "turns"); err != nil {
		return bad("%v", err)
	} else if ok && t != 1 {
		if t < 1 {
			return bad("turns %d: want at least 1", t)
		}
		d.args = append(d.args, "--conversation-turn-mean", strconv.Itoa(t))
	}
	return d, nil
}

// transientOf reads a warmup or cooldown as GuideLLM does: a number (a
// share below 1, else seconds or requests), or a dict (json or
// key=value) of percent, value and mode.
func transientOf(tool, flag, s string) (transient, any, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 {
			return transient{}, nil, cmdline.Usagef("%s: %s %s: want 0 or more", tool, flag, s)
		}
		var raw any = f
		if f == math.Trunc(f) && !strings.Contains(s, ".") {
			raw = int(f)
		}
		if f < 1 {
			return transient{percent: &f}, raw, nil
		}
		return transient{value: &f}, raw, nil
	}
	o, err := keyValues(s)
	if err != nil {
		return transient{}, nil, cmdline.Usagef("%s: %s %q: %v", tool, flag, s, err)
	}
	var t transient
	for _, k := range o.Keys() {
		switch k {
		case "percent", "value":
			f, _, err := floatOf(o, k)
			if err != nil || f < 0 || (k == "percent" && f >= 1) {
				return transient{}, nil, cmdline.Usagef("%s: %s: %s %v: want a number ≥ 0 (a percent below 1)", tool, flag, k, get(o, k))
			}
			if k == "percent" {
				t.percent = &f
			} else {
				t.value = &f
			}
		case "mode":
			m, _ := stringOf(o, k)
			switch m {
			case "duration", "requests", "prefer_duration", "prefer_requests":
				t.mode = m
			case "both":
				return transient{}, nil, cmdline.Usagef("%s: %s mode both is refused: surge ends a phase on its time or its requests, whichever it is given", tool, flag)
			default:
				return transient{}, nil, cmdline.Usagef("%s: %s mode %q: want duration, requests, prefer_duration or prefer_requests", tool, flag, m)
			}
		default:
			return transient{}, nil, cmdline.Usagef("%s: %s: unknown key %q (percent, value, mode)", tool, flag, k)
		}
	}
	return t, o, nil
}

// requestFormat reads GuideLLM's request format into surge's endpoint
// type.
func requestFormat(tool, v string) (string, error) {
	switch v {
	case "", "/v1/chat/completions", "chat_completions":
		return "chat", nil
	case "/v1/completions", "text_completions":
		return "completions", nil
	case "/v1/responses", "responses":
		return "", cmdline.Usagef("%s: request format %s is refused: surge's responses endpoint type reads a different stream than GuideLLM's handler; use surge profile --endpoint-type responses", tool, v)
	case "/v1/audio/transcriptions", "/v1/audio/translations", "audio_transcriptions", "audio_translations":
		return "", cmdline.Usagef("%s: request format %s is refused: surge sends audio inside a chat message, not as the audio API's upload", tool, v)
	}
	return "", cmdline.Usagef("%s: Invalid request_format '%s'. Must be one of: /v1/chat/completions, /v1/completions (or chat_completions, text_completions)", tool, v)
}

// rates reads --rate values (each may be a comma list) into floats.
func rates(tool string, vals []string) ([]float64, error) {
	var out []float64
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			f, err := strconv.ParseFloat(p, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, cmdline.Usagef("%s: --rate %q: %q is not a number", tool, v, p)
			}
			out = append(out, f)
		}
	}
	return out, nil
}
