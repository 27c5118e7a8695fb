package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// ErrorCount is one row of error_summary.
type ErrorCount struct {
	Details Error `json:"error_details"`
	Count   int64 `json:"count"`
}

// Summary is the final result of a run (profile phase), ready for export.
type Summary struct {
	// Metrics holds the per-request distributions that had any value.
	Metrics map[Tag]Distribution
	// Run holds the run-level metrics.
	Run map[Tag]float64
	// Errors lists failures grouped by code, type and message, most
	// frequent first.
	Errors []ErrorCount
	// ConnectionRetries counts requests sent again on a fresh connection
	// because a pooled keep-alive connection had been closed by the server
	// (failed records included); they are not errors.
	ConnectionRetries int64
	// RetryDuplicates counts those of them the server may have read before
	// it closed the connection (Record.RetryDuplicate): the others it
	// never saw twice.
	RetryDuplicates int64
	// SchedulerLag is actual minus intended send time, in ms.
	SchedulerLag Distribution
	// Stages summarises each sweep/ramp stage (nil for single-stage runs).
	Stages []StageSummary
	// Warmup summarises the warmup records (nil without warmup).
	Warmup *Summary
	// Timeslices summarise the profile phase per --slice-duration window
	// (nil without).
	Timeslices []Timeslice
	// TokenSource says how output tokens were counted: tokenizer, usage,
	// sse_events or mixed.
	TokenSource string
	// InputTokenSource says where ISL (and so the input side of
	// total_token_throughput) came from: dataset, tokenizer, usage, or
	// mixed with the counts.
	InputTokenSource string
	// TimestampSource says what timed the streamed tokens: kernel (receive
	// stamps), read (when the client read them) or mixed; empty without
	// streamed records.
	TimestampSource string
	// FirstTokenShared counts streamed requests whose first token came in
	// one read with the next (Record.FirstTokenShared), of Streamed.
	FirstTokenShared, Streamed int64
	// UsageDistrust is the verdict that the server's usage is not
	// believable (nil: believed, or absent); UsageIgnored counts the
	// requests counted without it.
	UsageDistrust *UsageDistrust
	UsageIgnored  int64
	// TokensPerEvent is set when the server sent its tokens in batches:
	// its ITL is then a delivery cadence (the exports say so), and this is
	// how many tokens its events carried.
	TokensPerEvent *TokensPerEvent
	// Warnings are caveats the console and export repeat.
	Warnings []string
	// ServerTokens is the server's own token count beside the run's (nil:
	// not compared; CompareServerTokens sets it).
	ServerTokens *TokenComparison
	// StartNs and EndNs bound the profile phase (first send, last response).
	StartNs, EndNs int64
	// SendRate is the achieved issue rate (requests/s between the first and
	// the last send), for comparison with a --request-rate target.
	SendRate float64
	// IntendedRate is the rate the schedule asked for over the same
	// requests; SendRate below it means the client fell behind.
	IntendedRate float64
	// Knee and Operating index Stages: the first stage past the knee and
	// the recommended operating point before it (-1: none).
	Knee, Operating int
	// KneeVerdict is MarkKnee's full answer: whether the stages' intervals
	// settled it, and if not, how many requests per stage might.
	KneeVerdict KneeVerdict
	// Precision holds the confidence intervals of the headline numbers,
	// from the exact values of the requests (nil for a summary computed
	// from a state read back from JSON).
	Precision *Precision
	// SteadyState is the window between the run's warm-up and its drain,
	// with its headline numbers (nil for a sweep: each stage's run folder
	// has its own).
	SteadyState *SteadyState
	// Sessions summarises the sessions, their tool calls and the context
	// their requests carried (nil: single requests, no tools, no cache
	// report; and for a summary computed from a state read back).
	Sessions *Sessions
	// TimeBreakdown is where the requests' time went (nil: no request had
	// a breakdown: the server said nothing of its time).
	TimeBreakdown *TimeBreakdown
	// SpanJoins says how the records fared with the server's spans (nil:
	// no spans were joined, WithServerSpans).
	SpanJoins *SpanJoins
	// Little is Little's law over the run (nil: too few requests).
	Little *LittleLaw
	// Omission compares the latencies from the intended start with those
	// from the issue, under a schedule (nil: no scheduled request).
	Omission *Omission
	// readDelayAt is 1 + the index in Warnings of the client read delay
	// warning (0: none), which AttributeLoad rewrites.
	readDelayAt int
}

// AttributeLoad rewrites the client read delay warning, if any, to say
// which side kept the CPU busy over the run (MachineLoad.Busy).
func (s *Summary) AttributeLoad(l MachineLoad) {
	if s.readDelayAt == 0 || s.readDelayAt > len(s.Warnings) {
		return
	}
	d := s.Metrics[ClientReadDelay]
	s.Warnings[s.readDelayAt-1] = readDelayWarning(d.P99, s.TimestampSource == "kernel", &l)
}

// LagWarnMs is the scheduler-lag p99 above which a run is flagged.
const LagWarnMs = 10

// ReadDelayWarnMs is the client_read_delay p99 above which a run is
// flagged: the client could not keep up with its sockets.
const ReadDelayWarnMs = 1

// SharedFirstWarn is the fraction of streamed requests whose first token
// shared a read with the next above which a run is flagged: past 1% it
// moves TTFT's p99.
const SharedFirstWarn = 0.01

// TokenCountWarning is the caveat for output counts where the tokenizer
// (tok tokens in all) and the server's usage (usage) differ by more than
// 10%. With a tokenizer not known to be the model's (the embedded one),
// the likely cause is that it is another's; with the model's own (found
// by the model's name, or given by --tokenizer), re-tokenizing the
// streamed text is not what the model generated (tokens the server counts
// but does not stream, such as a closing special token or a template's,
// and text that merges otherwise once detokenized). source is the
// summary's TokenSource. metrics/export reads its numbers back for the
// console's line.
func TokenCountWarning(tok, usage float64, modelTokenizer bool, source string) string {
	diff := fmt.Sprintf("output token counts disagree: the tokenizer counts %.0f, the server's usage %.0f (%+.1f%%)", tok, usage, 100*(tok-usage)/usage)
	if !modelTokenizer {
		return diff + "; the tokenizer that counted is not known to be the model's: give the model's with --tokenizer"
	}
	uses := "the server's counts"
	if source == SourceTokenizer {
		uses = "the tokenizer's (--retokenize-output)"
	}
	return diff + "; the tokenizer is the model's (its own, or --tokenizer's), so the gap is in re-tokenizing the streamed text (tokens the server counts but does not stream, text that merges otherwise once detokenized); OSL uses " + uses
}

// EmptyResponsesWarning is the caveat for n responses that ended cleanly
// with no output (ErrEmptyResponse).
func EmptyResponsesWarning(n int64) string {
	return fmt.Sprintf("%d responses ended with no tokens (200, no content, reasoning or tool-call text): counted as errors (AIPerf's InvalidInferenceResultError), outside latency, OSL and goodput", n)
}

// runLevel is what the run-level metrics are computed from: the counts,
// the window's length, and the sums of the per-request metrics.
type runLevel struct {
	count, errors, good         int64
	cancelled                   int64
	noOutput, inputs            int64
	oslRequested, oslMismatched int64
	// promptChecked and truncated: prompt_truncated_count (countChecks).
	promptChecked, truncated int64
	dur                      float64 // seconds: last response − first request
	// span is the seconds from the first request to the last response of
	// a run none of whose requests succeeded (dur has no window then): its
	// benchmark_duration.
	span                      float64
	inputTokens, outputTokens float64 // Σ ISL, Σ OSL
	// sums holds the sum of each per-request metric that had values.
	sums map[Tag]float64
}

// metrics computes the run-level metrics (RunDefs).
func (rl runLevel) metrics() map[Tag]float64 {
	run := map[Tag]float64{}
	run[RequestCount] = float64(rl.count)
	run[ErrorRequestCount] = float64(rl.errors)
	if rl.cancelled > 0 {
		// Counted among the errors too, as AIPerf counts them.
		run[CancelledRequestCount] = float64(rl.cancelled)
	}
	run[GoodRequestCount] = float64(rl.good)
	if n := rl.count + rl.errors; n > 0 {
		run[GoodRequestFraction] = float64(rl.good) / float64(n)
		run[RequestErrorRate] = 100 * float64(rl.errors) / float64(n)
	}
	run[BenchmarkDuration] = rl.dur
	if rl.dur == 0 && rl.count == 0 {
		// Every request failed: the run still took its time.
		run[BenchmarkDuration] = rl.span
	}
	// Embeddings and rankings generate no tokens: as in AIPerf they have no
	// output token metrics, and their throughput is counted in inputs.
	generates := rl.noOutput == 0
	// Totals are sums over the requests that had the value (AIPerf's
	// derived sums): absent when none had it.
	for tag, total := range map[Tag]Tag{
		OutputTokens: TotalOutputTokens, ReasoningTokens: TotalReasoningTokens, ISL: TotalISL, OSL: TotalOSL,
		ErrorISL: TotalErrorISL, UsagePrompt: TotalUsagePrompt, UsageCompletion: TotalUsageCompletion,
		UsageTotal: TotalUsageTotal, UsageReasoning: TotalUsageReasoning, UsageCacheRead: TotalUsageCacheRead,
		UsageCacheWrite: TotalUsageCacheWrite,
	} {
		if sum, ok := rl.sums[tag]; ok {
			run[total] = sum
		}
	}
	if prompt := run[TotalUsagePrompt]; prompt > 0 {
		if read, ok := run[TotalUsageCacheRead]; ok {
			run[UsageCacheReadPct] = 100 * read / prompt
		}
	}
	if rl.oslRequested > 0 {
		run[OSLMismatchCount] = float64(rl.oslMismatched)
	}
	if rl.promptChecked > 0 {
		run[PromptTruncatedCount] = float64(rl.truncated)
	}
	if rl.dur > 0 {
		run[RequestThroughput] = float64(rl.count) / rl.dur
		run[Goodput] = float64(rl.good) / rl.dur
		if generates {
			run[OutputTokenThroughput] = rl.outputTokens / rl.dur
			run[TotalTokenThroughput] = (rl.inputTokens + rl.outputTokens) / rl.dur
		} else {
			run[InputThroughput] = float64(rl.inputs) / rl.dur
			run[InputTokenThroughput] = rl.inputTokens / rl.dur
		}
	}
	return run
}

// summaryOf summarises a's records; modelTokenizer says the tokenizer that
// counted them was the model's own.
func summaryOf(a *aggregate, modelTokenizer bool) *Summary {
	s := &Summary{Metrics: map[Tag]Distribution{}, Run: map[Tag]float64{}, StartNs: a.firstSent, EndNs: a.lastEnd,
		SendRate: a.sendRate(), IntendedRate: a.intendedRate(), Knee: -1, Operating: -1,
		KneeVerdict:       KneeVerdict{Knee: -1, Operating: -1, At: -1},
		ConnectionRetries: a.connRetries, RetryDuplicates: a.retryDups}
	for _, d := range RequestDefs {
		if x := a.dists[d.Tag]; x != nil && x.n > 0 {
			s.Metrics[d.Tag] = x.distribution(d.Unit)
		}
	}
	for _, d := range AdjustedDefs {
		src := d.Tag[len("adj_"):]
		if x := a.dists[src]; x != nil && x.n > 0 && a.errors > 0 {
			s.Metrics[d.Tag] = x.adjusted(d.Unit, a.errors)
		}
	}
	if a.icl.n > 0 {
		s.Metrics[ICL] = a.icl.distribution("ms")
	}
	for i, d := range HTTPDefs {
		if a.http[i].n > 0 {
			s.Metrics[d.Tag] = a.http[i].distribution(d.Unit)
		}
	}
	if a.readDelay.n > 0 {
		s.Metrics[ClientReadDelay] = a.readDelay.distribution("ms")
	}
	s.TimeBreakdown = a.breakdown.summary()
	s.FirstTokenShared, s.Streamed = a.firstShared, a.kernelStamps+a.readStamps
	switch {
	case a.kernelStamps > 0 && a.readStamps > 0:
		s.TimestampSource = "mixed"
	case a.kernelStamps > 0:
		s.TimestampSource = "kernel"
	case a.readStamps > 0:
		s.TimestampSource = "read"
	}
	if x := a.dists[lagTag]; x != nil {
		s.SchedulerLag = x.distribution("ms")
	}
	rl := runLevel{count: a.count, errors: a.errors, cancelled: a.cancelled, good: a.good, noOutput: a.noOutput, inputs: a.inputs,
		oslRequested: a.oslRequested, oslMismatched: a.oslMismatched, dur: a.durationSec(),
		promptChecked: a.checks.PromptChecked, truncated: a.checks.Truncated,
		inputTokens: a.inputTokens, outputTokens: a.outputTokens, sums: map[Tag]float64{}}
	if a.lastEnd > a.firstSent {
		rl.span = float64(a.lastEnd-a.firstSent) / 1e9
	}
	for t, d := range a.dists {
		if d.n > 0 {
			rl.sums[t] = d.sum
		}
	}
	s.Run = rl.metrics()
	for k, n := range a.errs {
		s.Errors = append(s.Errors, ErrorCount{Details: Error{Code: k.code, Type: k.typ, Message: k.text}, Count: n})
	}
	slices.SortFunc(s.Errors, func(x, y ErrorCount) int {
		if c := cmp.Compare(y.Count, x.Count); c != 0 {
			return c
		}
		return cmp.Compare(x.Details.Message, y.Details.Message)
	})
	switch len(a.sources) {
	case 0:
	case 1:
		for k := range a.sources {
			s.TokenSource = k
		}
	default:
		s.TokenSource = "mixed"
	}
	s.InputTokenSource = a.checks.inputSource()
	if d := a.checks.Distrust; d != nil {
		// No verdict rests on the server's usage: the prompts it "cut"
		// and the counts' disagreement are its usage's doing.
		s.UsageDistrust, s.UsageIgnored = d, a.checks.UsageIgnored
		s.Warnings = append(s.Warnings, UsageWarning(d, a.sources[SourceTokenizer] > 0))
		delete(s.Run, PromptTruncatedCount)
	}
	if k := &a.checks; k.Truncated > 0 && k.Distrust == nil {
		n := float64(k.Truncated)
		s.Warnings = append(s.Warnings, TruncationWarning(k.Truncated, k.PromptChecked, k.SentTruncated/n, k.ServerTruncated/n, s.InputTokenSource))
	}
	if t := a.checks.Batches.tokensPerEvent(); t != nil {
		// It says more than the multi-token chunk warning would.
		s.TokensPerEvent = t
		s.Warnings = append(s.Warnings, BatchedWarning(t))
	} else if w := a.checks.chunkWarning(); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	if a.usageOSL > 0 && math.Abs(a.tokenizerOSL-a.usageOSL)/a.usageOSL > 0.10 && a.checks.Distrust == nil {
		s.Warnings = append(s.Warnings, TokenCountWarning(a.tokenizerOSL, a.usageOSL, modelTokenizer, s.TokenSource))
	}
	if n := s.EmptyResponses(); n > 0 {
		s.Warnings = append(s.Warnings, EmptyResponsesWarning(n))
	}
	if d, ok := s.Metrics[ClientReadDelay]; ok && d.P99 > ReadDelayWarnMs {
		s.readDelayAt = len(s.Warnings) + 1
		s.Warnings = append(s.Warnings, readDelayWarning(d.P99, s.TimestampSource == "kernel", nil))
	}
	if s.Streamed > 0 && float64(s.FirstTokenShared) > SharedFirstWarn*float64(s.Streamed) {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"%d of %d first tokens (%.1f%%) were read together with the next token: a read carries its last segment's arrival time, so their TTFT may be late by up to one token gap (the client was busy when they arrived, or the server sent the two together, which delays nothing)",
			s.FirstTokenShared, s.Streamed, 100*float64(s.FirstTokenShared)/float64(s.Streamed)))
	}
	if s.SchedulerLag.Count > 0 && s.SchedulerLag.P99 > LagWarnMs {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"scheduler lag p99 %.1f ms exceeds %d ms: the client fell behind its schedule", s.SchedulerLag.P99, LagWarnMs))
	}
	s.Little = littleOf(a, s.Metrics[RequestLatency].P99, s.TimeBreakdown, s.Run[RequestThroughput])
	if s.Little.Disagrees() {
		s.Warnings = append(s.Warnings, littleWarning(s.Little, ""))
	}
	return s
}
