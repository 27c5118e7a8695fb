package metrics

import "math"

// TokenCounter counts tokens in text; *tokenizer.Tokenizer satisfies it.
// It must be safe for concurrent use.
type TokenCounter interface {
	Count(text string) int
}

// Token count sources, as the summary names them.
const (
	SourceTokenizer = "tokenizer"
	SourceUsage     = "usage"
	SourceEvents    = "sse_events"
)

// Values are one request's metrics in display units. NaN marks a metric the
// request does not have (a non-streamed response has no TTFT, a one-token
// answer no ITL).
type Values struct {
	// TTFT, TTFO and Latency start at the request's start as AIPerf stamps
	// it (Record.Issued: the wait for a connection, the dial and the upload
	// included); TTFTSent and LatencySent at its last byte written.
	TTFT, TTFO, TTST, Latency, ITL, PerUser float64
	TTFTSent, LatencySent                   float64
	// Effective is the latency from the intended send time (NaN unless a
	// schedule set it); EffectiveTTFT and EffectiveTTFO the first token's
	// and first output token's.
	Effective, EffectiveTTFT, EffectiveTTFO float64
	// Decode is request_latency − TTFT; Prefill is ISL per second of TTFT;
	// E2E is OSL per second of request_latency.
	Decode, Prefill, E2E float64
	ICL                  []float64
	ISL, OSL, Reasoning  float64
	// Output counts the non-reasoning output tokens: OSL − Reasoning.
	Output float64
	// Usage holds the server's usage counts in the order of usageTags (NaN:
	// not reported).
	Usage [usageTags]float64
	// ErrorISL is a failed request's ISL (NaN for a successful one, or when
	// unknown).
	ErrorISL float64
	// OSLMismatch is OSL's difference from the requested OSL in percent
	// (NaN without a requested OSL); Mismatched says it exceeds
	// OSLMismatchTolerance.
	OSLMismatch float64
	Mismatched  bool
	// Source says where OSL came from.
	Source string
	// HTTP holds the http_req_* breakdown in HTTPDefs order (NaN: not
	// traced).
	HTTP [httpTags]float64
	// UsageOSL is the server's completion_tokens when it sent usage and a
	// tokenizer counted the output too, for the >10% disagreement warning
	// and the OSL mismatch check; NaN otherwise.
	UsageOSL float64
	// TokenizerOSL is the tokenizer's count of the output (reasoning
	// included) whatever OSL used; NaN without a tokenizer.
	TokenizerOSL float64
	// InputSource says where ISL came from (InputFromDataset, ...).
	InputSource string
	// Distrust is the verdict that made the server's usage not
	// believable when the record was judged: none of its counts was used
	// (nil when they were believed, or absent).
	Distrust *UsageDistrust
	// Truncated is set when the server counted fewer prompt tokens than
	// surge sent, by more than TruncationMargin: it cut the prompt.
	Truncated bool
	// Images, AudioSeconds and MediaBytes are the media the request
	// carried (all NaN when it carried none).
	Images, AudioSeconds, MediaBytes float64
	// Events is what a streamed answer's events carried, counted when it
	// had more tokens than text events; Batched is set when it came in
	// batches (its first event carried most of it, or its events two
	// tokens or more on average): its ITL is the server's delivery
	// cadence.
	Events  EventTokens
	Batched bool
	// Parts is the request's time breakdown (Parts.Has false: none), set
	// by the shard (BreakdownOf).
	Parts Breakdown
}

// Get returns the value of a per-request tag (NaN when absent; ICL, a
// list, is not a single value).
func (v *Values) Get(t Tag) float64 {
	switch t {
	case TTFT:
		return v.TTFT
	case TTFO:
		return v.TTFO
	case TTST:
		return v.TTST
	case RequestLatency:
		return v.Latency
	case TTFTFromSend:
		return v.TTFTSent
	case LatencyFromSend:
		return v.LatencySent
	case EffectiveLatency:
		return v.Effective
	case EffectiveTTFT:
		return v.EffectiveTTFT
	case EffectiveTTFO:
		return v.EffectiveTTFO
	case ITL:
		return v.ITL
	case PerUser:
		return v.PerUser
	case ISL:
		return v.ISL
	case OSL:
		return v.OSL
	case ReasoningTokens:
		return v.Reasoning
	case OSLMismatch:
		return v.OSLMismatch
	case DecodeDuration:
		return v.Decode
	case PrefillPerUser:
		return v.Prefill
	case E2EThroughput:
		return v.E2E
	case OutputTokens:
		return v.Output
	case ErrorISL:
		return v.ErrorISL
	case TokenizerOSL:
		return v.TokenizerOSL
	case ImageCount:
		return v.Images
	case AudioDuration:
		return v.AudioSeconds
	case MediaBytes:
		return v.MediaBytes
	}
	for i, t2 := range usageTagList {
		if t2 == t {
			return v.Usage[i]
		}
	}
	for i, d := range HTTPDefs {
		if d.Tag == t {
			return v.HTTP[i]
		}
	}
	return math.NaN()
}

const nsPerMs = 1e6

// usageTagList lists the usage_* metrics in Values.Usage order.
var usageTagList = [usageTags]Tag{UsagePrompt, UsageCompletion, UsageTotal, UsageReasoning, UsageCacheRead, UsageCacheWrite}

// usageTags is len(usageTagList).
const usageTags = 6

// usageValues reads the counts the server reported, NaN for those it left
// out.
func usageValues(u *Usage) [usageTags]float64 {
	out := [usageTags]float64{}
	counts := [usageTags]int{u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens}
	for i, f := range []UsageFields{UsagePromptField, UsageCompletionField, UsageTotalField, UsageReasoningField, UsageCacheReadField, UsageCacheWriteField} {
		out[i] = math.NaN()
		if u.Present && u.Has(f) {
			out[i] = float64(counts[i])
		}
	}
	return out
}

// OSLMismatchTolerance is how many tokens an answer may miss its requested
// OSL by before it counts in osl_mismatch_count: 5% of the request, at most
// 50 tokens (AIPerf's defaults).
func OSLMismatchTolerance(requested int) float64 {
	return min(float64(requested)*0.05, 50)
}

// LatencyEnd is where request_latency ends, as AIPerf's
// RequestLatencyMetric ends it: a stream's last event that carried text
// (content or reasoning; a trailing usage-only chunk and [DONE] are not
// content), else the response's last byte.
func (r *Record) LatencyEnd() int64 {
	if r.Streamed && len(r.TokenNs) > 0 {
		return r.TokenNs[len(r.TokenNs)-1]
	}
	return r.EndNs
}

// Compute derives AIPerf's per-request metrics from a successful record
// with the default Counting. tok may be nil (no tokenizer loaded).
func Compute(r *Record, tok TokenCounter) Values { return ComputeWith(r, tok, Counting{}) }

// ComputeWith derives AIPerf's per-request metrics from a successful
// record, counting tokens as c says. tok may be nil (no tokenizer loaded).
func ComputeWith(r *Record, tok TokenCounter, c Counting) Values {
	return compute(r, tok, c, countOutput(r, tok), nil)
}

// tokCounts are the tokenizer's counts of a record's output (ok: a
// tokenizer counted them).
type tokCounts struct {
	output, reasoning int
	ok                bool
}

// countOutput counts r's output text and reasoning with tok.
func countOutput(r *Record, tok TokenCounter) tokCounts {
	if tok == nil {
		return tokCounts{}
	}
	tc := tokCounts{output: tok.Count(r.Text), ok: true}
	if r.ReasoningText != "" {
		tc.reasoning = tok.Count(r.ReasoningText)
	}
	return tc
}

// compute is ComputeWith with the output already counted (tc) and the
// judge's verdict on the server's usage: with one (distrust), none of the
// usage's counts is used.
func compute(r *Record, tok TokenCounter, c Counting, tc tokCounts, distrust *UsageDistrust) Values {
	nan := math.NaN()
	v := Values{TTFT: nan, TTFO: nan, TTST: nan, ITL: nan, PerUser: nan, ISL: nan, OSL: nan, Reasoning: nan, Output: nan,
		UsageOSL: nan, TokenizerOSL: nan, Effective: nan, OSLMismatch: nan, Decode: nan, Prefill: nan, E2E: nan, ErrorISL: nan,
		TTFTSent: nan, EffectiveTTFT: nan, EffectiveTTFO: nan}
	start := r.Issued()
	end := r.LatencyEnd()
	v.Latency = float64(end-start) / nsPerMs
	v.LatencySent = float64(end-r.SentNs) / nsPerMs
	v.Images, v.AudioSeconds, v.MediaBytes = mediaValues(r)
	v.HTTP = httpValues(&r.HTTP)
	v.Usage = usageValues(&r.Usage)
	if r.Scheduled && r.IntendedNs > 0 {
		v.Effective = float64(end-r.IntendedNs) / nsPerMs
	}

	tokOutput, tokReasoning := tc.output, tc.reasoning
	if !tc.ok {
		tok = nil
	} else {
		v.TokenizerOSL = float64(tokOutput + tokReasoning)
	}
	server := serverOSL(r)
	if distrust != nil {
		server = -1
		v.Distrust = distrust
	}
	if server >= 0 && tok != nil {
		v.UsageOSL = float64(server)
	}
	switch {
	case server >= 0 && (tok == nil || !c.Retokenize):
		// completion_tokens includes the reasoning tokens.
		reasoning := r.Usage.ReasoningTokens
		if !r.Usage.Has(UsageReasoningField) && tok != nil {
			reasoning = tokReasoning
		}
		v.Reasoning = float64(min(reasoning, server))
		v.Output = float64(server) - v.Reasoning
		v.Source = SourceUsage
	case tok != nil:
		v.Output, v.Reasoning = float64(tokOutput), float64(tokReasoning)
		v.Source = SourceTokenizer
	default:
		v.Reasoning = float64(min(r.ReasoningEvents, len(r.TokenNs)))
		v.Output = float64(len(r.TokenNs)) - v.Reasoning
		v.Source = SourceEvents
	}
	v.OSL = v.Output + v.Reasoning
	if r.NoOutput {
		v.OSL, v.Output, v.Reasoning, v.UsageOSL, v.TokenizerOSL = nan, nan, nan, nan, nan
		// As AIPerf: the output counts of usage are for types that
		// generate tokens.
		v.Usage[1], v.Usage[2], v.Usage[3] = nan, nan, nan
	}
	if r.RequestedOSL > 0 && !r.NoOutput {
		// The server's count where it gave one: it knows where it stopped.
		got := v.OSL
		if !math.IsNaN(v.UsageOSL) {
			got = v.UsageOSL
		}
		req := float64(r.RequestedOSL)
		v.OSLMismatch = (got - req) / req * 100
		v.Mismatched = math.Abs(got-req) > OSLMismatchTolerance(r.RequestedOSL)
	}
	v.ISL, v.InputSource = inputLength(r, tok, c.ServerInput, distrust == nil)
	v.Truncated = distrust == nil && truncated(r, tok)
	if v.Latency > 0 && !math.IsNaN(v.OSL) {
		v.E2E = v.OSL / (v.Latency / 1000)
	}

	if !r.Streamed || len(r.TokenNs) == 0 {
		return v
	}
	v.TTFT = float64(r.TokenNs[0]-start) / nsPerMs
	v.TTFTSent = float64(r.TokenNs[0]-r.SentNs) / nsPerMs
	v.Decode = v.Latency - v.TTFT
	if v.TTFT > 0 && !math.IsNaN(v.ISL) {
		v.Prefill = v.ISL / (v.TTFT / 1000)
	}
	if r.FirstContentNs > 0 {
		v.TTFO = float64(r.FirstContentNs-start) / nsPerMs
	}
	if !math.IsNaN(v.Effective) {
		lead := float64(start-r.IntendedNs) / nsPerMs
		v.EffectiveTTFT, v.EffectiveTTFO = v.TTFT+lead, v.TTFO+lead
	}
	if len(r.TokenNs) > 1 {
		// AIPerf's TTST: the second text event after the first.
		v.TTST = float64(r.TokenNs[1]-r.TokenNs[0]) / nsPerMs
		v.ICL = make([]float64, len(r.TokenNs)-1)
		for i := 1; i < len(r.TokenNs); i++ {
			v.ICL[i-1] = float64(r.TokenNs[i]-r.TokenNs[i-1]) / nsPerMs
		}
	}
	// AIPerf's ITL: the decode time over the tokens after the first. When
	// per-chunk usage, or the tokenizer's count of each event, says the
	// first event carried several tokens, those arrived with TTFT, not
	// after it: counting them would shorten ITL. An answer that came in
	// one event has no ITL (not 0): nothing came after its first token.
	first := float64(max(1, r.FirstChunkTokens))
	if r.UsageChunks == 0 && v.OSL > float64(len(r.TokenNs)) {
		v.Events = countEvents(r, tok)
		if v.Events.Counted {
			first = max(1, math.Round(v.OSL*float64(v.Events.First)/float64(v.Events.Total)))
		}
	}
	v.Batched = batched(v.OSL, len(r.TokenNs), first)
	if len(r.TokenNs) > 1 && v.OSL > first {
		v.ITL = (v.Latency - v.TTFT) / (v.OSL - first)
		if v.ITL > 0 {
			v.PerUser = 1000 / v.ITL
		}
	}
	return v
}

// serverOSL is the output length the server's usage gives (−1: none).
// A zero count beside generated text is a server that fills usage with
// zeros, not an empty answer.
func serverOSL(r *Record) int {
	if !r.Usage.Present || !r.Usage.Has(UsageCompletionField) {
		return -1
	}
	if r.Usage.CompletionTokens == 0 && (r.Text != "" || r.ReasoningText != "") {
		return -1
	}
	return r.Usage.CompletionTokens
}

// ComputeFailed derives what AIPerf keeps of a failed request: its input
// length (error_isl), NaN when unknown. The rest of v is NaN.
func ComputeFailed(r *Record, tok TokenCounter) Values {
	nan := math.NaN()
	v := Values{TTFT: nan, TTFO: nan, TTST: nan, Latency: nan, ITL: nan, PerUser: nan, ISL: nan, OSL: nan, Reasoning: nan,
		Output: nan, UsageOSL: nan, TokenizerOSL: nan, Effective: nan, EffectiveTTFT: nan, EffectiveTTFO: nan, OSLMismatch: nan, Decode: nan, Prefill: nan, E2E: nan,
		TTFTSent: nan, LatencySent: nan,
		Images: nan, AudioSeconds: nan, MediaBytes: nan}
	for i := range v.HTTP {
		v.HTTP[i] = nan
	}
	for i := range v.Usage {
		v.Usage[i] = nan
	}
	v.ErrorISL, _ = inputLength(r, tok, false, true)
	return v
}

// mediaValues are the media a request carried, NaN for one without any
// (a text request has no image count, as it has no reasoning).
func mediaValues(r *Record) (images, seconds, bytes float64) {
	if r.MediaBytes == 0 {
		nan := math.NaN()
		return nan, nan, nan
	}
	return float64(r.Images), r.AudioSeconds, float64(r.MediaBytes)
}

// Input length sources, as the summary names them.
const (
	InputFromDataset   = "dataset"
	InputFromTokenizer = "tokenizer"
	InputFromUsage     = "usage"
)

// inputLength is the prompt's length in tokens and where it came from: the
// server's usage when server is set and it sent one, else the chat
// template's count of the messages (--apply-chat-template), else the
// dataset's count, the tokenizer's, the server's usage (NaN, "" when none
// knows). believe is false when the server's usage is not believable: it
// is not used at all.
func inputLength(r *Record, tok TokenCounter, server, believe bool) (float64, string) {
	usage := believe && r.Usage.Present && r.Usage.Has(UsagePromptField)
	if server && usage {
		return float64(r.Usage.PromptTokens), InputFromUsage
	}
	if n, ok := chatLength(r, tok); ok {
		if n > 0 {
			return n, InputFromTokenizer
		}
		if usage {
			return float64(r.Usage.PromptTokens), InputFromUsage
		}
		return math.NaN(), ""
	}
	switch {
	case r.InputTokens > 0:
		return float64(r.InputTokens), InputFromDataset
	case tok != nil && r.InputText != "":
		return float64(tok.Count(r.InputText)), InputFromTokenizer
	case usage:
		return float64(r.Usage.PromptTokens), InputFromUsage
	}
	return math.NaN(), ""
}

// httpValues turns a transport breakdown into HTTPDefs' values in ms.
func httpValues(h *HTTPTiming) [httpTags]float64 {
	var out [httpTags]float64
	if !h.Traced {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	ms := func(ns int64) float64 { return float64(ns) / nsPerMs }
	kb := func(n int64) float64 { return float64(n) / 1024 }
	reused := 0.0
	if h.Reused {
		reused = 1
	}
	// Connecting holds the TLS handshake already (as AIPerf's): the total
	// adds it once.
	out = [httpTags]float64{
		ms(h.Blocked), ms(h.DNS), ms(h.Connecting), ms(h.TLS),
		ms(h.Sending), ms(h.Waiting), ms(h.Receiving),
		ms(h.Sending + h.Waiting + h.Receiving),
		ms(h.Blocked + h.DNS + h.Connecting),
		ms(h.Blocked + h.DNS + h.Connecting + h.Sending + h.Waiting + h.Receiving),
		kb(h.DataSent), kb(h.DataReceived), float64(h.ChunksSent), float64(h.ChunksReceived), reused,
	}
	return out
}
