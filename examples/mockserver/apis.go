package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The APIs beyond OpenAI's chat and completions, each in its documented
// wire format: OpenAI Responses, Anthropic Messages, TGI's generate and
// generate_stream, embeddings (OpenAI, NIM, vLLM's chat form) and rankings
// (Cohere, TEI, NIM). They share the chat path's timing: the first token
// (or, for embeddings and rankings, the answer) at TTFT after admission,
// tokens ITL apart; they favour plainness over the chat path's
// zero-allocation encoding.

// otherAPI names an endpoint the handlers below serve.
type otherAPI uint8

const (
	responsesAPI otherAPI = iota
	messagesAPI
	tgiAPI
	tgiStreamAPI
	// sglangAPI is SGLang's /generate (a body with "text", not TGI's
	// "inputs"), ollamaAPI Ollama's /api/chat: native.go.
	sglangAPI
	ollamaAPI
	embeddingsAPI
	cohereRerankAPI
	teiRerankAPI
	nimRankingAPI
)

// otherRoutes maps each path to its API.
var otherRoutes = map[string]otherAPI{
	"/v1/responses":    responsesAPI,
	"/v1/messages":     messagesAPI,
	"/generate":        tgiAPI,
	"/generate_stream": tgiStreamAPI,
	"/api/chat":        ollamaAPI,
	"/v1/embeddings":   embeddingsAPI,
	"/v2/rerank":       cohereRerankAPI,
	"/v1/rerank":       cohereRerankAPI,
	"/rerank":          teiRerankAPI,
	"/v1/ranking":      nimRankingAPI,
}

// otherRequest is the union of the fields these APIs' bodies carry.
type otherRequest struct {
	Model           string          `json:"model"`
	Stream          bool            `json:"stream"`
	Input           json.RawMessage `json:"input"`
	Inputs          string          `json:"inputs"`
	Messages        json.RawMessage `json:"messages"`
	System          json.RawMessage `json:"system"`
	MaxTokens       *int            `json:"max_tokens"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	Parameters      struct {
		MaxNewTokens *int `json:"max_new_tokens"`
	} `json:"parameters"`
	// Text is SGLang's prompt, SamplingParams its options; Options are
	// Ollama's.
	Text           json.RawMessage `json:"text"`
	SamplingParams struct {
		MaxNewTokens *int `json:"max_new_tokens"`
	} `json:"sampling_params"`
	Options struct {
		NumPredict *int `json:"num_predict"`
	} `json:"options"`
	Query     json.RawMessage   `json:"query"`
	Documents []json.RawMessage `json:"documents"`
	Texts     []string          `json:"texts"`
	Passages  []json.RawMessage `json:"passages"`
}

// serveOther handles one request to api.
func (s *Server) serveOther(w http.ResponseWriter, r *http.Request, api otherAPI) {
	arrival := time.Now()
	s.requests.Add(1)
	n := s.seq.Add(1)
	body, err := readBody(http.MaxBytesReader(w, r.Body, maxBodyBytes), nil)
	if err != nil {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "mock: reading body: "+err.Error())
		return
	}
	var req otherRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "mock: body is not a JSON object: "+err.Error())
		return
	}
	if api == tgiAPI && req.Inputs == "" && len(req.Text) > 0 {
		api = sglangAPI // SGLang's /generate, not TGI's
	}
	prompt, items, err := s.count.countOther(api, &req)
	if err != nil {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "mock: "+err.Error())
		return
	}
	var agent *agentPlan
	if a, ok := agentAPIs[api]; ok {
		out := 0
		for _, v := range []*int{req.MaxTokens, req.MaxOutputTokens} {
			if v != nil {
				out = *v
			}
		}
		if agent, err = s.agent(a, body, prompt, out, n); err != nil {
			s.writeAgentError(w, err)
			return
		}
	}
	if s.shouldFail(n) {
		s.injected.Add(1)
		writeError(w, http.StatusInternalServerError, "server_error", injectedFailure)
		return
	}
	stream := req.Stream || api == tgiStreamAPI
	if api == ollamaAPI {
		var o struct {
			Stream *bool `json:"stream"`
		}
		_ = json.Unmarshal(body, &o)          // the body parsed above
		stream = o.Stream == nil || *o.Stream // Ollama streams unless told not to
	}
	if api >= embeddingsAPI {
		stream = false
	}
	if stream && api != ollamaAPI { // Ollama's lines start once admitted
		if err := startStream(w); err != nil {
			return
		}
	}
	ctx := r.Context()
	if err := s.adm.acquire(ctx); err != nil {
		s.canceled.Add(1)
		return
	}
	defer s.adm.release()
	s.promptTokens.Add(uint64(prompt))
	admitted := time.Now()
	g := generation{n: n, arrival: arrival, admitted: admitted, first: admitted.Add(s.cfg.TTFT + s.promptPrefill(uncached(prompt, agent))), finish: "length",
		words: splitmix64(s.cfg.Seed + n), prompt: prompt, model: req.Model, agent: agent}
	if g.model == "" {
		g.model = s.cfg.Model
	}
	for _, v := range []*int{req.MaxTokens, req.MaxOutputTokens, req.Parameters.MaxNewTokens, req.SamplingParams.MaxNewTokens, req.Options.NumPredict} {
		if v != nil && *v > 0 {
			g.out = min(*v, s.cfg.MaxOutputTokens)
		}
	}
	if g.out == 0 {
		g.out, g.finish = s.cfg.DefaultOutputTokens, "stop"
	}
	if api == responsesAPI || api == messagesAPI {
		g.reasoning = min(s.cfg.ReasoningTokens, g.out)
	}
	switch {
	case api == sglangAPI:
		err = s.serveSGLang(ctx, w, &g, stream)
	case api == ollamaAPI:
		err = s.serveOllama(ctx, w, &g, stream)
	case api >= embeddingsAPI:
		err = s.answerVectors(ctx, w, api, &g, items)
	case agent != nil && agent.call != nil && stream:
		err = s.streamToolCall(ctx, w, agentAPIs[api], &g, false)
	case agent != nil && agent.call != nil:
		err = s.respondToolCall(ctx, w, agentAPIs[api], &g)
	case stream:
		err = s.streamOther(ctx, w, api, &g)
	default:
		err = s.respondOther(ctx, w, api, &g)
	}
	if err != nil {
		s.canceled.Add(1)
		return
	}
	s.completed.Add(1)
}

// countOther counts the prompt's words and, for embeddings and rankings,
// the inputs or passages, rejecting bodies the real API would.
func (c *counter) countOther(api otherAPI, req *otherRequest) (prompt, items int, err error) {
	switch api {
	case responsesAPI:
		if isNull(req.Input) {
			return 0, 0, fmt.Errorf("%w: input is required", errBadRequest)
		}
		p, err := c.countResponsesInput(req.Input)
		return p, 0, err
	case messagesAPI:
		if req.MaxTokens == nil {
			return 0, 0, fmt.Errorf("%w: max_tokens: Field required", errBadRequest)
		}
		p, err := c.countMessages(req.Messages, nil)
		return p, 0, err
	case tgiAPI, tgiStreamAPI:
		if req.Inputs == "" {
			return 0, 0, fmt.Errorf("%w: inputs is required", errBadRequest)
		}
		return c.count(req.Inputs), 0, nil
	case sglangAPI:
		var text string
		if err := json.Unmarshal(req.Text, &text); err != nil {
			return 0, 0, fmt.Errorf("%w: text must be a string", errBadRequest)
		}
		return c.count(text), 0, nil
	case ollamaAPI:
		if isNull(req.Messages) {
			return 0, 0, fmt.Errorf("%w: messages is required", errBadRequest)
		}
		p, err := c.countMessages(req.Messages, nil)
		return p, 0, err
	case embeddingsAPI:
		if !isNull(req.Messages) {
			p, err := c.countMessages(req.Messages, nil)
			return p, 1, err
		}
		var one string
		if json.Unmarshal(req.Input, &one) == nil {
			return c.count(one), 1, nil
		}
		var many []string
		if err := json.Unmarshal(req.Input, &many); err != nil || len(many) == 0 {
			return 0, 0, fmt.Errorf("%w: input must be a string or a non-empty array of strings", errBadRequest)
		}
		for _, t := range many {
			prompt += c.count(t)
		}
		return prompt, len(many), nil
	}
	// Rankings: a query and at least one passage.
	var q string
	var nq struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(req.Query, &q) != nil {
		if json.Unmarshal(req.Query, &nq) != nil || nq.Text == "" {
			return 0, 0, fmt.Errorf("%w: query is required", errBadRequest)
		}
		q = nq.Text
	}
	prompt = c.count(q)
	var passages int
	switch api {
	case cohereRerankAPI:
		passages = len(req.Documents)
	case teiRerankAPI:
		passages = len(req.Texts)
		for _, t := range req.Texts {
			prompt += c.count(t)
		}
	case nimRankingAPI:
		passages = len(req.Passages)
	}
	if passages == 0 {
		return 0, 0, fmt.Errorf("%w: no passages to rank", errBadRequest)
	}
	return prompt, passages, nil
}

// answerVectors sends an embeddings or rankings answer at TTFT.
func (s *Server) answerVectors(ctx context.Context, w http.ResponseWriter, api otherAPI, g *generation, items int) error {
	var timer *time.Timer
	if err := sleepUntil(ctx, &timer, g.first); err != nil {
		return err
	}
	s.ttft.record(time.Since(g.arrival))
	var body any
	usage := map[string]int{"prompt_tokens": g.prompt, "total_tokens": g.prompt}
	switch api {
	case embeddingsAPI:
		data := make([]map[string]any, items)
		for i := range data {
			v := make([]float64, 8)
			h := splitmix64(g.words + uint64(i))
			for j := range v {
				h = splitmix64(h)
				v[j] = unitFloat(h)*2 - 1
			}
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		body = map[string]any{"object": "list", "data": data, "model": g.model, "usage": usage}
	default:
		results := make([]map[string]any, items)
		for i := range results {
			score := unitFloat(splitmix64(g.words + uint64(i)))
			switch api {
			case cohereRerankAPI:
				results[i] = map[string]any{"index": i, "relevance_score": score}
			case teiRerankAPI:
				results[i] = map[string]any{"index": i, "score": score}
			default:
				results[i] = map[string]any{"index": i, "logit": score*20 - 10}
			}
		}
		switch api {
		case cohereRerankAPI:
			body = map[string]any{"id": "rerank-mock-" + strconv.FormatUint(g.n, 10), "results": results,
				"meta": map[string]any{"billed_units": map[string]int{"search_units": 1}}}
		case teiRerankAPI:
			body = results
		default:
			body = map[string]any{"rankings": results, "usage": usage}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(body)
}

// streamOther sends g's tokens as the API's events, each flushed when due.
func (s *Server) streamOther(ctx context.Context, w http.ResponseWriter, api otherAPI, g *generation) error {
	fl := w.(http.Flusher) // startStream checked
	id := strconv.FormatUint(g.n, 10)
	send := func(event string, v any) error {
		b, _ := json.Marshal(v)
		var err error
		if event != "" {
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		} else {
			_, err = fmt.Fprintf(w, "data:%s\n\n", b)
		}
		fl.Flush()
		return err
	}
	var timer *time.Timer
	k := s.cfg.TokensPerChunk
	switch api {
	case responsesAPI:
		resp := map[string]any{"id": "resp_mock" + id, "object": "response", "status": "in_progress", "model": g.model, "output": []any{}, "usage": nil}
		if err := send("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": resp}); err != nil {
			return err
		}
	case messagesAPI:
		msg := map[string]any{"id": "msg_mock" + id, "type": "message", "role": "assistant", "content": []any{}, "model": g.model,
			"stop_reason": nil, "stop_sequence": nil, "usage": cacheUsage(g, map[string]any{"input_tokens": g.prompt, "output_tokens": 1})}
		if err := send("message_start", map[string]any{"type": "message_start", "message": msg}); err != nil {
			return err
		}
	}
	block := -1 // Anthropic's content block index
	for i := 0; i < g.out; {
		end := min(i+k, g.out)
		reasoning := i < g.reasoning
		if reasoning {
			end = min(end, g.reasoning)
		}
		if err := sleepUntil(ctx, &timer, g.due(i, s.cfg.ITL)); err != nil {
			return err
		}
		text := string(appendWords(nil, g.words, i, end))
		var err error
		switch api {
		case responsesAPI:
			typ := "response.output_text.delta"
			if reasoning {
				typ = "response.reasoning_text.delta"
			}
			err = send(typ, map[string]any{"type": typ, "sequence_number": i + 1, "item_id": "item_" + id, "output_index": 0, "content_index": 0, "delta": text})
		case messagesAPI:
			kind, field := "text", "text"
			if reasoning {
				kind, field = "thinking", "thinking"
			}
			if i == 0 || (i == g.reasoning && g.reasoning > 0) {
				if block >= 0 {
					_ = send("content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
				}
				block++
				_ = send("content_block_start", map[string]any{"type": "content_block_start", "index": block, "content_block": map[string]any{"type": kind, field: ""}})
			}
			err = send("content_block_delta", map[string]any{"type": "content_block_delta", "index": block, "delta": map[string]any{"type": kind + "_delta", field: text}})
		default: // TGI
			ev := map[string]any{"index": end, "token": map[string]any{"id": end, "text": text, "logprob": -0.5, "special": false}, "generated_text": nil, "details": nil}
			if end == g.out {
				ev["generated_text"] = string(appendWords(nil, g.words, 0, g.out))
				ev["details"] = map[string]any{"finish_reason": tgiFinish(g.finish), "generated_tokens": g.out, "seed": nil}
			}
			err = send("", ev)
		}
		if err != nil {
			return fmt.Errorf("mock: writing event: %w", err)
		}
		if i == 0 {
			s.ttft.record(time.Since(g.arrival))
		}
		s.genTokens.Add(uint64(end - i))
		i = end
	}
	var err error
	switch api {
	case responsesAPI:
		usage := map[string]any{"input_tokens": g.prompt, "output_tokens": g.out, "total_tokens": g.prompt + g.out,
			"output_tokens_details": map[string]int{"reasoning_tokens": g.reasoning}}
		status := "completed"
		if g.finish == "length" {
			status = "incomplete"
		}
		err = send("response."+status, map[string]any{"type": "response." + status, "sequence_number": g.out + 1,
			"response": map[string]any{"id": "resp_mock" + id, "object": "response", "status": status, "model": g.model, "usage": cacheUsage(g, usage), "error": nil}})
	case messagesAPI:
		if block >= 0 {
			_ = send("content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
		}
		_ = send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": anthropicStop(g.finish), "stop_sequence": nil},
			"usage": map[string]int{"output_tokens": g.out}})
		err = send("message_stop", map[string]any{"type": "message_stop"})
	}
	return err
}

func tgiFinish(f string) string {
	if f == "stop" {
		return "eos_token"
	}
	return f
}

func anthropicStop(f string) string {
	if f == "stop" {
		return "end_turn"
	}
	return "max_tokens"
}

// respondOther sends g as one body once its last token is due.
func (s *Server) respondOther(ctx context.Context, w http.ResponseWriter, api otherAPI, g *generation) error {
	var timer *time.Timer
	if err := sleepUntil(ctx, &timer, g.due(g.out-1, s.cfg.ITL)); err != nil {
		return err
	}
	content := string(appendWords(nil, g.words, g.reasoning, g.out))
	thinking := string(appendWords(nil, g.words, 0, g.reasoning))
	id := strconv.FormatUint(g.n, 10)
	var body any
	switch api {
	case responsesAPI:
		var output []any
		if g.reasoning > 0 {
			output = append(output, map[string]any{"type": "reasoning", "id": "rs_" + id, "summary": []any{},
				"content": []any{map[string]any{"type": "reasoning_text", "text": thinking}}})
		}
		output = append(output, map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": content, "annotations": []any{}}}})
		status := "completed"
		if g.finish == "length" {
			status = "incomplete"
		}
		body = map[string]any{"id": "resp_mock" + id, "object": "response", "status": status, "model": g.model, "output": output, "error": nil,
			"usage": cacheUsage(g, map[string]any{"input_tokens": g.prompt, "output_tokens": g.out, "total_tokens": g.prompt + g.out,
				"output_tokens_details": map[string]int{"reasoning_tokens": g.reasoning}})}
	case messagesAPI:
		var blocks []any
		if g.reasoning > 0 {
			blocks = append(blocks, map[string]any{"type": "thinking", "thinking": thinking, "signature": "mock"})
		}
		blocks = append(blocks, map[string]any{"type": "text", "text": content})
		body = map[string]any{"id": "msg_mock" + id, "type": "message", "role": "assistant", "model": g.model, "content": blocks,
			"stop_reason": anthropicStop(g.finish), "stop_sequence": nil, "usage": cacheUsage(g, map[string]any{"input_tokens": g.prompt, "output_tokens": g.out})}
	default:
		body = map[string]any{"generated_text": content, "details": map[string]any{"finish_reason": tgiFinish(g.finish), "generated_tokens": g.out, "seed": nil}}
		tgiHeaders(w.Header(), g, time.Now())
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(body); err != nil {
		return fmt.Errorf("mock: writing response: %w", err)
	}
	s.ttft.record(time.Since(g.arrival))
	s.genTokens.Add(uint64(g.out))
	return nil
}
