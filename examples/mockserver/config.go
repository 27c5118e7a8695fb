package mockserver

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"time"
)

// Defaults applied by New to zero fields of Config.
const (
	// DefaultOutputTokens is the output length of a request without
	// max_tokens or max_completion_tokens.
	DefaultOutputTokens = 128
	// DefaultModel is the model name the server reports.
	DefaultModel = "mock"
	// DefaultMaxOutputTokens is the largest max_tokens accepted.
	DefaultMaxOutputTokens = 131072
)

// The timing surge's embedded mock and `surge mock-server` have by
// default (a Config's zero value has none): a first token after 20 ms plus
// 20 µs per prompt token (2,048 tokens: +41 ms, as a small model's prefill
// grows), then one token every 5 ms.
const (
	DefaultTTFT            = 20 * time.Millisecond
	DefaultITL             = 5 * time.Millisecond
	DefaultPrefillPerToken = 20 * time.Microsecond
)

// Config sets the mock's timing, output shape and failure behaviour. The
// zero value is a usable server: no delays, 128 tokens per answer, one
// token per event, no failures.
type Config struct {
	// TTFT is the delay from a request's admission (its arrival, unless
	// it waited for MaxRunning) to its first token.
	TTFT time.Duration
	// ITL is the gap between tokens; 0 sends them as fast as possible.
	ITL time.Duration
	// PrefillPerToken adds to a request's TTFT (its answer's time, for
	// embeddings and rankings) for each prompt token (after ContextTokens'
	// cut), so TTFT grows with the prompt as a server's prefill does.
	PrefillPerToken time.Duration
	// Tokenizer, when set, counts the prompt tokens usage reports (and
	// that PrefillPerToken and ContextTokens act on); nil counts words.
	// surge's embedded mock counts with surge's embedded tokenizer, so its
	// usage agrees with the prompt lengths surge built.
	Tokenizer Tokenizer
	// PrefillPerImage and PrefillPerAudioSecond add to a chat request's
	// TTFT for each image part and each second of audio it carries (a
	// vision or audio encoder's time), so TTFT moves with the media.
	PrefillPerImage, PrefillPerAudioSecond time.Duration
	// ReasoningTokens is how many of the first output tokens of a chat
	// request are sent as reasoning (delta.reasoning_content). They count
	// towards max_tokens. Completions requests carry no reasoning.
	ReasoningTokens int
	// ErrorRate is the fraction of requests answered HTTP 500 with an
	// OpenAI error body. Which requests fail is decided by Seed and the
	// request's arrival order, so a run is reproducible.
	ErrorRate float64
	// StreamErrorRate is the fraction of streamed chat and completions
	// requests that fail inside their stream, after StreamErrorAfter
	// tokens, in StreamErrorShape's way (an engine's: a 200 and headers
	// already sent, the failure is an event). Which requests fail is
	// decided by Seed and the arrival order, apart from ErrorRate's.
	StreamErrorRate float64
	// StreamErrorShape is the engine whose in-stream failure is sent: one
	// of StreamErrorShapes ("": ShapeVLLM).
	StreamErrorShape string
	// StreamErrorAfter is how many tokens a failing stream sends before
	// its failure (0: none).
	StreamErrorAfter int
	// DefaultOutputTokens is the output length when the request has no
	// max_tokens (default 128); such a request finishes with "stop",
	// one with max_tokens with "length".
	DefaultOutputTokens int
	// TokensPerChunk is how many tokens one SSE event carries (default 1).
	// Chunk j is sent when its first token is due, so the first chunk
	// still comes at TTFT and the mean token rate stays 1/ITL.
	TokensPerChunk int
	// Seed drives error injection and the choice of words.
	Seed uint64
	// Model is the name reported by /v1/models and in /metrics labels
	// (default "mock"). Responses echo the request's model when it has
	// one.
	Model string
	// MaxRunning, when > 0, caps the requests generating at once; the
	// rest wait in a FIFO before their TTFT starts, which shows up as
	// vllm:num_requests_waiting.
	MaxRunning int
	// MaxOutputTokens is the largest max_tokens accepted (default
	// 131072); larger requests get 400, as vLLM does past max_model_len.
	MaxOutputTokens int
	// IgnoreMaxCompletionTokens makes the mock act like servers that only
	// know the legacy max_tokens (llama.cpp builds of early 2025): a
	// max_completion_tokens cap is ignored and the answer runs to
	// DefaultOutputTokens.
	IgnoreMaxCompletionTokens bool
	// ContextTokens, when > 0, is a slot's context: a longer chat or
	// completions prompt is cut silently as llama.cpp's server cuts it
	// (half the context at a time, from the front) and usage reports the
	// cut length, below what the client sent.
	ContextTokens int
	// WireLog, when set, receives one JSON line per streamed request with
	// the kernel's receive time of its bytes and the time its first token
	// was flushed (see wirelog.go): the wire truth a client's TTFT can be
	// judged against. Writes are serialised; the writer needs no lock.
	WireLog io.Writer
	// ToolCallRate is the fraction of answers to requests that offer
	// tools (chat, Responses, Anthropic Messages) that call one of them
	// instead of answering with text, decided by Seed and the request's
	// arrival order; BadToolArgsRate the fraction of those calls whose
	// arguments are cut off (not JSON). Requests that send tool calls and
	// results back are checked either way (tools.go).
	ToolCallRate, BadToolArgsRate float64
	// PrefixCache reports, in each answer's usage, the prompt tokens of
	// the leading messages the mock saw before as cached
	// (prompt_tokens_details.cached_tokens, the Responses API's
	// input_tokens_details, Anthropic's cache_read_input_tokens), and
	// charges PrefillPerToken for the other prompt tokens only, as a
	// server's prefix cache saves their prefill.
	PrefixCache bool
	// MaxModelLen, when > 0, is the model's window: a chat, Responses or
	// Messages request whose prompt and output cap pass it is refused
	// with 400, as vLLM refuses it.
	MaxModelLen int
	// AbortLog, when set, receives one line per chat or completions
	// request whose client disconnected before its end, saying whether
	// before its first token or mid-stream (Stats counts them). Writes
	// are serialised.
	AbortLog io.Writer
	// Hub, when set, is a folder the mock also serves as the Hugging Face
	// Hub serves its repositories (hub.go): a local Hub for HF_ENDPOINT.
	Hub string
	// SigV4, when set, makes every request carry an AWS Signature
	// Version 4 made with these credentials (checked by signing it
	// again); APIKey, when set, this key in Authorization: Bearer,
	// api-key, x-api-key or x-goog-api-key; RequireToken a bearer token
	// the mock's own token endpoints issued (clouds.go). A request
	// without is answered as the cloud answers it (403, 401).
	SigV4        *SigV4Credentials
	APIKey       string
	RequireToken bool
	// Timings is how the OpenAI routes (chat, completions) report the
	// mock's own queue, prefill and decode (timings.go): TimingsNone (""),
	// as vLLM, nothing; TimingsLlamaCpp, llama.cpp's timings object in the
	// last chunk or the body; TimingsMock, the same with the queue
	// (queue_ms). Its native routes report theirs whatever this says:
	// TGI's /generate its headers, SGLang's /generate its meta_info,
	// Ollama's /api/chat and /api/generate their durations.
	Timings string
	// OTLPEndpoint, when set, is an OTLP/HTTP traces URL (".../v1/traces")
	// the mock sends a span per generation request to, in vLLM's shape
	// (gen_ai.latency.* attributes), under the trace id of the request's
	// traceparent header (otlp.go).
	OTLPEndpoint string
}

// The ways the OpenAI routes report the mock's own times (Config.Timings).
const (
	TimingsNone     = ""
	TimingsLlamaCpp = "llamacpp"
	TimingsMock     = "mock"
)

// TimingsFormats lists Config.Timings' values, "none" for TimingsNone.
var TimingsFormats = []string{"none", TimingsLlamaCpp, TimingsMock}

// withDefaults returns cfg with zero fields set to their defaults.
func (cfg Config) withDefaults() Config {
	if cfg.DefaultOutputTokens <= 0 {
		cfg.DefaultOutputTokens = DefaultOutputTokens
	}
	if cfg.TokensPerChunk <= 0 {
		cfg.TokensPerChunk = 1
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.MaxOutputTokens <= 0 {
		cfg.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if cfg.ReasoningTokens < 0 {
		cfg.ReasoningTokens = 0
	}
	if cfg.Timings == "none" {
		cfg.Timings = TimingsNone
	}
	return cfg
}

// Validate reports the first field of cfg that cannot work, by name.
func (cfg Config) Validate() error {
	if cfg.Hub != "" {
		if st, err := os.Stat(cfg.Hub); err != nil || !st.IsDir() {
			return fmt.Errorf("mockserver: Config.Hub %s is not a folder", cfg.Hub)
		}
	}
	switch {
	case cfg.TTFT < 0:
		return fmt.Errorf("mockserver: Config.TTFT %v is negative", cfg.TTFT)
	case cfg.ITL < 0:
		return fmt.Errorf("mockserver: Config.ITL %v is negative", cfg.ITL)
	case cfg.PrefillPerToken < 0:
		return fmt.Errorf("mockserver: Config.PrefillPerToken %v is negative", cfg.PrefillPerToken)
	case cfg.PrefillPerImage < 0:
		return fmt.Errorf("mockserver: Config.PrefillPerImage %v is negative", cfg.PrefillPerImage)
	case cfg.PrefillPerAudioSecond < 0:
		return fmt.Errorf("mockserver: Config.PrefillPerAudioSecond %v is negative", cfg.PrefillPerAudioSecond)
	case cfg.ErrorRate < 0 || cfg.ErrorRate > 1 || cfg.ErrorRate != cfg.ErrorRate:
		return fmt.Errorf("mockserver: Config.ErrorRate %v is outside [0, 1]", cfg.ErrorRate)
	case cfg.ReasoningTokens < 0:
		return fmt.Errorf("mockserver: Config.ReasoningTokens %d is negative", cfg.ReasoningTokens)
	case cfg.MaxRunning < 0:
		return fmt.Errorf("mockserver: Config.MaxRunning %d is negative", cfg.MaxRunning)
	case cfg.DefaultOutputTokens < 0:
		return fmt.Errorf("mockserver: Config.DefaultOutputTokens %d is negative", cfg.DefaultOutputTokens)
	case cfg.TokensPerChunk < 0:
		return fmt.Errorf("mockserver: Config.TokensPerChunk %d is negative", cfg.TokensPerChunk)
	case cfg.StreamErrorRate < 0 || cfg.StreamErrorRate > 1 || cfg.StreamErrorRate != cfg.StreamErrorRate:
		return fmt.Errorf("mockserver: Config.StreamErrorRate %v is outside [0, 1]", cfg.StreamErrorRate)
	case cfg.StreamErrorAfter < 0:
		return fmt.Errorf("mockserver: Config.StreamErrorAfter %d is negative", cfg.StreamErrorAfter)
	case cfg.ToolCallRate < 0 || cfg.ToolCallRate > 1 || cfg.ToolCallRate != cfg.ToolCallRate:
		return fmt.Errorf("mockserver: Config.ToolCallRate %v is outside [0, 1]", cfg.ToolCallRate)
	case cfg.BadToolArgsRate < 0 || cfg.BadToolArgsRate > 1 || cfg.BadToolArgsRate != cfg.BadToolArgsRate:
		return fmt.Errorf("mockserver: Config.BadToolArgsRate %v is outside [0, 1]", cfg.BadToolArgsRate)
	case cfg.MaxModelLen < 0:
		return fmt.Errorf("mockserver: Config.MaxModelLen %d is negative", cfg.MaxModelLen)
	}
	if e := cfg.OTLPEndpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("mockserver: Config.OTLPEndpoint %q is not an http(s) URL", e)
		}
	}
	switch cfg.Timings {
	case TimingsNone, "none", TimingsLlamaCpp, TimingsMock:
	default:
		return fmt.Errorf("mockserver: Config.Timings %q is not one of %v", cfg.Timings, TimingsFormats)
	}
	return validShape(cfg.StreamErrorShape)
}
