// Package metrics turns request records into AIPerf's metrics: per-shard
// t-digests owned by one goroutine each, live snapshots for the dashboard and
// a final summary for the exports.
package metrics

import "encoding/json"

// Phase tells warmup records from profiled ones.
type Phase uint8

// The benchmark phases of a record.
const (
	Profile Phase = iota
	Warmup
)

// String returns the phase as exports name it.
func (p Phase) String() string {
	if p == Warmup {
		return "warmup"
	}
	return "profile"
}

// Error describes why a request failed. Code is the HTTP status (0 when the
// request never got one).
type Error struct {
	Code    int    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// MarshalJSON writes the error as AIPerf's ErrorDetails: a code of 0 (no
// HTTP status) is null.
func (e Error) MarshalJSON() ([]byte, error) {
	var code *int
	if e.Code != 0 {
		code = &e.Code
	}
	return json.Marshal(struct {
		Code    *int   `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	}{code, e.Type, e.Message})
}

// Usage is the token accounting a server reported.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	ReasoningTokens  int
	TotalTokens      int
	// CacheReadTokens are prompt tokens the server's prompt cache served
	// (OpenAI's prompt_tokens_details.cached_tokens, the Responses API's
	// input_tokens_details.cached_tokens, Anthropic's
	// cache_read_input_tokens, DeepSeek's prompt_cache_hit_tokens);
	// CacheWriteTokens those written to it (Anthropic's
	// cache_creation_input_tokens).
	CacheReadTokens  int
	CacheWriteTokens int
	// Fields says which of the counts the server sent: a count it left out
	// is not a zero.
	Fields UsageFields
	// Present is set when the response carried a usage object at all.
	Present bool
}

// UsageFields is a set of the counts a usage object carried.
type UsageFields uint8

// The counts of a usage object.
const (
	UsagePromptField UsageFields = 1 << iota
	UsageCompletionField
	UsageTotalField
	UsageReasoningField
	UsageCacheReadField
	UsageCacheWriteField
)

// Has reports whether every count of f was sent. A usage object whose
// Fields were not filled in is taken to carry the prompt and completion
// counts, the two every server sends.
func (u *Usage) Has(f UsageFields) bool {
	fields := u.Fields
	if fields == 0 && u.Present {
		fields = UsagePromptField | UsageCompletionField
	}
	return fields&f == f
}

// Record is one finished request. All *Ns fields are monotonic nanoseconds
// since the run's start; 0 means "did not happen" (the run starts before any
// request, so 0 is never a real event time).
type Record struct {
	// Index is the request's position in issue order (0-based).
	Index     int64
	RequestID string
	// Session numbers the conversation run the request belongs to, in the
	// order sessions started (0-based): AIPerf's session_num, the request's
	// own number for single-turn data.
	Session int64
	// CorrelationID is shared by every turn of one session (AIPerf's
	// x_correlation_id).
	CorrelationID  string
	ConversationID string
	TurnIndex      int
	Phase          Phase
	// Stage is the sweep/ramp stage the request was issued in (0 without).
	Stage int

	IntendedNs int64 // when the schedule wanted it sent
	// Scheduled is set when a schedule (a rate, a trace, a user's pacing)
	// chose IntendedNs, rather than a slot freeing in a closed loop.
	Scheduled bool
	// IssuedNs is when the client handed the request to its transport
	// (scheduler lag is measured to it); 0 when it equals SentNs.
	IssuedNs int64
	// SentNs is when the request's last byte was written (httptrace's
	// WroteRequest), after any wait for a connection: latencies start here.
	SentNs int64
	// AckNs is when a streamed response's headers arrived (the server
	// accepted the request); 0 when not streamed or never answered.
	AckNs int64
	EndNs int64 // last byte of the response
	// Cancelled is set when the client cut the request off: the run's end
	// (the grace period ran out) or a cancellation on purpose
	// (--request-cancellation-rate). CancelledNs is when (AIPerf's
	// cancellation_time_ns).
	Cancelled   bool
	CancelledNs int64
	// CancelPlanned is set when the request was chosen to be cancelled
	// CancelAfterNs after it was sent; it is Cancelled only if it had not
	// ended by then.
	CancelPlanned bool
	CancelAfterNs int64

	// HTTP is the request's transport breakdown (AIPerf's http_req_*).
	HTTP HTTPTiming
	// KernelStamps is set when TokenNs are the kernel's receive times of
	// the segments that completed each event (--timestamps kernel), not the
	// times the client read them.
	KernelStamps bool
	// ReadDelayNs holds, per TokenNs entry when the connection had kernel
	// stamps (in either --timestamps mode), how much later than the
	// kernel's receive time the client read the event: the client's own
	// delay, which kernel stamps keep out of the metrics and read stamps
	// add to them. Nil when unknown.
	ReadDelayNs []int32
	// FirstTokenShared is set when the first token's event came in the
	// same read as the next one's. A read carries the arrival time of its
	// last segment, so the first token's time is then an upper bound: late
	// by up to one token gap when the server sent the two apart (the client
	// was busy when the first arrived).
	FirstTokenShared bool

	// Streamed is set for SSE responses; a non-streamed response has one
	// token event at its end and no TTFT/ITL of its own.
	Streamed bool
	// NoOutput marks endpoint types that generate no tokens (embeddings,
	// rankings): their records have no output length, only latency.
	NoOutput bool
	// Inputs is how many inputs a NoOutput request carried (texts to
	// embed, passages to rank), for input_throughput.
	Inputs int
	// TokenNs holds the arrival time of every response event that carried
	// text (content or reasoning), in order. FirstContentNs is the first
	// that carried non-reasoning content (0: none). ReasoningEvents counts
	// the events that carried reasoning text.
	TokenNs         []int64
	FirstContentNs  int64
	ReasoningEvents int
	// EventEnds holds, per TokenNs entry, how much of Text and
	// ReasoningText the stream had carried once that event was read
	// (EventEnd packs the two), so the shards can count the tokens each
	// event carried (nil when unknown).
	EventEnds []int64
	// UsageChunks counts the text events whose chunk carried usage with a
	// completion count (a server reporting usage on every chunk, as vLLM's
	// continuous usage stats); MultiTokenChunks those among them whose
	// running completion count grew by more than one: chunks that carried
	// several tokens.
	UsageChunks, MultiTokenChunks int
	// FirstChunkTokens is how many tokens the first text chunk carried by
	// its per-chunk usage (0: unknown).
	FirstChunkTokens int

	// Text and ReasoningText are the generated output, kept for tokenizing.
	Text          string
	ReasoningText string
	// RequestedOSL is the output cap the request asked for (max_tokens or
	// max_completion_tokens; 0: none), for the osl_mismatch metrics.
	RequestedOSL int
	// InputTokens is the prompt length known from the dataset (0 when not).
	InputTokens int
	// InputText is the prompt text, for counting ISL with a tokenizer when
	// the dataset did not know it.
	InputText string
	// Chat, when set (--apply-chat-template), is the chat request's
	// messages: a ChatCounter counts ISL on them as the model's chat
	// template renders them, in place of InputTokens and InputText.
	Chat []ChatMessage
	// chatTokens caches Chat's count (0: not counted yet, -1: failed).
	chatTokens int
	// Images and AudioSeconds count the images and the seconds of audio
	// the request carried (its history's included: they are sent again);
	// MediaBytes is their size in the body, base64 included. ISL counts
	// the text alone.
	Images       int
	AudioSeconds float64
	MediaBytes   int
	Usage        Usage
	// Server is the server's own account of the request's time (its
	// queue, prefill and decode), as far as it gave one: read once from
	// the response (a last chunk, its headers), or joined from its span
	// in the shard. The time breakdown is made of it and the client's
	// stamps (BreakdownOf).
	Server ServerTiming

	// SlotWaitNs is how long the request waited for a concurrency slot after
	// its intended time (request rate combined with a concurrency cap).
	SlotWaitNs int64
	// PrefillWaitNs is how long it then waited for a prefill slot
	// (--prefill-concurrency), before it was sent.
	PrefillWaitNs int64
	// TurnKind is what the request sends in its session: its first
	// request, a user's next turn, or tool results.
	TurnKind TurnKind
	// ToolRound numbers the requests the client's tool loop sent after a
	// dataset turn (0: the turn itself); ToolWaitNs is the time the loop
	// spent producing the tool results this request carries (its
	// synthetic tools' delay).
	ToolRound  int
	ToolWaitNs int64
	// ToolCalls are the function calls the response made, in order;
	// ToolCallErrors counts those whose arguments are not JSON. Their
	// names and arguments are in Text too (output the usage counts);
	// ReplyText, set when there were calls, is the reply without them.
	ToolCalls      []ToolCall
	ToolCallErrors int
	ReplyText      string
	// UnknownToolResults counts the tool results the request sent that
	// answer no earlier tool call of its messages.
	UnknownToolResults int
	// ContextTokens is the client's count of the whole context the request
	// carried (its session's earlier turns and replies, then its own
	// input): 0 when a part of it had no known length.
	ContextTokens int
	// UsageOverrun is the generator's warning that the response's usage
	// said more completion tokens than its cap allowed: the collector gives
	// it (once per run) only if it believes the usage.
	UsageOverrun string
	// RetryAfter is the server's Retry-After header on a 429/503.
	RetryAfter string
	// ConnectionRetries counts sends repeated on a fresh connection because
	// a pooled keep-alive connection was closed before the server answered
	// (0 or 1): a stale connection, not a server failure.
	ConnectionRetries int
	// RetryDuplicate is set when the retried send had been written and the
	// server closed the connection without resetting it on the request's
	// bytes: it may have read the request, and then saw it twice. A send
	// never written, or one the server's end reset unread (llama.cpp's
	// close after every streamed answer), is not.
	RetryDuplicate bool
	Err            *Error
	// Raw is the request and response as sent and read (--export-level
	// raw); nil when not captured.
	Raw *RawExchange
}

// RawExchange is one request's body and its response as read: every SSE
// event, or the whole body, with when it arrived.
type RawExchange struct {
	// Body is the request body sent.
	Body []byte
	// Status and ContentType are the response's (0, "": none arrived).
	Status      int
	ContentType string
	// Events are the response's SSE events in order; a response that was
	// not a stream is one event without a type, its whole body.
	Events []RawEvent
	// Stream is set when the response was an SSE stream.
	Stream bool
}

// RawEvent is one SSE event (or a whole body) and when it arrived (run
// clock).
type RawEvent struct {
	AtNs int64
	Type string
	Data []byte
	// ErrorField is set for an event that came as an `error:` field line
	// (llama.cpp's in-stream error), which the raw export writes back so.
	ErrorField bool
}

// HTTPTiming is one request's transport phases in nanoseconds, measured
// with net/http/httptrace (0: the phase did not happen, e.g. no DNS for an
// IP literal, no dial on a reused connection).
type HTTPTiming struct {
	// Blocked is the wait for a connection, the dial itself excluded.
	Blocked int64
	// DNS, Connecting and TLS are the lookup, the TCP connect and the TLS
	// handshake of a new connection.
	DNS, Connecting, TLS int64
	// Sending is from having the connection to the request's last byte
	// written; Waiting from then to the first response body byte; Receiving
	// from the first body byte to the last.
	Sending, Waiting, Receiving int64
	// DataSent and DataReceived count the request's and the response's
	// body bytes; ChunksSent and ChunksReceived the writes and reads that
	// carried them (AIPerf's http_req_data_* and http_req_chunks_*, which
	// count body chunks too).
	DataSent, DataReceived     int64
	ChunksSent, ChunksReceived int64
	// Reused is set when the connection came from the idle pool.
	Reused bool
	// Traced is set when the breakdown was measured at all.
	Traced bool
}

// Issued returns when the request was handed to the transport.
func (r *Record) Issued() int64 {
	if r.IssuedNs > 0 {
		return r.IssuedNs
	}
	return r.SentNs
}

// LagNs is the scheduler's lag on the request: its send after its intended
// time, less the waits a cap imposed (a concurrency slot under a request
// rate, a prefill slot), which are the load's shape, not the client
// falling behind. Only for a request with an intended time.
func (r *Record) LagNs() int64 {
	return max(r.Issued()-r.IntendedNs-r.SlotWaitNs-r.PrefillWaitNs, 0)
}

// Failed reports whether the request ended in an error.
func (r *Record) Failed() bool { return r.Err != nil }

// TurnKind is what a request sends in its session.
type TurnKind uint8

// The kinds of turn.
const (
	// TurnFirst is a session's first request.
	TurnFirst TurnKind = iota
	// TurnUser is a later turn whose new message is a user's.
	TurnUser
	// TurnToolResult is a turn whose new messages are tool results.
	TurnToolResult
)

// String names the kind as exports do.
func (k TurnKind) String() string {
	switch k {
	case TurnUser:
		return "user"
	case TurnToolResult:
		return "tool_result"
	}
	return "first"
}

// ToolCall is one function call a response made.
type ToolCall struct {
	ID, Name, Arguments string
}
