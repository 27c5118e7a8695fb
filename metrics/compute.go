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
	TTFT, TTFO, TTST, Latency, ITL, PerUser float64
	// Effective is the latency from the intended send time (NaN unless a
	// schedule set it).
	Effective float64
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
	// UsageOSL is the server's completion_tokens when it sent usage and
	// Source is the tokenizer, for the >10% disagreement warning; NaN
	// otherwise.
	UsageOSL float64
	// Images, AudioSeconds and MediaBytes are the media the request
	// carried (all NaN when it carried none).
	Images, AudioSeconds, MediaBytes float64
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
	case EffectiveLatency:
		return v.Effective
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

// Compute derives AIPerf's per-request metrics from a successful record.
// tok may be nil (no tokenizer loaded).
func Compute(r *Record, tok TokenCounter) Values {
	nan := math.NaN()
	v := Values{TTFT: nan, TTFO: nan, TTST: nan, ITL: nan, PerUser: nan, ISL: nan, OSL: nan, Reasoning: nan, Output: nan,
		UsageOSL: nan, Effective: nan, OSLMismatch: nan, Decode: nan, Prefill: nan, E2E: nan, ErrorISL: nan}
	v.Latency = float64(r.EndNs-r.SentNs) / nsPerMs
	v.Images, v.AudioSeconds, v.MediaBytes = mediaValues(r)
	v.HTTP = httpValues(&r.HTTP)
	v.Usage = usageValues(&r.Usage)
	if r.Scheduled && r.IntendedNs > 0 {
		v.Effective = float64(r.EndNs-r.IntendedNs) / nsPerMs
	}

	switch {
	case tok != nil:
		reasoning := 0
		if r.ReasoningText != "" {
			reasoning = tok.Count(r.ReasoningText)
		}
		v.Output = float64(tok.Count(r.Text))
		v.Reasoning = float64(reasoning)
		v.Source = SourceTokenizer
		if r.Usage.Present {
			v.UsageOSL = float64(r.Usage.CompletionTokens)
		}
	case r.Usage.Present:
		// completion_tokens includes the reasoning tokens.
		v.Reasoning = float64(min(r.Usage.ReasoningTokens, r.Usage.CompletionTokens))
		v.Output = float64(r.Usage.CompletionTokens) - v.Reasoning
		v.Source = SourceUsage
	default:
		v.Reasoning = float64(min(r.ReasoningEvents, len(r.TokenNs)))
		v.Output = float64(len(r.TokenNs)) - v.Reasoning
		v.Source = SourceEvents
	}
	v.OSL = v.Output + v.Reasoning
	if r.NoOutput {
		v.OSL, v.Output, v.Reasoning, v.UsageOSL = nan, nan, nan, nan
		// As AIPerf: the output counts of usage are for types that
		// generate tokens.
		v.Usage[1], v.Usage[2], v.Usage[3] = nan, nan, nan
	}
	if r.RequestedOSL > 0 && !r.NoOutput {
		req := float64(r.RequestedOSL)
		v.OSLMismatch = (v.OSL - req) / req * 100
		v.Mismatched = math.Abs(v.OSL-req) > OSLMismatchTolerance(r.RequestedOSL)
	}
	v.ISL = inputLength(r, tok)
	if v.Latency > 0 && !math.IsNaN(v.OSL) {
		v.E2E = v.OSL / (v.Latency / 1000)
	}

	if !r.Streamed || len(r.TokenNs) == 0 {
		return v
	}
	v.TTFT = float64(r.TokenNs[0]-r.SentNs) / nsPerMs
	v.Decode = v.Latency - v.TTFT
	if v.TTFT > 0 && !math.IsNaN(v.ISL) {
		v.Prefill = v.ISL / (v.TTFT / 1000)
	}
	if r.FirstContentNs > 0 {
		v.TTFO = float64(r.FirstContentNs-r.SentNs) / nsPerMs
	}
	if len(r.TokenNs) > 1 {
		// AIPerf's TTST: the second text event after the first.
		v.TTST = float64(r.TokenNs[1]-r.TokenNs[0]) / nsPerMs
		v.ICL = make([]float64, len(r.TokenNs)-1)
		for i := 1; i < len(r.TokenNs); i++ {
			v.ICL[i-1] = float64(r.TokenNs[i]-r.TokenNs[i-1]) / nsPerMs
		}
	}
	if v.OSL >= 2 {
		v.ITL = (v.Latency - v.TTFT) / (v.OSL - 1)
		if v.ITL > 0 {
			v.PerUser = 1000 / v.ITL
		}
	}
	return v
}

// ComputeFailed derives what AIPerf keeps of a failed request: its input
// length (error_isl), NaN when unknown. The rest of v is NaN.
func ComputeFailed(r *Record, tok TokenCounter) Values {
	nan := math.NaN()
	v := Values{TTFT: nan, TTFO: nan, TTST: nan, Latency: nan, ITL: nan, PerUser: nan, ISL: nan, OSL: nan, Reasoning: nan,
		Output: nan, UsageOSL: nan, Effective: nan, OSLMismatch: nan, Decode: nan, Prefill: nan, E2E: nan,
		Images: nan, AudioSeconds: nan, MediaBytes: nan}
	for i := range v.HTTP {
		v.HTTP[i] = nan
	}
	for i := range v.Usage {
		v.Usage[i] = nan
	}
	v.ErrorISL = inputLength(r, tok)
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

// inputLength is the prompt's length in tokens: the dataset's count, else
// the tokenizer's, else the server's usage (NaN when none knows).
func inputLength(r *Record, tok TokenCounter) float64 {
	switch {
	case r.InputTokens > 0:
		return float64(r.InputTokens)
	case tok != nil && r.InputText != "":
		return float64(tok.Count(r.InputText))
	case r.Usage.Present && r.Usage.Has(UsagePromptField):
		return float64(r.Usage.PromptTokens)
	}
	return math.NaN()
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
	out = [httpTags]float64{
		ms(h.Blocked), ms(h.DNS), ms(h.Connecting), ms(h.TLS),
		ms(h.Sending), ms(h.Waiting), ms(h.Receiving),
		ms(h.Sending + h.Waiting + h.Receiving),
		ms(h.Blocked + h.DNS + h.Connecting),
	}
	return out
}
