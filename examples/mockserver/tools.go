package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// Agent traffic: the mock answers a request that offers tools (chat,
// Responses, Anthropic Messages) with a function call for a seeded
// fraction of its answers (Config.ToolCallRate), streamed in each API's
// shape, and checks the shape of the tool calls and results a request
// sends back: a malformed one, or a result for a call the conversation
// never made, is refused with 400 as the real APIs refuse it, and
// counted. With Config.PrefixCache it reports the prompt tokens of the
// leading messages it saw before as cached, and with Config.MaxModelLen
// it refuses a prompt and output cap past the window as vLLM does.

// agentPlan is what a request's agent parts ask of its answer.
type agentPlan struct {
	// call, when set, is the function call the answer makes instead of
	// text.
	call *toolCall
	// cached is the prompt tokens served from the prefix cache (-1: not
	// reported).
	cached int
}

// toolCall is a call the mock makes: a function the request offered.
type toolCall struct {
	id, name string
	// broken cuts the arguments off before their end: not JSON.
	broken bool
}

// agentCounters are the agent traffic's counts and the prefix cache.
type agentCounters struct {
	calls, results, rejected, overflows, cached atomic.Uint64
	prefix                                      [prefixSlots]atomic.Uint64
}

// prefixSlots bounds the prefix cache: a direct-mapped table of message
// prefix hashes (a collision evicts), so serving takes no lock.
const prefixSlots = 1 << 16

// overflowError is a prompt past Config.MaxModelLen, in vLLM's words.
type overflowError struct{ window, prompt, out int }

func (e *overflowError) Error() string {
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
		e.window, e.prompt+e.out, e.prompt, e.out)
}

// agent inspects body (of api: chatAgent, responsesAgent or
// messagesAgent) for its tools and tool messages and plans the answer's
// agent parts; n is the request's number. A request past the window
// is an *overflowError, a malformed tool message wraps errBadRequest. Requests
// with neither tools nor a cache to report cost a byte search.
func (s *Server) agent(api agentAPI, body []byte, prompt, maxTokens int, n uint64) (*agentPlan, error) {
	if l := s.cfg.MaxModelLen; l > 0 && prompt+max(maxTokens, 1) > l {
		s.agents.overflows.Add(1)
		return nil, &overflowError{window: l, prompt: prompt, out: max(maxTokens, 1)}
	}
	if !s.cfg.PrefixCache && !bytes.Contains(body, []byte(`"tool`)) && !bytes.Contains(body, []byte(`function_call`)) {
		return nil, nil
	}
	msgs, names, results, err := readAgent(api, body)
	if err != nil {
		s.agents.rejected.Add(1)
		return nil, fmt.Errorf("%w: %w", errBadRequest, err)
	}
	s.agents.results.Add(uint64(results))
	p := &agentPlan{cached: -1}
	if s.cfg.PrefixCache {
		p.cached = s.cachedPrefix(msgs)
		s.agents.cached.Add(uint64(p.cached))
	}
	// A call takes toolSyntax tokens and a word: a cap below that is
	// answered in text, within it, as a server keeps to its cap.
	fits := maxTokens == 0 || maxTokens > toolSyntax
	if len(names) > 0 && s.cfg.ToolCallRate > 0 && fits && unitFloat(splitmix64(s.cfg.Seed^0x746f6f6c^splitmix64(n))) < s.cfg.ToolCallRate {
		h := splitmix64(s.cfg.Seed ^ 0x61726773 ^ splitmix64(n))
		p.call = &toolCall{id: "call_mock" + strconv.FormatUint(n, 10), name: names[h%uint64(len(names))],
			broken: unitFloat(splitmix64(h)) < s.cfg.BadToolArgsRate}
		s.agents.calls.Add(1)
	}
	return p, nil
}

// agentAPI is an API whose requests may carry tools.
type agentAPI uint8

const (
	chatAgent agentAPI = iota
	responsesAgent
	messagesAgent
)

// agentBody is the part of a body the tool checks read.
type agentBody struct {
	Messages []json.RawMessage `json:"messages"`
	Input    json.RawMessage   `json:"input"`
	Tools    []json.RawMessage `json:"tools"`
}

// readAgent checks a body's tools and tool messages and returns its
// messages (for the prefix cache), the functions it offers and how many
// tool results it sends.
func readAgent(api agentAPI, body []byte) (msgs []json.RawMessage, names []string, results int, err error) {
	var b agentBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, nil, 0, err
	}
	for i, raw := range b.Tools {
		name, err := toolName(api, raw)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("tools[%d]: %w", i, err)
		}
		names = append(names, name)
	}
	msgs = b.Messages
	if api == responsesAgent {
		msgs = nil
		if len(b.Input) > 0 && bytes.TrimSpace(b.Input)[0] == '[' {
			if err := json.Unmarshal(b.Input, &msgs); err != nil {
				return nil, nil, 0, fmt.Errorf("input: %w", err)
			}
		}
	}
	calls := map[string]bool{}
	// pending are the calls of the last assistant turn not answered yet:
	// as the APIs require, they are answered before anything else comes.
	pending := map[string]bool{}
	uses := false
	for i, raw := range msgs {
		var r int
		var err error
		switch api {
		case chatAgent:
			r, err = chatToolMessage(raw, calls, pending)
		case responsesAgent:
			r, err = responsesItem(raw, calls, pending)
		default:
			r, err = anthropicMessage(raw, calls, pending, &uses)
		}
		if err != nil {
			where := "messages"
			if api == responsesAgent {
				where = "input"
			}
			return nil, nil, 0, fmt.Errorf("%s[%d]: %w", where, i, err)
		}
		results += r
	}
	if uses && len(b.Tools) == 0 {
		return nil, nil, 0, errors.New("requests which include tool_use or tool_result blocks must define tools")
	}
	return msgs, names, results, nil
}

// toolName reads one tool definition in api's shape.
func toolName(api agentAPI, raw json.RawMessage) (string, error) {
	var t struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", errors.New("not a tool object")
	}
	switch api {
	case chatAgent:
		if t.Type != "function" || t.Function == nil || t.Function.Name == "" {
			return "", errors.New(`want {"type": "function", "function": {"name": ...}}`)
		}
		return t.Function.Name, nil
	case responsesAgent:
		if t.Type != "function" || t.Name == "" {
			return "", errors.New(`want {"type": "function", "name": ...}`)
		}
		return t.Name, nil
	}
	if t.Name == "" || isNull(t.InputSchema) {
		return "", errors.New(`want {"name": ..., "input_schema": {...}}`)
	}
	return t.Name, nil
}

// unanswered is the error of a message that comes while calls of the
// assistant's last turn wait for their results.
func unanswered(pending map[string]bool) error {
	var ids []string
	for id := range pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return fmt.Errorf("the assistant's tool calls %q must be answered by tool results before anything else", ids)
}

// chatToolMessage checks an OpenAI chat message's tool calls (recording
// their ids in calls, and in pending until answered) or its tool result;
// it returns 1 for a result.
func chatToolMessage(raw json.RawMessage, calls, pending map[string]bool) (int, error) {
	var m struct {
		Role       string            `json:"role"`
		ToolCalls  []json.RawMessage `json:"tool_calls"`
		ToolCallID *string           `json:"tool_call_id"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return 0, errors.New("not a message object")
	}
	if len(m.ToolCalls) > 0 && m.Role != "assistant" {
		return 0, fmt.Errorf("tool_calls in a %q message (only the assistant's make calls)", m.Role)
	}
	if m.Role != "tool" && len(pending) > 0 {
		return 0, unanswered(pending)
	}
	for j, c := range m.ToolCalls {
		var tc struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function *struct {
				Name      string  `json:"name"`
				Arguments *string `json:"arguments"`
			} `json:"function"`
		}
		if json.Unmarshal(c, &tc) != nil || tc.ID == "" || tc.Type != "function" || tc.Function == nil || tc.Function.Name == "" || tc.Function.Arguments == nil {
			return 0, fmt.Errorf(`tool_calls[%d]: want {"id", "type": "function", "function": {"name", "arguments": a string}}`, j)
		}
		calls[tc.ID], pending[tc.ID] = true, true
	}
	if m.Role != "tool" {
		return 0, nil
	}
	switch {
	case m.ToolCallID == nil || *m.ToolCallID == "":
		return 0, errors.New("a tool message needs its tool_call_id")
	case !calls[*m.ToolCallID]:
		return 0, fmt.Errorf("tool_call_id %q answers no tool call of an earlier message: messages with role 'tool' must be a response to a preceding message with 'tool_calls'", *m.ToolCallID)
	}
	delete(pending, *m.ToolCallID)
	return 1, nil
}

// responsesItem checks a Responses API input item: a function_call
// (recording its call_id) or a function_call_output answering one.
func responsesItem(raw json.RawMessage, calls, pending map[string]bool) (int, error) {
	var it struct {
		Type      string  `json:"type"`
		CallID    string  `json:"call_id"`
		Name      string  `json:"name"`
		Arguments *string `json:"arguments"`
		Output    *string `json:"output"`
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		return 0, errors.New("not an input item")
	}
	switch it.Type {
	case "function_call":
		if it.CallID == "" || it.Name == "" || it.Arguments == nil {
			return 0, errors.New(`a function_call needs its call_id, name and arguments (a string)`)
		}
		calls[it.CallID], pending[it.CallID] = true, true
	case "function_call_output":
		switch {
		case it.Output == nil:
			return 0, errors.New("a function_call_output needs its output")
		case !calls[it.CallID]:
			return 0, fmt.Errorf("no tool call found for function call output with call_id %q", it.CallID)
		}
		delete(pending, it.CallID)
		return 1, nil
	default:
		if len(pending) > 0 {
			return 0, unanswered(pending)
		}
	}
	return 0, nil
}

// anthropicMessage checks a Messages API message's tool_use blocks
// (recording their ids) and tool_result blocks; uses is set when either
// appears.
func anthropicMessage(raw json.RawMessage, calls, pending map[string]bool, uses *bool) (int, error) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return 0, errors.New("not a message object")
	}
	var blocks []struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
	}
	if len(m.Content) == 0 || bytes.TrimSpace(m.Content)[0] != '[' || json.Unmarshal(m.Content, &blocks) != nil {
		if len(pending) > 0 {
			return 0, unanswered(pending) // the results belong in the message after the calls
		}
		return 0, nil // text content
	}
	if m.Role != "user" && len(pending) > 0 {
		return 0, unanswered(pending)
	}
	results := 0
	for j, b := range blocks {
		switch b.Type {
		case "tool_use":
			*uses = true
			if m.Role != "assistant" {
				return 0, fmt.Errorf("content[%d]: tool_use in a %q message", j, m.Role)
			}
			if b.ID == "" || b.Name == "" || len(bytes.TrimSpace(b.Input)) == 0 || bytes.TrimSpace(b.Input)[0] != '{' {
				return 0, fmt.Errorf("content[%d]: a tool_use block needs its id, name and input (an object)", j)
			}
			calls[b.ID], pending[b.ID] = true, true
		case "tool_result":
			*uses = true
			if m.Role != "user" {
				return 0, fmt.Errorf("content[%d]: tool_result in a %q message", j, m.Role)
			}
			if !calls[b.ToolUseID] {
				return 0, fmt.Errorf("content[%d]: unexpected tool_use_id found in tool_result blocks: %s. Each tool_result block must have a corresponding tool_use block in the previous message", j, b.ToolUseID)
			}
			delete(pending, b.ToolUseID)
			results++
		}
	}
	if m.Role == "user" && len(pending) > 0 {
		return 0, unanswered(pending) // the user's message answers only some
	}
	return results, nil
}

// cachedPrefix is the prompt tokens of msgs' longest leading run of
// messages seen before (whole messages, as a prefix cache matches them),
// and remembers every prefix of msgs.
func (s *Server) cachedPrefix(msgs []json.RawMessage) int {
	h := uint64(s.cfg.Seed) ^ 0x70726566
	cached, hit := 0, true
	for _, raw := range msgs {
		h = splitmix64(h ^ hashBytes(raw))
		slot := &s.agents.prefix[h%prefixSlots]
		if hit && slot.Load() == h {
			cached += s.count.messageTokens(raw)
			continue
		}
		hit = false
		slot.Store(h)
	}
	return cached
}

// hashBytes is FNV-1a of b.
func hashBytes(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// messageTokens counts a message's or input item's prompt tokens: its
// content (string or text parts), a tool result's output.
func (c *counter) messageTokens(raw json.RawMessage) int {
	var m struct {
		Content json.RawMessage `json:"content"`
		Output  string          `json:"output"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return 0
	}
	n, _ := c.countContent(m.Content, nil)
	return n + c.count(m.Output)
}

// countResponsesInput counts a Responses API input: a prompt string, or a
// list of messages and function call items (a call's arguments and an
// output count as words).
func (c *counter) countResponsesInput(raw json.RawMessage) (int, error) {
	if p, err := c.countPrompt(raw); err == nil {
		return p, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || len(items) == 0 {
		return 0, fmt.Errorf("%w: input must be a string or a non-empty list of items", errBadRequest)
	}
	n := 0
	for i, raw := range items {
		var it struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Arguments string          `json:"arguments"`
			Output    string          `json:"output"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			return 0, fmt.Errorf("%w: input[%d] is not an item object", errBadRequest, i)
		}
		switch it.Type {
		case "function_call":
			n += c.count(it.Arguments)
		case "function_call_output":
			n += c.count(it.Output)
		default:
			if it.Role == "" {
				return 0, fmt.Errorf("%w: input[%d].role is required", errBadRequest, i)
			}
			k, err := c.countContent(it.Content, nil)
			if err != nil {
				return 0, fmt.Errorf("%w: input[%d].content: %w", errBadRequest, i, err)
			}
			n += k
		}
	}
	return n, nil
}

// toolArgs is the pieces of a call's arguments, a JSON object
// {"query": "<words>"}: its syntax a piece a token, then its words k a
// piece, then its close (left off when broken: not JSON). With the event
// that names the call, the pieces are g.completion() tokens.
func toolArgs(g *generation, k int, broken bool) []string {
	words := toolWords(g)
	pieces := []string{`{"`, `query`, `":"`}
	for i := 0; i < words; i += k {
		pieces = append(pieces, string(appendWords(nil, g.words, i, min(i+k, words))))
	}
	if !broken {
		pieces = append(pieces, `"}`)
	}
	return pieces
}

// toolSyntax is the tokens of a call that are not its arguments' words:
// the event naming it, the arguments' {"query":" and "}.
const toolSyntax = 5

// toolWords is how many words a call's arguments carry: its output less
// the call's syntax, so the call keeps within the request's output cap.
func toolWords(g *generation) int { return max(g.out-toolSyntax, 1) }

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// streamToolCall streams g's answer as the function call it plans, in
// api's events, each flushed when due; the call's first event (its id and
// name) comes at TTFT, and its arguments a chunk a token slot apart.
func (s *Server) streamToolCall(ctx context.Context, w http.ResponseWriter, api agentAPI, g *generation, includeUsage bool) error {
	fl := w.(http.Flusher) // startStream checked
	c := g.agent.call
	pieces := toolArgs(g, s.cfg.TokensPerChunk, c.broken)
	id := strconv.FormatUint(g.n, 10)
	write := func(event, data string) error {
		var err error
		if event != "" {
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		} else {
			_, err = fmt.Fprintf(w, "data: %s\n\n", data)
		}
		fl.Flush()
		return err
	}
	head := fmt.Sprintf(`{"id":"chatcmpl-mock-%s","object":"chat.completion.chunk","created":%d,"model":%s,"choices":[`, id, g.arrival.Unix(), quote(g.model))
	var err error
	switch api {
	case responsesAgent:
		err = write("response.created", fmt.Sprintf(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_mock%s","object":"response","status":"in_progress","model":%s,"output":[],"usage":null}}`, id, quote(g.model)))
	case messagesAgent:
		err = write("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_mock%s","type":"message","role":"assistant","content":[],"model":%s,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":1%s}}}`, id, quote(g.model), g.prompt, anthropicCache(g)))
	}
	if err != nil {
		return err
	}
	// The event naming the call is its first token, at TTFT; the
	// arguments' pieces follow a token slot apart.
	var timer *time.Timer
	if err := sleepUntil(ctx, &timer, g.due(0, s.cfg.ITL)); err != nil {
		return err
	}
	s.prefill.leave(g)
	switch api {
	case chatAgent:
		err = write("", head+fmt.Sprintf(`{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]},"logprobs":null,"finish_reason":null}]}`, quote(c.id), quote(c.name)))
	case responsesAgent:
		err = write("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"function_call","id":"fc_mock%s","call_id":%s,"name":%s,"arguments":"","status":"in_progress"}}`, id, quote(c.id), quote(c.name)))
	default:
		err = write("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, quote(c.id), quote(c.name)))
	}
	if err != nil {
		return fmt.Errorf("mock: writing event: %w", err)
	}
	s.ttft.record(time.Since(g.arrival))
	s.genTokens.Add(1)
	args := ""
	for j, p := range pieces {
		if err := sleepUntil(ctx, &timer, g.due(j+1, s.cfg.ITL)); err != nil {
			return err
		}
		args += p
		switch api {
		case chatAgent:
			err = write("", head+fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":%s}}]},"logprobs":null,"finish_reason":null}]}`, quote(p)))
		case responsesAgent:
			err = write("response.function_call_arguments.delta", fmt.Sprintf(`{"type":"response.function_call_arguments.delta","sequence_number":%d,"item_id":"fc_mock%s","output_index":0,"delta":%s}`, j+2, id, quote(p)))
		default:
			err = write("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%s}}`, quote(p)))
		}
		if err != nil {
			return fmt.Errorf("mock: writing event: %w", err)
		}
		s.genTokens.Add(uint64(max(countWords(p), 1)))
	}
	switch api {
	case chatAgent:
		err = write("", head+`{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`)
		if err == nil && includeUsage {
			err = write("", head+`],"usage":`+string(appendUsage(nil, g))+`}`)
		}
		if err == nil {
			_, err = fmt.Fprint(w, doneEvent)
			fl.Flush()
		}
	case responsesAgent:
		item := fmt.Sprintf(`{"type":"function_call","id":"fc_mock%s","call_id":%s,"name":%s,"arguments":%s,"status":"completed"}`, id, quote(c.id), quote(c.name), quote(args))
		_ = write("response.function_call_arguments.done", fmt.Sprintf(`{"type":"response.function_call_arguments.done","item_id":"fc_mock%s","output_index":0,"arguments":%s}`, id, quote(args)))
		_ = write("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":0,"item":%s}`, item))
		err = write("response.completed", fmt.Sprintf(`{"type":"response.completed","response":{"id":"resp_mock%s","object":"response","status":"completed","model":%s,"output":[%s],"usage":%s,"error":null}}`, id, quote(g.model), item, responsesUsage(g)))
	default:
		_ = write("content_block_stop", `{"type":"content_block_stop","index":0}`)
		_ = write("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":%d}}`, g.completion()))
		err = write("message_stop", `{"type":"message_stop"}`)
	}
	return err
}

// respondToolCall sends g's planned call as one body once its last token
// is due.
func (s *Server) respondToolCall(ctx context.Context, w http.ResponseWriter, api agentAPI, g *generation) error {
	var timer *time.Timer
	if err := sleepUntil(ctx, &timer, g.due(g.out-1, s.cfg.ITL)); err != nil {
		return err
	}
	c := g.agent.call
	var args string
	for _, p := range toolArgs(g, toolWords(g), c.broken) {
		args += p
	}
	id := strconv.FormatUint(g.n, 10)
	var body string
	switch api {
	case chatAgent:
		body = fmt.Sprintf(`{"id":"chatcmpl-mock-%s","object":"chat.completion","created":%d,"model":%s,"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":%s,"type":"function","function":{"name":%s,"arguments":%s}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":%s}`,
			id, g.arrival.Unix(), quote(g.model), quote(c.id), quote(c.name), quote(args), appendUsage(nil, g))
	case responsesAgent:
		body = fmt.Sprintf(`{"id":"resp_mock%s","object":"response","status":"completed","model":%s,"output":[{"type":"function_call","id":"fc_mock%s","call_id":%s,"name":%s,"arguments":%s,"status":"completed"}],"usage":%s,"error":null}`,
			id, quote(g.model), id, quote(c.id), quote(c.name), quote(args), responsesUsage(g))
	default:
		input := args
		if !json.Valid([]byte(input)) {
			input = "{}" // Anthropic's input is always an object
		}
		body = fmt.Sprintf(`{"id":"msg_mock%s","type":"message","role":"assistant","model":%s,"content":[{"type":"tool_use","id":%s,"name":%s,"input":%s}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":%d%s}}`,
			id, quote(g.model), quote(c.id), quote(c.name), input, g.prompt, g.completion(), anthropicCache(g))
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := fmt.Fprintln(w, body); err != nil {
		return fmt.Errorf("mock: writing response: %w", err)
	}
	s.ttft.record(time.Since(g.arrival))
	s.genTokens.Add(uint64(g.out))
	return nil
}

// responsesUsage is g's usage in the Responses API's shape.
func responsesUsage(g *generation) string {
	cache := ""
	if g.agent != nil && g.agent.cached >= 0 {
		cache = fmt.Sprintf(`,"input_tokens_details":{"cached_tokens":%d}`, g.agent.cached)
	}
	return fmt.Sprintf(`{"input_tokens":%d,"output_tokens":%d,"total_tokens":%d%s,"output_tokens_details":{"reasoning_tokens":%d}}`, g.prompt, g.completion(), g.prompt+g.completion(), cache, g.reasoning)
}

// anthropicCache is the cache_read_input_tokens member of g's Anthropic
// usage, when the prefix cache reports it.
func anthropicCache(g *generation) string {
	if g.agent == nil || g.agent.cached < 0 {
		return ""
	}
	return fmt.Sprintf(`,"cache_read_input_tokens":%d`, g.agent.cached)
}

// writeAgentError answers a request agent refused: 400, as vLLM words an
// overflow, or as the API words a malformed tool message.
func (s *Server) writeAgentError(w http.ResponseWriter, err error) {
	s.badRequests.Add(1)
	var o *overflowError
	if errors.As(err, &o) {
		writeError(w, http.StatusBadRequest, "BadRequestError", o.Error())
		return
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", "mock: "+err.Error())
}

// agentAPIs are the other APIs whose requests may carry tools.
var agentAPIs = map[otherAPI]agentAPI{responsesAPI: responsesAgent, messagesAPI: messagesAgent}

// cacheUsage adds the prefix cache's count to a Responses or Anthropic
// usage object (responses' usage has output_tokens_details; Anthropic's
// has none), when it is reported.
func cacheUsage(g *generation, usage map[string]any) map[string]any {
	if g.agent == nil || g.agent.cached < 0 {
		return usage
	}
	if _, responses := usage["total_tokens"]; responses {
		usage["input_tokens_details"] = map[string]int{"cached_tokens": g.agent.cached}
	} else {
		usage["cache_read_input_tokens"] = g.agent.cached
	}
	return usage
}

// completion is g's output in tokens as its usage reports it: its words,
// or a call's words and syntax when it answers with one (a token a piece,
// as it streams them).
func (g *generation) completion() int {
	if g.agent != nil && g.agent.call != nil {
		return toolWords(g) + toolSyntax
	}
	return g.out
}
