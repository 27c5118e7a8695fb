package metrics

// Tag names a metric as AIPerf's exports do.
type Tag string

// Per-request metric tags (design §3).
const (
	TTFT           Tag = "time_to_first_token"
	TTFO           Tag = "time_to_first_output_token"
	TTST           Tag = "time_to_second_token"
	RequestLatency Tag = "request_latency"
	// EffectiveLatency is measured from the intended send time: when the
	// rate outruns the client or a slot, it shows what coordinated omission
	// would hide.
	EffectiveLatency Tag = "effective_request_latency"
	ITL              Tag = "inter_token_latency"
	ICL              Tag = "inter_chunk_latency"
	PerUser          Tag = "output_token_throughput_per_user"
	ISL              Tag = "input_sequence_length"
	OSL              Tag = "output_sequence_length"
	ReasoningTokens  Tag = "reasoning_token_count"
	// OSLMismatch is (OSL − requested OSL) / requested OSL in percent, as
	// AIPerf's osl_mismatch_diff_pct: positive when the server ran past
	// max_tokens, negative when it stopped early.
	OSLMismatch Tag = "osl_mismatch_diff_pct"
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
)

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
	RequestCount         Tag = "request_count"
	ErrorRequestCount    Tag = "error_request_count"
	BenchmarkDuration    Tag = "benchmark_duration"
	TotalOutputTokens    Tag = "total_output_tokens"
	TotalInputTokens     Tag = "total_input_tokens"
	// OSLMismatchCount counts requests whose OSL missed the requested one
	// by more than min(5%, 50 tokens), as AIPerf's osl_mismatch_count.
	OSLMismatchCount Tag = "osl_mismatch_count"
)

// Def describes a metric for exports and the console.
type Def struct {
	Tag  Tag
	Name string // display name without the unit
	Unit string
	// HigherIsBetter marks metrics whose SLO is a floor, not a ceiling.
	HigherIsBetter bool
}

// Label is the display name with its unit, as the CSV and console show it.
func (d Def) Label() string { return d.Name + " (" + d.Unit + ")" }

// RequestDefs lists the per-request metrics in export order.
var RequestDefs = []Def{
	{TTFT, "Time to First Token", "ms", false},
	{TTFO, "Time to First Output Token", "ms", false},
	{TTST, "Time to Second Token", "ms", false},
	{RequestLatency, "Request Latency", "ms", false},
	{EffectiveLatency, "Effective Request Latency", "ms", false},
	{ITL, "Inter Token Latency", "ms", false},
	{ICL, "Inter Chunk Latency", "ms", false},
	{PerUser, "Output Token Throughput Per User", "tokens/sec/user", true},
	{ISL, "Input Sequence Length", "tokens", false},
	{OSL, "Output Sequence Length", "tokens", false},
	{ReasoningTokens, "Reasoning Token Count", "tokens", false},
	{OSLMismatch, "OSL Mismatch Diff", "%", false},
}

// HTTPDefs lists the transport breakdown in export order. As in AIPerf,
// connecting includes the TLS handshake (k6's tls_handshaking is also
// given apart), duration is sending + waiting + receiving and the
// connection overhead blocked + dns_lookup + connecting.
var HTTPDefs = []Def{
	{HTTPBlocked, "HTTP Blocked", "ms", false},
	{HTTPDNS, "HTTP DNS Lookup", "ms", false},
	{HTTPConnecting, "HTTP Connecting", "ms", false},
	{HTTPTLS, "HTTP TLS Handshaking", "ms", false},
	{HTTPSending, "HTTP Sending", "ms", false},
	{HTTPWaiting, "HTTP Waiting", "ms", false},
	{HTTPReceiving, "HTTP Receiving", "ms", false},
	{HTTPDuration, "HTTP Duration", "ms", false},
	{HTTPConnectionOverhead, "HTTP Connection Overhead", "ms", false},
}

// httpTags is len(HTTPDefs), for fixed-size arrays of their values.
const httpTags = 9

// ClientReadDelayDef describes client_read_delay.
var ClientReadDelayDef = Def{ClientReadDelay, "Client Read Delay", "ms", false}

// RunDefs lists the run-level metrics in export order.
var RunDefs = []Def{
	{RequestThroughput, "Request Throughput", "requests/sec", true},
	{OutputTokenThroughput, "Output Token Throughput", "tokens/sec", true},
	{TotalTokenThroughput, "Total Token Throughput", "tokens/sec", true},
	{InputThroughput, "Input Throughput", "inputs/sec", true},
	{InputTokenThroughput, "Input Token Throughput", "tokens/sec", true},
	{Goodput, "Goodput", "requests/sec", true},
	{GoodRequestCount, "Good Request Count", "requests", true},
	{RequestCount, "Request Count", "requests", true},
	{ErrorRequestCount, "Error Request Count", "requests", false},
	{BenchmarkDuration, "Benchmark Duration", "sec", false},
	{TotalOutputTokens, "Total Output Tokens", "tokens", true},
	{TotalInputTokens, "Total Input Tokens", "tokens", true},
	{OSLMismatchCount, "OSL Mismatch Count", "requests", false},
}

// defOf finds a per-request metric's definition.
func defOf(t Tag) (Def, bool) {
	for _, d := range RequestDefs {
		if d.Tag == t {
			return d, true
		}
	}
	return Def{}, false
}
