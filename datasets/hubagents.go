package datasets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/surgebench/surge/datasets/hf"
)

// wekaRow reads a row that is one WEKA trace (its nulls are absent
// fields, as Parquet writes them).
func wekaRow(file string, n int, r hf.Row) (*WekaTrace, error) {
	b, err := json.Marshal(dropNulls(map[string]any(r)))
	if err != nil {
		return nil, &hf.Error{File: file, Row: n, Msg: fmt.Sprintf("not a WEKA trace: %v", err)}
	}
	t, err := ParseWekaTrace(bytes.NewReader(b), fmt.Sprintf("%s row %d", file, n))
	if err != nil {
		return nil, &hf.Error{File: file, Row: n, Msg: "not a WEKA trace: " + strings.TrimPrefix(err.Error(), fmt.Sprintf("%s row %d:1: ", file, n)), Err: err}
	}
	return t, nil
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, y := range x {
			if y != nil {
				out[k] = dropNulls(y)
			}
		}
		return out
	case []any:
		for i, y := range x {
			x[i] = dropNulls(y)
		}
	}
	return v
}

// Exgentic's recorded harnesses, source models and (v2) benchmarks
// (AIPerf's enums), and the pairs each recording does not hold.
var (
	exgenticHarnesses  = []string{"claude_code", "openai_solo", "smolagents_code", "tool_calling", "tool_calling_with_shortlisting"}
	exgenticModels     = []string{"DeepSeek-V3.2", "Kimi-K2.5", "claude-opus-4-5", "gemini-3-pro-preview", "gpt-4.1", "gpt-5.2-2025-12-11"}
	exgenticBenchmarks = []string{"appworld", "browsecompplus", "swebench", "tau2_airline", "tau2_retail", "tau2_telecom"}
	exgenticMissing    = map[[2]string]bool{
		{"openai_solo", "gpt-5.2-2025-12-11"}: true, {"smolagents_code", "claude-opus-4-5"}: true,
		{"smolagents_code", "gemini-3-pro-preview"}: true, {"smolagents_code", "gpt-5.2-2025-12-11"}: true,
		{"tool_calling", "gpt-5.2-2025-12-11"}: true, {"tool_calling_with_shortlisting", "claude-opus-4-5"}: true,
		{"tool_calling_with_shortlisting", "gpt-4.1"}: true, {"tool_calling_with_shortlisting", "gpt-5.2-2025-12-11"}: true,
	}
	exgenticV2Missing = map[[2]string]bool{
		{"claude_code", "gpt-4.1"}: true, {"openai_solo", "gpt-4.1"}: true, {"smolagents_code", "gpt-4.1"}: true,
		{"tool_calling", "gpt-4.1"}: true, {"tool_calling_with_shortlisting", "claude-opus-4-5"}: true,
		{"tool_calling_with_shortlisting", "gpt-4.1"}: true, {"tool_calling_with_shortlisting", "gpt-5.2-2025-12-11"}: true,
	}
)

// exgenticFilter is exgentic's --dataset-filter: a harness, a source
// model and (exgentic_v2) a benchmark ("": any).
type exgenticFilter struct{ harness, model, benchmark string }

// canonicalModel strips a recorded model name's provider prefix.
func canonicalModel(m string) string {
	low := strings.ToLower(m)
	for _, p := range []string{"openai/azure/", "azure/", "aws/", "gcp/"} {
		if strings.HasPrefix(low, p) {
			return m[len(p):]
		}
	}
	return m
}

func parseExgenticFilter(kv [][2]string, v2 bool) (exgenticFilter, error) {
	var f exgenticFilter
	missing, name := exgenticMissing, "exgentic"
	if v2 {
		missing, name = exgenticV2Missing, "exgentic_v2"
	}
	// The source models some harness holds.
	var held []string
	for _, m := range exgenticModels {
		if slices.ContainsFunc(exgenticHarnesses, func(h string) bool { return !missing[[2]string{h, m}] }) {
			held = append(held, m)
		}
	}
	available := fmt.Sprintf("harness=[%s], source_model=[%s]", strings.Join(exgenticHarnesses, ", "), strings.Join(held, ", "))
	if v2 {
		available += fmt.Sprintf(", benchmark=[%s]", strings.Join(exgenticBenchmarks, ", "))
	}
	pick := func(list []string, v string) int {
		return slices.IndexFunc(list, func(x string) bool { return strings.EqualFold(x, v) })
	}
	for _, p := range kv {
		switch p[0] {
		case "harness":
			i := pick(exgenticHarnesses, p[1])
			if i < 0 {
				return f, fmt.Errorf("%s: harness %q: unknown (available: %s)", name, truncate(p[1], 60), available)
			}
			f.harness = exgenticHarnesses[i]
		case "source_model":
			i := pick(exgenticModels, canonicalModel(p[1]))
			if i < 0 {
				return f, fmt.Errorf("%s: source_model %q: unknown (available: %s)", name, truncate(p[1], 60), available)
			}
			f.model = exgenticModels[i]
		case "benchmark":
			if !v2 {
				return f, fmt.Errorf("%s: the benchmark filter is exgentic_v2's (its traces name their benchmark)", name)
			}
			i := pick(exgenticBenchmarks, p[1])
			if i < 0 {
				return f, fmt.Errorf("%s: benchmark %q: unknown (available: %s)", name, truncate(p[1], 60), available)
			}
			f.benchmark = exgenticBenchmarks[i]
		default:
			return f, fmt.Errorf("%s: unknown filter %q (available: %s)", name, truncate(p[0], 40), available)
		}
	}
	if f.model != "" && !slices.Contains(held, f.model) {
		return f, fmt.Errorf("%s: no traces of source_model=%s in any harness (available: %s)", name, f.model, available)
	}
	if missing[[2]string{f.harness, f.model}] {
		var ok []string
		for _, m := range exgenticModels {
			if !missing[[2]string{f.harness, m}] {
				ok = append(ok, m)
			}
		}
		return f, fmt.Errorf("%s: no traces of harness=%s with source_model=%s (source models for this harness: %s)", name, f.harness, f.model, strings.Join(ok, ", "))
	}
	return f, nil
}

// exgenticRow replays a recorded agent session: each successful model
// call with positive token counts is a turn carrying its whole recorded
// message and tool snapshot (sent as it is, no history added), capped at
// its recorded output, after the idle time since the previous call
// ended (AIPerf's Exgentic loader, closed-loop).
func (c *hubConv) exgenticRow(file string, n int, r hf.Row) ([]Conversation, error) {
	bad := func(format string, args ...any) error {
		return &hf.Error{File: file, Row: n, Msg: fmt.Sprintf(format, args...)}
	}
	harness, _ := r["harness"].(string)
	session, _ := r["session_id"].(string)
	if harness == "" || session == "" {
		return nil, bad("no harness or session_id")
	}
	models, ok := r["models"].([]any)
	if !ok {
		return nil, bad("models must be a list of model names")
	}
	matched := c.ex.model == ""
	for _, m := range models {
		s, ok := m.(string)
		if !ok || s == "" {
			return nil, bad("models must be a list of model names")
		}
		matched = matched || strings.EqualFold(canonicalModel(s), c.ex.model)
	}
	if benchmark, _ := r["benchmark"].(string); c.ex.benchmark != "" && benchmark != c.ex.benchmark {
		matched = false
	}
	if c.ex.harness != "" && harness != c.ex.harness || !matched {
		c.st.filtered++
		return nil, nil
	}
	spans, ok := r["spans"].([]any)
	if !ok {
		return nil, bad("spans must be a list of objects")
	}
	type call struct {
		start, end time.Time
		i          int
		turn       Turn
	}
	var calls []call
	for i, s := range spans {
		span, ok := s.(map[string]any)
		if !ok {
			return nil, bad("spans must be a list of objects")
		}
		attrs, _ := span["attributes"].(map[string]any)
		// A model call: typed so (the first recording), or untyped with
		// OpenTelemetry's chat operation (the second).
		if typ, typed := span["type"]; typed && typ != "llm_call" || !typed && attrs["gen_ai.operation.name"] != "chat" {
			continue
		}
		if st, _ := span["status"].(map[string]any); st != nil {
			if code, _, _ := intValue(st["code"]); code == 2 {
				c.st.skip("failed calls", "")
				continue
			}
		}
		in, ok1, err1 := intValue(attrs["gen_ai.usage.input_tokens"])
		out, ok2, err2 := intValue(attrs["gen_ai.usage.output_tokens"])
		if err1 != nil || err2 != nil || !ok1 || !ok2 {
			return nil, bad("session %q span %d: token counts are not integers", session, i)
		}
		if in <= 0 || out <= 0 {
			c.st.skip("calls with no tokens", "")
			continue
		}
		start, err1 := spanTime(span["start_time"])
		end, err2 := spanTime(span["end_time"])
		if err1 != nil || err2 != nil || end.Before(start) {
			return nil, bad("session %q span %d: start_time and end_time must be times, the end after the start", session, i)
		}
		system, err := exgenticSystem(attrs["gen_ai.system_instructions"])
		if err != nil {
			return nil, bad("session %q span %d: gen_ai.system_instructions: %v", session, i, err)
		}
		msgs, err := exgenticMessages(attrs["gen_ai.input.messages"])
		if err != nil {
			return nil, bad("session %q span %d: gen_ai.input.messages: %v", session, i, err)
		}
		msgs = append(system, msgs...)
		extra, err := exgenticExtra(attrs)
		if err != nil {
			return nil, bad("session %q span %d: %v", session, i, err)
		}
		// The cap the call asked for, where it was recorded; else what it
		// produced.
		if req, ok, err := intValue(attrs["gen_ai.request.max_tokens"]); err != nil || ok && req < 1 {
			return nil, bad("session %q span %d: gen_ai.request.max_tokens must be a positive integer", session, i)
		} else if ok {
			out = req
		}
		tools, err := exgenticTools(attrs["gen_ai.tool.definitions"])
		if err != nil {
			return nil, bad("session %q span %d: gen_ai.tool.definitions: %v", session, i, err)
		}
		if err := checkTokens("gen_ai.usage.output_tokens", out); err != nil {
			return nil, bad("session %q span %d: %v", session, i, err)
		}
		calls = append(calls, call{start: start, end: end, i: i, turn: Turn{Messages: msgs, Tools: tools, MaxTokens: out, Extra: extra}})
	}
	if len(calls) == 0 {
		c.st.skip("sessions with no calls", "")
		return nil, nil
	}
	sort.SliceStable(calls, func(a, b int) bool {
		return calls[a].start.Before(calls[b].start) || calls[a].start.Equal(calls[b].start) && calls[a].i < calls[b].i
	})
	conv := Conversation{ID: session}
	for k, cl := range calls {
		if k > 0 {
			if gap := cl.start.Sub(calls[k-1].end); gap > 0 {
				cl.turn.Delay = gap
			}
		}
		conv.Turns = append(conv.Turns, cl.turn)
	}
	c.st.kept++
	return []Conversation{conv}, nil
}

func spanTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("not a time")
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02T15:04:05.999999999", s) // no zone: UTC
}

// jsonList reads a list of objects given as one or as JSON text.
func jsonList(v any) ([]map[string]any, error) {
	if s, ok := v.(string); ok {
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", err)
		}
		v = x
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a list of objects")
	}
	out := make([]map[string]any, len(list))
	for i, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d is not an object", i)
		}
		out[i] = m
	}
	return out, nil
}

// exgenticMessages turns recorded OpenTelemetry gen_ai messages (a role
// and parts: text, thinking, tool_call, tool_call_response) into OpenAI
// chat messages: a tool response is a tool message of its own, the
// developer role is system.
func exgenticMessages(v any) ([]map[string]any, error) {
	in, err := jsonList(v)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, m := range in {
		role, _ := m["role"].(string)
		parts, ok := m["parts"].([]any)
		if role == "" || !ok {
			return nil, fmt.Errorf("a message without a role and parts")
		}
		if role == "developer" {
			role = "system"
		}
		var content, reasoning strings.Builder
		var calls []any
		pending := false
		flush := func() {
			msg := map[string]any{"role": role, "content": content.String()}
			if reasoning.Len() > 0 {
				msg["reasoning_content"] = reasoning.String()
			}
			if len(calls) > 0 {
				msg["tool_calls"] = calls
			}
			out = append(out, msg)
			content.Reset()
			reasoning.Reset()
			calls, pending = nil, false
		}
		emitted := false
		for _, p := range parts {
			part, ok := p.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("a message part is not an object")
			}
			switch part["type"] {
			case "text":
				content.WriteString(textOrEmpty(part["content"]))
				pending = true
			case "thinking":
				reasoning.WriteString(textOrEmpty(part["thinking"]))
				pending = true
			case "tool_call":
				calls = append(calls, map[string]any{"id": part["id"], "type": "function",
					"function": map[string]any{"name": part["name"], "arguments": jsonText(part["arguments"])}})
				pending = true
			case "tool_call_response":
				if pending {
					flush()
				}
				out = append(out, map[string]any{"role": "tool", "tool_call_id": part["id"], "content": jsonText(part["result"])})
				emitted = true
			default:
				return nil, fmt.Errorf("a %q message has a part of type %v", role, part["type"])
			}
		}
		if pending || !emitted {
			flush()
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no messages")
	}
	return out, nil
}

// exgenticSystem turns recorded system instructions into system messages:
// a JSON list of parts as a message's, or plain text as it is (none when
// absent or empty).
func exgenticSystem(v any) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("not a string")
	}
	if s == "" {
		return nil, nil
	}
	if parts, err := jsonList(s); err == nil {
		list := make([]any, len(parts))
		for i, p := range parts {
			list[i] = p
		}
		return exgenticMessages([]any{map[string]any{"role": "system", "parts": list}})
	}
	return []map[string]any{{"role": "system", "content": s}}, nil
}

// exgenticExtra is the recorded call's sampling the request repeats: its
// temperature and stop sequences (nil: none recorded).
func exgenticExtra(attrs map[string]any) (map[string]any, error) {
	extra := map[string]any{}
	if t, ok := attrs["gen_ai.request.temperature"]; ok && t != nil {
		f, isNum := t.(float64)
		if !isNum || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("gen_ai.request.temperature must be a finite number")
		}
		extra["temperature"] = f
	}
	if v, ok := attrs["gen_ai.request.stop_sequences"]; ok && v != nil {
		list, isList := v.([]any)
		if !isList {
			return nil, fmt.Errorf("gen_ai.request.stop_sequences must be a list of strings")
		}
		for _, x := range list {
			if _, isStr := x.(string); !isStr {
				return nil, fmt.Errorf("gen_ai.request.stop_sequences must be a list of strings")
			}
		}
		if len(list) > 0 {
			extra["stop"] = list
		}
	}
	if len(extra) == 0 {
		return nil, nil
	}
	return extra, nil
}

// exgenticTools turns recorded tool definitions into OpenAI's (nil when
// there are none).
func exgenticTools(v any) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	in, err := jsonList(v)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, t := range in {
		if t["type"] != "function" {
			return nil, fmt.Errorf("a tool of type %v", t["type"])
		}
		out = append(out, map[string]any{"type": "function",
			"function": map[string]any{"name": t["name"], "description": t["description"], "parameters": t["parameters"]}})
	}
	return out, nil
}

func textOrEmpty(v any) string {
	s, _ := scalarText(v)
	return s
}

// jsonText is a value as JSON text (a string as it is).
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
