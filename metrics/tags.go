package metrics

// Tag names a metric as AIPerf's exports do.
type Tag string

// Per-request metric tags (design §3), AIPerf's names.
const (
	TTFT Tag = "time_to_first_token"
	TTFO Tag = "time_to_first_output_token"
	// TTST is the gap between the first and the second text event (AIPerf's
	// time_to_second_token), not a time from the send.
	TTST           Tag = "time_to_second_token"
	RequestLatency Tag = "request_latency"
	// EffectiveLatency is measured from the intended send time: when the
	// rate outruns the client or a slot, it shows what coordinated omission
	// would hide.
	EffectiveLatency Tag = "effective_request_latency"
	// EffectiveTTFT and EffectiveTTFO are the first token's and the first
	// output token's times from the intended send time (coordinated
	// omission: omission.go).
	EffectiveTTFT Tag = "effective_time_to_first_token"
	EffectiveTTFO Tag = "effective_time_to_first_output_token"
	// DecodeDuration is request_latency − time_to_first_token: the first to
	// the last text event, not divided by the token count.
	DecodeDuration Tag = "decode_duration"
	ITL            Tag = "inter_token_latency"
	ICL            Tag = "inter_chunk_latency"
	PerUser        Tag = "output_token_throughput_per_user"
	// PrefillPerUser is input_sequence_length / TTFT in seconds.
	PrefillPerUser Tag = "prefill_throughput_per_user"
	// E2EThroughput is output_sequence_length / request_latency in seconds:
	// per request, TTFT and queueing included (non-streamed too).
	E2EThroughput Tag = "e2e_output_token_throughput"
	ISL           Tag = "input_sequence_length"
	// OutputTokens counts the answer's non-reasoning tokens (AIPerf's
	// output_token_count); OSL adds the reasoning tokens.
	OutputTokens    Tag = "output_token_count"
	OSL             Tag = "output_sequence_length"
	ReasoningTokens Tag = "reasoning_token_count"
	// OSLMismatch is (OSL − requested OSL) / requested OSL in percent, as
	// AIPerf's osl_mismatch_diff_pct: positive when the server ran past
	// max_tokens, negative when it stopped early.
	OSLMismatch Tag = "osl_mismatch_diff_pct"
	// ErrorISL is a failed request's input length: the one value AIPerf
	// keeps of a failure.
	ErrorISL Tag = "error_isl"
	// TokenizerOSL is the tokenizer's count of the output, kept beside
	// the server's usage_completion_tokens whichever OSL used.
	TokenizerOSL Tag = "tokenizer_output_sequence_length"
)

// The media a request carried (images and audio as chat content parts),
// per request that carried any; the prompt's text alone is its ISL.
const (
	// ImageCount is the images in the request's messages, its history's
	// included.
	ImageCount Tag = "image_count"
	// AudioDuration is the seconds of audio in them.
	AudioDuration Tag = "audio_duration"
	// MediaBytes is the size of the media parts in the request body,
	// base64 included: what a server reads before it can decode them.
	MediaBytes Tag = "media_bytes"
)

// The server's own token accounting (its usage object), one value per
// request that reported the field, as AIPerf's usage_* metrics.
const (
	UsagePrompt     Tag = "usage_prompt_tokens"
	UsageCompletion Tag = "usage_completion_tokens"
	UsageTotal      Tag = "usage_total_tokens"
	UsageReasoning  Tag = "usage_reasoning_tokens"
	// UsageCacheRead counts prompt tokens the server served from its prompt
	// cache (OpenAI's prompt_tokens_details.cached_tokens, Anthropic's
	// cache_read_input_tokens).
	UsageCacheRead Tag = "usage_prompt_cache_read_tokens"
	// UsageCacheWrite counts prompt tokens written to the cache
	// (Anthropic's cache_creation_input_tokens).
	UsageCacheWrite Tag = "usage_prompt_cache_write_tokens"
)

// Transport metric tags (AIPerf's and k6's http_req_* breakdown, from
// net/http/httptrace), one value per request.
const (
	HTTPBlocked            Tag = "http_req_blocked"
	HTTPDNS                Tag = "http_req_dns_lookup"
	HTTPConnecting         Tag = "http_req_connecting"
	HTTPTLS                Tag = "http_req_tls_handshaking"
	HTTPSending            Tag = "http_req_sending"
	HTTPWaiting            Tag = "http_req_waiting"
	HTTPReceiving          Tag = "http_req_receiving"
	HTTPDuration           Tag = "http_req_duration"
	HTTPConnectionOverhead Tag = "http_req_connection_overhead"
	// HTTPTotal is blocked + dns_lookup + connecting + sending + waiting +
	// receiving: the phases' sum, as AIPerf's http_req_total.
	HTTPTotal Tag = "http_req_total"
	// HTTPDataSent and HTTPDataReceived are the body bytes written and
	// read, in KB of 1024 bytes (AIPerf's display unit).
	HTTPDataSent     Tag = "http_req_data_sent"
	HTTPDataReceived Tag = "http_req_data_received"
	// HTTPChunksSent and HTTPChunksReceived count the writes and reads of
	// the bodies.
	HTTPChunksSent     Tag = "http_req_chunks_sent"
	HTTPChunksReceived Tag = "http_req_chunks_received"
	// HTTPConnectionReused is 1 for a connection from the idle pool, 0 for
	// a new one.
	HTTPConnectionReused Tag = "http_req_connection_reused"
)

// surge's own views of the request's time, under names of their own
// (docs/aiperf-compat.md): from the request's last byte written, where
// AIPerf's time_to_first_token and request_latency start when the request
// is handed to the transport (the wait for a connection, the dial and the
// upload included).
const (
	TTFTFromSend    Tag = "time_to_first_token_from_send"
	LatencyFromSend Tag = "request_latency_from_send"
)

// AdjustedOf names the error-adjusted view of a latency metric (AIPerf's
// adj_*, AIPerf#688): its percentiles over the successful requests and one
// unbounded value per failed one.
func AdjustedOf(t Tag) Tag { return "adj_" + t }

// AdjustedDefs are the error-adjusted views of the metrics AIPerf flags
// PERCENTILE_INCLUDES_FAILED_REQUESTS, present when requests failed: AIPerf's
// headers, the console's rows beside their metric's.
var AdjustedDefs = []Def{
	def(AdjustedOf(TTFT), "Time to First Token (error-adjusted)", "ms", false),
	def(AdjustedOf(RequestLatency), "Request Latency (error-adjusted)", "ms", false),
	def(AdjustedOf(ITL), "Inter Token Latency (error-adjusted)", "ms", false),
}

// ClientReadDelay is, per streamed event, how much later than the kernel's
// receive time the client read it: the client's own delay.
const ClientReadDelay Tag = "client_read_delay"

// Run-level metric tags.
const (
	RequestThroughput     Tag = "request_throughput"
	OutputTokenThroughput Tag = "output_token_throughput"
	TotalTokenThroughput  Tag = "total_token_throughput"
	// InputThroughput and InputTokenThroughput are the throughput of the
	// types that generate no tokens (embeddings, rankings), which have no
	// output token metrics: inputs (texts embedded, passages ranked) and
	// input tokens per second.
	InputThroughput      Tag = "input_throughput"
	InputTokenThroughput Tag = "input_token_throughput"
	Goodput              Tag = "goodput"
	GoodRequestCount     Tag = "good_request_count"
	// GoodRequestFraction is good requests / (successful + failed ones).
	GoodRequestFraction Tag = "good_request_fraction"
	RequestCount        Tag = "request_count"
	ErrorRequestCount   Tag = "error_request_count"
	// CancelledRequestCount counts the failed requests the client cut
	// off (a cancellation on purpose, the grace period's end): AIPerf's
	// was_cancelled records. Present when there are any.
	CancelledRequestCount Tag = "cancelled_request_count"
	// RequestErrorRate is failed / (successful + failed) requests, in %.
	RequestErrorRate  Tag = "request_error_rate"
	BenchmarkDuration Tag = "benchmark_duration"
	// MinRequestTimestamp and MaxResponseTimestamp bound the profile phase
	// in wall-clock nanoseconds since the epoch (the first send, the last
	// response): benchmark_duration is their difference.
	MinRequestTimestamp  Tag = "min_request_timestamp"
	MaxResponseTimestamp Tag = "max_response_timestamp"
	// TotalOutputTokens sums output_token_count (reasoning left out, as
	// AIPerf); TotalOSL sums output_sequence_length (reasoning included).
	TotalOutputTokens    Tag = "total_output_tokens"
	TotalReasoningTokens Tag = "total_reasoning_tokens"
	TotalISL             Tag = "total_isl"
	TotalOSL             Tag = "total_osl"
	TotalErrorISL        Tag = "total_error_isl"
	// PromptTruncatedCount counts requests whose prompt the server cut
	// (Values.Truncated), among those whose usage gave a prompt count.
	PromptTruncatedCount Tag = "prompt_truncated_count"
	// OSLMismatchCount counts requests whose OSL missed the requested one
	// by more than min(5%, 50 tokens), as AIPerf's osl_mismatch_count.
	OSLMismatchCount Tag = "osl_mismatch_count"
	// Sums of the usage_* metrics over the requests, and the share of
	// prompt tokens the server's cache served.
	TotalUsagePrompt     Tag = "total_usage_prompt_tokens"
	TotalUsageCompletion Tag = "total_usage_completion_tokens"
	TotalUsageTotal      Tag = "total_usage_total_tokens"
	TotalUsageReasoning  Tag = "total_usage_reasoning_tokens"
	TotalUsageCacheRead  Tag = "total_usage_prompt_cache_read_tokens"
	TotalUsageCacheWrite Tag = "total_usage_prompt_cache_write_tokens"
	UsageCacheReadPct    Tag = "overall_usage_prompt_cache_read_pct"
	// CostPerMOutputTokens and CostPerMTotalTokens are what a million
	// output (or input and output) tokens cost at the run's throughput,
	// given the server's price per hour (WithCostPerHour); absent without
	// a price.
	CostPerMOutputTokens Tag = "cost_per_1m_output_tokens"
	CostPerMTotalTokens  Tag = "cost_per_1m_total_tokens"
)

// Def describes a metric for exports and the console.
type Def struct {
	Tag Tag
	// Name is AIPerf's header for the metric (its CSV and console name),
	// without the unit.
	Name string
	Unit string
	// HigherIsBetter marks metrics whose SLO is a floor, not a ceiling.
	HigherIsBetter bool
	// NoConsole keeps the metric out of the console table (AIPerf's
	// NO_CONSOLE): the files have it.
	NoConsole bool
}

// Label is the display name with its unit, as the CSV and console show it.
// Counts of requests carry no unit (AIPerf's CSV writes "Request Count").
func (d Def) Label() string {
	if d.Unit == "" || d.Unit == "requests" || d.Unit == "count" {
		return d.Name
	}
	return d.Name + " (" + d.Unit + ")"
}

// def builds a Def shown on the console; hidden one kept off it.
func def(t Tag, name, unit string, higher bool) Def { return Def{t, name, unit, higher, false} }
func hidden(t Tag, name, unit string, higher bool) Def {
	return Def{t, name, unit, higher, true}
}

// RequestDefs lists the per-request metrics in export order.
var RequestDefs = []Def{
	def(TTFT, "Time to First Token", "ms", false),
	def(TTFTFromSend, "Time to First Token From Send", "ms", false),
	def(TTFO, "Time to First Output Token", "ms", false),
	def(TTST, "Time to Second Token", "ms", false),
	def(RequestLatency, "Request Latency", "ms", false),
	def(LatencyFromSend, "Request Latency From Send", "ms", false),
	def(EffectiveLatency, "Effective Request Latency", "ms", false),
	def(EffectiveTTFT, "Effective Time to First Token", "ms", false),
	def(EffectiveTTFO, "Effective Time to First Output Token", "ms", false),
	def(DecodeDuration, "Decode Duration", "ms", false),
	def(ITL, "Inter Token Latency", "ms", false),
	def(ICL, "Inter Chunk Latency", "ms", false),
	def(PerUser, "Output Token Throughput Per User", "tokens/sec/user", true),
	hidden(PrefillPerUser, "Prefill Throughput Per User", "tokens/sec/user", true),
	def(E2EThroughput, "E2E Output Token Throughput", "tokens/sec/user", true),
	def(ISL, "Input Sequence Length", "tokens", false),
	hidden(OutputTokens, "Output Token Count", "tokens", false),
	def(OSL, "Output Sequence Length", "tokens", false),
	def(ReasoningTokens, "Reasoning Token Count", "tokens", false),
	def(OSLMismatch, "OSL Mismatch Diff", "%", false),
	def(ImageCount, "Image Count", "images", false),
	def(AudioDuration, "Audio Duration", "sec", false),
	def(MediaBytes, "Media Bytes", "bytes", false),
	hidden(UsagePrompt, "Usage Prompt Tokens", "tokens", false),
	hidden(UsageCompletion, "Usage Completion Tokens", "tokens", false),
	hidden(UsageTotal, "Usage Total Tokens", "tokens", false),
	hidden(UsageReasoning, "Usage Reasoning Tokens", "tokens", false),
	hidden(UsageCacheRead, "Usage Prompt Cache Read Tokens", "tokens", true),
	hidden(UsageCacheWrite, "Usage Prompt Cache Write Tokens", "tokens", false),
	hidden(ErrorISL, "Error Input Sequence Length", "tokens", false),
	hidden(TokenizerOSL, "Tokenizer Output Sequence Length", "tokens", false),
}

// HTTPDefs lists the transport breakdown in export order. As in AIPerf,
// connecting includes the TLS handshake (k6's tls_handshaking is also
// given apart), duration is sending + waiting + receiving and the
// connection overhead blocked + dns_lookup + connecting.
var HTTPDefs = []Def{
	def(HTTPBlocked, "HTTP Blocked", "ms", false),
	def(HTTPDNS, "HTTP DNS Lookup", "ms", false),
	def(HTTPConnecting, "HTTP Connecting", "ms", false),
	def(HTTPTLS, "HTTP TLS Handshaking", "ms", false),
	def(HTTPSending, "HTTP Sending", "ms", false),
	def(HTTPWaiting, "HTTP Waiting", "ms", false),
	def(HTTPReceiving, "HTTP Receiving", "ms", false),
	def(HTTPDuration, "HTTP Duration", "ms", false),
	def(HTTPConnectionOverhead, "HTTP Connection Overhead", "ms", false),
	def(HTTPTotal, "HTTP Total Time", "ms", false),
	hidden(HTTPDataSent, "HTTP Data Sent", "KB", false),
	hidden(HTTPDataReceived, "HTTP Data Received", "KB", false),
	hidden(HTTPChunksSent, "HTTP Chunks Sent", "count", false),
	hidden(HTTPChunksReceived, "HTTP Chunks Received", "count", false),
	hidden(HTTPConnectionReused, "HTTP Connection Reused", "ratio", true),
}

// httpTags is len(HTTPDefs), for fixed-size arrays of their values.
const httpTags = 15

// ClientReadDelayDef describes client_read_delay.
var ClientReadDelayDef = def(ClientReadDelay, "Client Read Delay", "ms", false)

// RunDefs lists the run-level metrics in export order. The names are
// AIPerf's headers, its odd ones ("GoodRequestCount") included, so a CSV
// row reads as AIPerf's does.
var RunDefs = []Def{
	def(RequestThroughput, "Request Throughput", "requests/sec", true),
	def(OutputTokenThroughput, "Output Token Throughput", "tokens/sec", true),
	def(TotalTokenThroughput, "Total Token Throughput", "tokens/sec", true),
	def(InputThroughput, "Input Throughput", "inputs/sec", true),
	def(InputTokenThroughput, "Input Token Throughput", "tokens/sec", true),
	def(Goodput, "Goodput", "requests/sec", true),
	def(GoodRequestCount, "GoodRequestCount", "requests", true),
	hidden(GoodRequestFraction, "GoodRequestFraction", "ratio", true),
	def(RequestCount, "Request Count", "requests", true),
	def(ErrorRequestCount, "Error Request Count", "requests", false),
	def(CancelledRequestCount, "Cancelled Request Count", "requests", false),
	def(RequestErrorRate, "Request Error Rate", "%", false),
	def(BenchmarkDuration, "Benchmark Duration", "sec", false),
	hidden(MinRequestTimestamp, "Minimum Request Timestamp", "ns", false),
	hidden(MaxResponseTimestamp, "Maximum Response Timestamp", "ns", false),
	def(TotalOutputTokens, "Total Output Tokens", "tokens", true),
	def(TotalReasoningTokens, "Total Reasoning Tokens", "tokens", true),
	def(TotalISL, "Total Input Sequence Length", "tokens", true),
	def(TotalOSL, "Total Output Sequence Length", "tokens", true),
	hidden(TotalErrorISL, "Total Error Input Sequence Length", "tokens", false),
	def(OSLMismatchCount, "OSL Mismatch Count", "requests", false),
	def(PromptTruncatedCount, "Prompt Truncated Count", "requests", false),
	hidden(TotalUsagePrompt, "Total Usage Prompt Tokens", "tokens", true),
	hidden(TotalUsageCompletion, "Total Usage Completion Tokens", "tokens", true),
	hidden(TotalUsageTotal, "Total Usage Total Tokens", "tokens", true),
	hidden(TotalUsageReasoning, "Total Usage Reasoning Tokens", "tokens", true),
	hidden(TotalUsageCacheRead, "Total Usage Prompt Cache Read Tokens", "tokens", true),
	hidden(TotalUsageCacheWrite, "Total Usage Prompt Cache Write Tokens", "tokens", false),
	hidden(UsageCacheReadPct, "Overall Usage Prompt Cache Read %", "%", true),
	def(CostPerMOutputTokens, "Output Token Cost", CostUnit, false),
	def(CostPerMTotalTokens, "Total Token Cost", CostUnit, false),
}

// CostUnit is the unit of the cost metrics: US dollars per million tokens.
const CostUnit = "USD/1M tokens"

// defOf finds a per-request metric's definition.
func defOf(t Tag) (Def, bool) {
	for _, d := range RequestDefs {
		if d.Tag == t {
			return d, true
		}
	}
	return Def{}, false
}
