// Package endpoint speaks the inference servers' HTTP APIs: for each
// endpoint type (OpenAI chat, completions and Responses, Anthropic
// Messages, embeddings, rankings, TGI's generate, raw bodies and templates)
// it builds request bodies and reads responses and stream events.
//
// Each type lives in its own file as a Format registered under its
// --endpoint-type name; adding one touches no other type.
package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"text/template"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/media"
	"github.com/surgebench/surge/metrics"
)

// Kind is an endpoint type, as --endpoint-type names it.
type Kind string

// The endpoint types surge can drive, with AIPerf's names.
const (
	Chat                Kind = "chat"
	Completions         Kind = "completions"
	Responses           Kind = "responses"
	Messages            Kind = "messages"
	Embeddings          Kind = "embeddings"
	ChatEmbeddings      Kind = "chat_embeddings"
	NIMEmbeddings       Kind = "nim_embeddings"
	CohereRankings      Kind = "cohere_rankings"
	HFTEIRankings       Kind = "hf_tei_rankings"
	NIMRankings         Kind = "nim_rankings"
	HuggingFaceGenerate Kind = "huggingface_generate"
	Raw                 Kind = "raw"
	Template            Kind = "template"
	BedrockConverse     Kind = "bedrock_converse"
	BedrockInvoke       Kind = "bedrock_invoke"
	Gemini              Kind = "gemini"
	// SGLangGenerate is SGLang's native /generate and OllamaChat
	// Ollama's native /api/chat: the APIs whose answers carry the
	// server's account of the request's time (meta_info; the
	// durations).
	SGLangGenerate Kind = "sglang_generate"
	OllamaChat     Kind = "ollama_chat"
)

// Info describes an endpoint type.
type Info struct {
	// Path is the default URL path; StreamPath, when set, replaces it for
	// streamed requests (TGI's /generate_stream).
	Path, StreamPath string
	// Streams reports that the type can stream; a streaming request to one
	// that cannot is sent and read as a plain request.
	Streams bool
	// ProducesTokens is false for embeddings and rankings, whose metrics
	// are latency and throughput, not TTFT or output length.
	ProducesTokens bool
	// Rankings types send a query and passages.
	Rankings bool
	// CapField is the body field that carries a turn's output cap ("":
	// none of the type's own, as for raw bodies and templates); chat's
	// is max_completion_tokens, or max_tokens with LegacyMaxTokens.
	CapField string
	// KeyHeader is the header an API key goes in ("" for Authorization:
	// Bearer); Headers are fixed headers the API requires.
	KeyHeader string
	Headers   map[string]string
	// EndsAtEOF reports that a stream may end by closing, with no end
	// marker of its own (raw and template streams).
	EndsAtEOF bool
	// Media reports that the type sends a turn's images and audio (as
	// OpenAI chat content parts); a turn with media fails to build for
	// the others.
	Media bool
	// Lines reports that the type streams newline-delimited JSON
	// (application/x-ndjson: Ollama's), one event per line, not SSE.
	Lines bool
}

// Format is one endpoint type's wire format.
type Format interface {
	// Info describes the type.
	Info() Info
	// Body builds the JSON request body for r.
	Body(e *Endpoint, r *Request) ([]byte, error)
	// Decoder returns a decoder for one response; it may keep state
	// across the events of that response.
	Decoder(e *Endpoint) Decoder
}

// Decoder reads one response.
type Decoder interface {
	// Event decodes one streamed event (typ is its SSE event type, nil
	// when it had none), appending its text to out.
	Event(typ, data []byte, out *Output) (Delta, error)
	// Body decodes a whole non-streamed response body.
	Body(data []byte, out *Output) (Delta, error)
}

// Output collects a response's text as its events are decoded. Decoders
// append to the slices, so a caller that reuses them allocates nothing per
// event.
type Output struct {
	Text, Reasoning []byte
	// Tools collects the response's function calls; their names and
	// arguments are not in Text.
	Tools ToolCalls
}

// Reset empties o for another response, keeping its buffers.
func (o *Output) Reset() {
	o.Text, o.Reasoning = o.Text[:0], o.Reasoning[:0]
	o.Tools.Reset()
}

// Delta is what one event (or a whole response) carried, apart from the
// text, which goes to the caller's Output.
type Delta struct {
	// Content and Reasoning report that non-empty text of that kind came.
	Content   bool
	Reasoning bool
	// ToolCall reports a streamed tool-call delta (a name or arguments),
	// an output event like content; its text goes to Output.Text.
	ToolCall bool
	// Finished is set when the response said it finished (a finish or stop
	// reason, a final event); Done marks the stream's end marker ([DONE],
	// message_stop, response.completed), after which nothing is read.
	Finished bool
	Done     bool
	// Items counts the embeddings or rankings a non-generating response
	// returned.
	Items int
	Usage metrics.Usage
	// Server is the server's account of the request's time when the
	// event or body carried one (llama.cpp's timings, SGLang's meta_info,
	// Ollama's durations); Source is TimingUnknown otherwise.
	Server metrics.ServerTiming
	// Err is an error the server sent in the body or stream.
	Err *metrics.Error
}

// Request is one turn to send, with its conversation's context.
type Request struct {
	System string
	// History is the earlier turns of the conversation with the replies
	// the server gave.
	History []Message
	Turn    *datasets.Turn
}

// Message is one chat message of a conversation's history. It marshals in
// OpenAI's chat shape; the Responses and Anthropic Messages types render
// its tool calls and results in theirs.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls are an assistant message's function calls; ToolCallID is
	// the call a role "tool" message is the result of.
	ToolCalls  []datasets.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string              `json:"tool_call_id,omitempty"`
	// Raw, when set, is the message as a dataset gave it (tool calls,
	// content parts), sent in its place by the chat-style types; Role,
	// Content, ToolCalls and ToolCallID are what the others render.
	Raw map[string]any `json:"-"`
	// Media are the message's images and audio, sent as content parts
	// after its text by the types whose Info has Media.
	Media []media.Part `json:"-"`
}

// TurnMessages is what turn adds to its conversation's messages: its
// dataset messages, or its Thread's messages and then one message of its
// role (user by default) with its content (the result of ToolCallID when
// the role is "tool").
func TurnMessages(t *datasets.Turn) []Message {
	if t.Messages == nil {
		role := t.Role
		if role == "" {
			role = "user"
		}
		own := Message{Role: role, Content: t.MessageText(), Media: t.Media, ToolCallID: t.ToolCallID}
		if t.Thread == nil {
			return []Message{own}
		}
		out := make([]Message, 0, len(t.Thread)+1)
		for i := range t.Thread {
			m := &t.Thread[i]
			out = append(out, Message{Role: m.Role, Content: m.Content(), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
		}
		return append(out, own)
	}
	out := make([]Message, len(t.Messages))
	for i, m := range t.Messages {
		role, _ := m["role"].(string)
		id, _ := m["tool_call_id"].(string)
		out[i] = Message{Role: role, Content: (&datasets.Turn{Messages: t.Messages[i : i+1]}).Content(), Raw: m,
			ToolCalls: datasets.OpenAIToolCalls(m), ToolCallID: id}
	}
	return out
}

// wireMessages is msgs as a JSON body sends them: dataset messages as
// given.
func wireMessages(msgs []Message) any {
	raw := false
	for i := range msgs {
		raw = raw || msgs[i].Raw != nil
	}
	if !raw {
		return msgs
	}
	out := make([]any, len(msgs))
	for i, m := range msgs {
		if m.Raw != nil {
			out[i] = m.Raw
		} else {
			out[i] = m
		}
	}
	return out
}

var formats = map[Kind]Format{}

// Register adds an endpoint type. Each type's file registers itself; a
// second registration of one name panics, as it is a programming error.
func Register(k Kind, f Format) {
	if _, dup := formats[k]; dup {
		panic("endpoint: type " + string(k) + " registered twice")
	}
	formats[k] = f
}

// Kinds lists the registered endpoint types, sorted.
func Kinds() []Kind { return slices.Sorted(maps.Keys(formats)) }

// ParseKind validates an endpoint type name.
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.ToLower(strings.TrimSpace(s)))
	if _, ok := formats[k]; !ok {
		return "", fmt.Errorf("endpoint type %q is not supported (supported: %s)", s, strings.Join(toStrings(Kinds()), ", "))
	}
	return k, nil
}

func toStrings(ks []Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// Info returns the type's description (the zero Info for an unknown one).
func (k Kind) Info() Info {
	if f, ok := formats[k]; ok {
		return f.Info()
	}
	return Info{}
}

// Inputs is how many inputs a request for t carries, for the inputs/s
// throughput of the types that generate no tokens: the passages a rankings
// request ranks, the texts an embeddings request embeds (1 unless the type
// batches); 0 for the generating types.
func (e *Endpoint) Inputs(t *datasets.Turn) int {
	in := e.Info()
	switch {
	case in.ProducesTokens:
		return 0
	case in.Rankings:
		return len(t.Passages)
	}
	if b, ok := formats[e.Kind].(batcher); ok {
		return b.inputs(t)
	}
	return 1
}

// batcher is a type that generates no tokens whose request may carry
// several texts.
type batcher interface {
	inputs(t *datasets.Turn) int
}

// Path returns the kind's default URL path (non-streamed).
func (k Kind) Path() string { return k.Info().Path }

// Endpoint is one configured endpoint: its type, the model and the options
// that shape every request and response.
type Endpoint struct {
	Kind      Kind
	Model     string
	Streaming bool
	// Extra fields (from --extra-inputs) are merged into every JSON body;
	// a turn's own Extra wins over them.
	Extra map[string]any
	// CustomPath replaces the type's default path (--endpoint).
	CustomPath string
	// Template is the template type's body (--endpoint-template); see
	// ParseTemplate.
	Template *template.Template
	// ResponseField is a JSON path to the text of each event or body
	// (--response-field), for raw and template types, and for any other
	// type whose server puts its text elsewhere.
	ResponseField string
	// Reasoning says where reasoning text is found (default ReasoningAuto).
	Reasoning ReasoningFormat
	// PerChunkUsage asks a streaming server for the running usage on every
	// chunk (stream_options.continuous_usage_stats, as vLLM names it), so
	// each chunk's tokens are known.
	PerChunkUsage bool
	// LegacyMaxTokens sends a chat request's output cap as max_tokens, the
	// name servers that ignore max_completion_tokens still honour
	// (--use-legacy-max-tokens).
	LegacyMaxTokens bool
	// DefaultMaxTokens is the output cap sent by a type that requires one
	// (messages) for a turn without its own (0: 4096).
	DefaultMaxTokens int
}

// ModelFor is the model a turn is sent to: its own (a run that names
// several models assigns one to each turn), else the endpoint's.
func (e *Endpoint) ModelFor(t *datasets.Turn) string {
	if t != nil && t.Model != "" {
		return t.Model
	}
	return e.Model
}

// MaxTokensField is the body field that carries the output cap: the
// type's CapField, max_tokens for chat with LegacyMaxTokens ("": the
// type has none of its own).
func (e *Endpoint) MaxTokensField() string {
	if e.Kind == Chat && e.LegacyMaxTokens {
		return "max_tokens"
	}
	return e.Info().CapField
}

func (e *Endpoint) format() (Format, error) {
	f, ok := formats[e.Kind]
	if !ok {
		return nil, fmt.Errorf("endpoint type %q is not supported", e.Kind)
	}
	return f, nil
}

// Info describes the endpoint's type.
func (e *Endpoint) Info() Info { return e.Kind.Info() }

// Streams reports whether requests are streamed: asked for, and the type
// can.
func (e *Endpoint) Streams() bool { return e.Streaming && e.Info().Streams }

// Path is the URL path requests go to: the custom path, else the type's
// default (its streaming path when streaming); a {model} in it is the
// endpoint's model, escaped as one path segment (the APIs that name the
// model in the path: Bedrock, Gemini).
func (e *Endpoint) Path() string {
	p := e.CustomPath
	switch in := e.Info(); {
	case p != "" && !strings.HasPrefix(p, "/"):
		p = "/" + p
	case p != "":
	case e.Streams() && in.StreamPath != "":
		p = in.StreamPath
	default:
		p = in.Path
	}
	if strings.Contains(p, modelVar) {
		p = strings.ReplaceAll(p, modelVar, PathSegment(e.Model))
	}
	return p
}

// EndsAtEOF reports whether a stream that closes without an end marker or
// finish reason ended normally: so for types without one, and for any type
// whose text is read from ResponseField.
func (e *Endpoint) EndsAtEOF() bool { return e.ResponseField != "" || e.Info().EndsAtEOF }

// Validate checks the endpoint can build requests: a known type, a path,
// a template for the template type, a well-formed response field.
func (e *Endpoint) Validate() error {
	if _, err := e.format(); err != nil {
		return err
	}
	if e.Kind == Template && e.Template == nil {
		return errors.New("endpoint type template needs a body template")
	}
	if e.Path() == "" {
		return fmt.Errorf("endpoint type %s has no default path: give one", e.Kind)
	}
	if e.ResponseField != "" {
		if _, err := parseFieldPath(e.ResponseField); err != nil {
			return err
		}
	}
	return nil
}

// SetHeaders adds the type's fixed headers to h (an API's version header);
// they do not replace headers the user set.
func (e *Endpoint) SetHeaders(h http.Header) {
	for k, v := range e.Info().Headers {
		if h.Get(k) == "" {
			h.Set(k, v)
		}
	}
}

// KeyHeader returns the header name and value that carry apiKey for this
// type: x-api-key for Anthropic's Messages, Authorization: Bearer for the
// rest.
func (e *Endpoint) KeyHeader(apiKey string) (name, value string) {
	if h := e.Info().KeyHeader; h != "" {
		return h, apiKey
	}
	return "Authorization", "Bearer " + apiKey
}

// Body returns the request body for turn, after history (the earlier turns
// of its conversation with the replies the server gave). A turn with a
// payload is sent as it is, whatever the type; one with a Body byte for
// byte.
func (e *Endpoint) Body(system string, history []Message, turn *datasets.Turn) ([]byte, error) {
	f, err := e.format()
	if err != nil {
		return nil, err
	}
	if turn.Body != nil {
		return turn.Body, nil
	}
	if turn.Payload != nil {
		return json.Marshal(turn.Payload)
	}
	if len(turn.Media) > 0 && !f.Info().Media {
		return nil, fmt.Errorf("endpoint type %s cannot send images or audio (chat sends them as content parts)", e.Kind)
	}
	return f.Body(e, &Request{System: system, History: history, Turn: turn})
}

// jsonBody marshals body after merging the endpoint's and the turn's extra
// fields into it (the turn's win).
func jsonBody(e *Endpoint, t *datasets.Turn, body map[string]any) ([]byte, error) {
	mergeExtra(e, t, body)
	return json.Marshal(body)
}

// mergeExtra merges the endpoint's and the turn's extra fields into body
// (the turn's win).
func mergeExtra(e *Endpoint, t *datasets.Turn, body map[string]any) {
	for k, v := range e.Extra {
		body[k] = v
	}
	if t != nil {
		for k, v := range t.Extra {
			body[k] = v
		}
	}
}

// promptText joins a system prompt, the history and the turn into one
// prompt, for APIs that take text rather than messages.
func promptText(r *Request) string {
	var b strings.Builder
	if r.System != "" {
		b.WriteString(r.System)
		b.WriteString("\n\n")
	}
	for _, m := range r.history() {
		b.WriteString(m.Content)
		b.WriteString("\n\n")
	}
	b.WriteString(r.Turn.Content())
	return b.String()
}

// history is the earlier messages r's turn is sent after: none when the
// turn's own dataset messages carry the whole conversation, or it is
// Standalone.
func (r *Request) history() []Message {
	if r.Turn.Standalone || r.Turn.Messages != nil && !r.Turn.MessagesDelta {
		return nil
	}
	return r.History
}

// chatMessages is the OpenAI-style message list of r: system, history,
// then the turn's message (or its dataset messages).
func chatMessages(r *Request, withSystem bool) []Message {
	h := r.history()
	msgs := make([]Message, 0, len(h)+2)
	if withSystem && r.System != "" {
		msgs = append(msgs, Message{Role: "system", Content: r.System})
	}
	msgs = append(msgs, h...)
	return append(msgs, TurnMessages(r.Turn)...)
}
