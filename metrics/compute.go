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
	Effective           float64
	ICL                 []float64
	ISL, OSL, Reasoning float64
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
	}
	for i, d := range HTTPDefs {
		if d.Tag == t {
			return v.HTTP[i]
		}
	}
	return math.NaN()
}

const nsPerMs = 1e6

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
	v := Values{TTFT: nan, TTFO: nan, TTST: nan, ITL: nan, PerUser: nan, ISL: nan, OSL: nan, Reasoning: nan, UsageOSL: nan, Effective: nan, OSLMismatch: nan}
	v.Latency = float64(r.EndNs-r.SentNs) / nsPerMs
	v.HTTP = httpValues(&r.HTTP)
	if r.Scheduled && r.IntendedNs > 0 {
		v.Effective = float64(r.EndNs-r.IntendedNs) / nsPerMs
	}

	switch {
	case tok != nil:
		reasoning := 0
		if r.ReasoningText != "" {
			reasoning = tok.Count(r.ReasoningText)
		}
		v.OSL = float64(tok.Count(r.Text) + reasoning)
		v.Reasoning = float64(reasoning)
		v.Source = SourceTokenizer
		if r.Usage.Present {
			v.UsageOSL = float64(r.Usage.CompletionTokens)
		}
	case r.Usage.Present:
		v.OSL = float64(r.Usage.CompletionTokens)
		v.Reasoning = float64(r.Usage.ReasoningTokens)
		v.Source = SourceUsage
	default:
		v.OSL = float64(len(r.TokenNs))
		v.Reasoning = float64(r.ReasoningEvents)
		v.Source = SourceEvents
	}
	if r.NoOutput {
		v.OSL, v.Reasoning, v.UsageOSL = nan, nan, nan
	}
	if r.RequestedOSL > 0 && !r.NoOutput {
		req := float64(r.RequestedOSL)
		v.OSLMismatch = (v.OSL - req) / req * 100
		v.Mismatched = math.Abs(v.OSL-req) > OSLMismatchTolerance(r.RequestedOSL)
	}
	switch {
	case r.InputTokens > 0:
		v.ISL = float64(r.InputTokens)
	case tok != nil && r.InputText != "":
		v.ISL = float64(tok.Count(r.InputText))
	case r.Usage.Present:
		v.ISL = float64(r.Usage.PromptTokens)
	}

	if !r.Streamed || len(r.TokenNs) == 0 {
		return v
	}
	v.TTFT = float64(r.TokenNs[0]-r.SentNs) / nsPerMs
	if r.FirstContentNs > 0 {
		v.TTFO = float64(r.FirstContentNs-r.SentNs) / nsPerMs
	}
	if len(r.TokenNs) > 1 {
		v.TTST = float64(r.TokenNs[1]-r.SentNs) / nsPerMs
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
