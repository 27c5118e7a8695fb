package guidellm

import (
	"math"

	"github.com/surgebench/surge/app/peers"
)

// reqStat is one request as GuideLLM records it (GenerativeRequestStats),
// built from surge's record of it: times are Unix seconds, an unknown one
// NaN.
type reqStat struct {
	id, conversation string
	turn             int
	// status is RequestInfo's: completed, errored or cancelled.
	status string
	// targeted is when it was due, start when the client began it,
	// firstToken and lastToken its first and last content, end its
	// response's end.
	targeted, start, firstToken, lastToken, end float64
	// iterations are its streamed content events (GuideLLM's token
	// iterations).
	iterations int
	// prompt and output are its token counts (-1: none): the server's
	// usage, else surge's count.
	prompt, output int
	text           *string
	err            string
}

// newReqStat is a surge request as GuideLLM's record of it.
func newReqStat(r peers.Request) reqStat {
	q := reqStat{id: r.ID, conversation: r.Conversation, turn: r.Turn, status: "completed",
		targeted: float64(r.IntendedNs) / 1e9, start: float64(r.StartNs) / 1e9, end: float64(r.EndNs) / 1e9,
		firstToken: math.NaN(), lastToken: math.NaN(), prompt: r.Prompt(), output: -1}
	if q.targeted == 0 {
		q.targeted = q.start
	}
	if q.end == 0 {
		q.end = q.start + r.Latency/1e3
	}
	switch {
	case r.Cancelled:
		q.status = "cancelled"
	case r.Err != nil:
		q.status, q.err = "errored", r.Err.String()
	}
	if r.TTFT > 0 && r.OSL > 0 {
		q.firstToken = q.start + r.TTFT/1e3
		q.lastToken = q.start + r.Latency/1e3
		q.iterations = len(r.Chunks) + 1
	}
	if out := r.Output(); out > 0 || q.status == "completed" {
		q.output = out
	}
	if r.Text != "" || q.status == "completed" {
		t := r.Text
		q.text = &t
	}
	return q
}

// nan is a float that is not known.
func known(f float64) bool { return !math.IsNaN(f) }

// latency is request_latency: end − start (seconds).
func (q reqStat) latency() float64 { return q.end - q.start }

// outputTokens is output_tokens: the count, else the token iterations
// (NaN: none).
func (q reqStat) outputTokens() float64 {
	if q.output >= 0 {
		return float64(q.output)
	}
	if q.iterations > 0 {
		return float64(q.iterations)
	}
	return math.NaN()
}

// promptTokens is prompt_tokens (NaN: none).
func (q reqStat) promptTokens() float64 {
	if q.prompt >= 0 {
		return float64(q.prompt)
	}
	return math.NaN()
}

// totalTokens is total_tokens: prompt and output, either missing as 0
// (NaN when both are).
func (q reqStat) totalTokens() float64 {
	p, o := q.promptTokens(), q.outputTokens()
	if !known(p) && !known(o) {
		return math.NaN()
	}
	return zeroIfNaN(p) + zeroIfNaN(o)
}

func zeroIfNaN(f float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return f
}

// ttftMS is time_to_first_token_ms.
func (q reqStat) ttftMS() float64 { return 1000 * (q.firstToken - q.start) }

// tpotMS is time_per_output_token_ms: from start to the last token over
// every output token, the first included.
func (q reqStat) tpotMS() float64 {
	last := q.lastToken
	if !known(last) {
		last = q.end
	}
	out := q.outputTokens()
	if !known(out) || out == 0 {
		return math.NaN()
	}
	return 1000 * (last - q.start) / out
}

// itlMS is inter_token_latency_ms: from the first token to the last over
// the tokens after the first.
func (q reqStat) itlMS() float64 {
	out := q.outputTokens()
	if !known(q.firstToken) || !known(q.lastToken) || !known(out) || out <= 1 {
		return math.NaN()
	}
	return 1000 * (q.lastToken - q.firstToken) / (out - 1)
}

// tokensPerSecond and outputTokensPerSecond are over the latency.
func (q reqStat) tokensPerSecond() float64 {
	if l := q.latency(); l != 0 && known(q.totalTokens()) {
		return q.totalTokens() / l
	}
	return math.NaN()
}

func (q reqStat) outputTokensPerSecond() float64 {
	if l := q.latency(); l != 0 && known(q.outputTokens()) {
		return q.outputTokens() / l
	}
	return math.NaN()
}

// iterTokensPerIteration is the tokens per iteration after the first.
func (q reqStat) iterTokensPerIteration() float64 {
	out := q.outputTokens()
	if !known(out) || out <= 1 || q.iterations <= 1 {
		return math.NaN()
	}
	return (out - 1) / float64(q.iterations-1)
}

// outputTokensPerIteration is output over every iteration.
func (q reqStat) outputTokensPerIteration() float64 {
	out := q.outputTokens()
	if !known(out) || q.iterations < 1 {
		return math.NaN()
	}
	return out / float64(q.iterations)
}

// promptTiming is when the prompt's tokens count as processed: the first
// token, else the end.
func (q reqStat) promptTiming() weighted {
	t := q.firstToken
	if !known(t) {
		t = q.end
	}
	return weighted{t, zeroIfNaN(q.promptTokens())}
}

// iterTimings spread the tokens after the first evenly over the
// iterations after the first (GuideLLM has no per-iteration times either).
func (q reqStat) iterTimings() []weighted {
	per := q.iterTokensPerIteration()
	if !known(q.firstToken) || !known(q.lastToken) || !known(per) || q.iterations <= 1 {
		return nil
	}
	n := q.iterations
	out := make([]weighted, 0, n-1)
	for i := 1; i < n; i++ {
		t := q.firstToken + (q.lastToken-q.firstToken)*float64(i)/float64(n-1)
		out = append(out, weighted{t, per})
	}
	return out
}

// outputTimings are the output tokens over time: the first token, then
// the iterations after it; without iterations, all at the last token.
func (q reqStat) outputTimings() []weighted {
	if !known(q.firstToken) || !known(q.lastToken) || q.iterations <= 1 {
		t := q.lastToken
		if !known(t) {
			t = q.end
		}
		return []weighted{{t, zeroIfNaN(q.outputTokens())}}
	}
	first := 0.0
	if o := q.outputTokens(); known(o) && o != 0 {
		first = 1
	}
	return append([]weighted{{q.firstToken, first}}, q.iterTimings()...)
}

// totalTimings are the prompt's then the output's.
func (q reqStat) totalTimings() []weighted {
	return append([]weighted{q.promptTiming()}, q.outputTimings()...)
}

// orNull is f, or null when unknown.
func orNull(f float64) any {
	if math.IsNaN(f) {
		return nil
	}
	return f
}

// intOrNull is an int count, or null when unknown.
func intOrNull(f float64) any {
	if math.IsNaN(f) {
		return nil
	}
	return int(f)
}

// usage is a UsageMetrics with text tokens n (-1: none).
func usage(n int) *peers.Object {
	o := &peers.Object{}
	var tokens any
	if n >= 0 {
		tokens = n
	}
	o.Set("text_tokens", tokens)
	for _, k := range []string{"text_words", "text_characters", "image_tokens", "image_count", "image_pixels", "image_bytes",
		"video_tokens", "video_frames", "video_seconds", "video_bytes", "audio_tokens", "audio_samples", "audio_seconds", "audio_bytes"} {
		o.Set(k, nil)
	}
	o.Set("total_tokens", tokens)
	return o
}

// object is the GenerativeRequestStats as GuideLLM writes it (v is the
// report's schema version: 2 adds v0.7's fields).
func (q reqStat) object(v int) *peers.Object {
	o := &peers.Object{}
	o.Set("type_", "generative_request_stats")
	o.Set("request_id", q.id)
	o.Set("response_id", nil)
	o.Set("request_args", nil)
	if q.text != nil {
		o.Set("output", *q.text)
	} else {
		o.Set("output", nil)
	}
	if v >= 2 {
		o.Set("reasoning_output", nil)
		o.Set("tool_calls", nil)
	}
	info := &peers.Object{}
	info.Set("request_id", q.id)
	if q.conversation != "" {
		info.Set("conversation_id", q.conversation)
	} else {
		info.Set("conversation_id", nil)
	}
	info.Set("turn_index", q.turn)
	info.Set("status", q.status)
	info.Set("scheduler_node_id", 0)
	info.Set("scheduler_process_id", 0)
	info.Set("scheduler_start_time", q.targeted)
	t := &peers.Object{}
	t.Set("targeted_start", q.targeted)
	t.Set("queued", q.targeted)
	t.Set("dequeued", q.targeted)
	t.Set("scheduled_at", q.targeted)
	t.Set("resolve_start", q.start)
	t.Set("request_start", q.start)
	t.Set("first_request_iteration", orNull(q.firstToken))
	t.Set("first_token_iteration", orNull(q.firstToken))
	if v >= 2 {
		t.Set("first_output_token_iteration", orNull(q.firstToken))
	}
	t.Set("last_token_iteration", orNull(q.lastToken))
	t.Set("last_request_iteration", orNull(q.lastToken))
	t.Set("request_iterations", q.iterations)
	t.Set("token_iterations", q.iterations)
	t.Set("request_end", q.end)
	t.Set("resolve_end", q.end)
	t.Set("finalized", q.end)
	info.Set("timings", t)
	if q.err != "" {
		info.Set("error", q.err)
	} else {
		info.Set("error", nil)
	}
	info.Set("traceback", nil)
	info.Set("started_at", q.start)
	info.Set("completed_at", q.end)
	o.Set("info", info)
	o.Set("input_metrics", usage(q.prompt))
	o.Set("output_metrics", usage(q.output))
	o.Set("request_start_time", q.start)
	o.Set("request_end_time", q.end)
	o.Set("request_latency", q.latency())
	o.Set("prompt_tokens", intOrNull(q.promptTokens()))
	o.Set("output_tokens", intOrNull(q.outputTokens()))
	o.Set("total_tokens", intOrNull(q.totalTokens()))
	ttft := math.NaN()
	if known(q.firstToken) {
		ttft = q.ttftMS()
	}
	o.Set("time_to_first_token_ms", orNull(ttft))
	if v >= 2 {
		o.Set("time_to_first_output_token_ms", orNull(ttft))
	}
	o.Set("time_per_output_token_ms", orNull(q.tpotMS()))
	o.Set("inter_token_latency_ms", orNull(q.itlMS()))
	o.Set("tokens_per_second", orNull(q.tokensPerSecond()))
	o.Set("output_tokens_per_second", orNull(q.outputTokensPerSecond()))
	o.Set("iter_tokens_per_iteration", orNull(q.iterTokensPerIteration()))
	o.Set("output_tokens_per_iteration", orNull(q.outputTokensPerIteration()))
	return o
}
