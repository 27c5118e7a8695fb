package metrics

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const ms = int64(1e6)

// wordCounter counts whitespace-separated words: a stand-in tokenizer with
// an obvious answer.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

// TestComputeStartPoints holds the one rule of docs/aiperf-compat.md: under
// AIPerf's names the times start when the request was handed to the
// transport (AIPerf's request start: the wait for a connection, the dial
// and the upload inside), under the *_from_send names at its last byte
// written; decode and ITL are the same from either.
func TestComputeStartPoints(t *testing.T) {
	t.Parallel()
	r := &Record{Streamed: true, IssuedNs: 90 * ms, SentNs: 100 * ms, EndNs: 160 * ms,
		TokenNs: []int64{120 * ms, 160 * ms}, FirstContentNs: 120 * ms, InputTokens: 10,
		Usage: Usage{Present: true, PromptTokens: 10, CompletionTokens: 2}}
	v := Compute(r, nil)
	for _, c := range []struct {
		tag  Tag
		want float64
	}{
		{TTFT, 30}, {TTFO, 30}, {RequestLatency, 70},
		{TTFTFromSend, 20}, {LatencyFromSend, 60},
		{DecodeDuration, 40}, {ITL, 40},
		{PrefillPerUser, 10 / 0.030}, {E2EThroughput, 2 / 0.070},
	} {
		if got := v.Get(c.tag); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.tag, got, c.want)
		}
	}
	r.IssuedNs = 0 // Issued is the send itself: the two views agree
	v = Compute(r, nil)
	if v.TTFT != v.TTFTSent || v.Latency != v.LatencySent {
		t.Errorf("without an issue stamp: TTFT %v/%v, latency %v/%v", v.TTFT, v.TTFTSent, v.Latency, v.LatencySent)
	}
}

func TestCompute(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	stream := func(mod func(*Record)) *Record {
		r := &Record{
			Streamed: true, SentNs: 100 * ms, EndNs: 160 * ms,
			TokenNs:        []int64{120 * ms, 130 * ms, 140 * ms, 150 * ms, 160 * ms},
			FirstContentNs: 120 * ms, Text: "a b c d e", InputTokens: 7,
			Usage: Usage{Present: true, PromptTokens: 9, CompletionTokens: 5},
		}
		if mod != nil {
			mod(r)
		}
		return r
	}
	cases := []struct {
		name string
		rec  *Record
		tok  TokenCounter
		want Values
	}{
		{
			name: "ran past the requested OSL: 5 for 4 is +25%, beyond min(5%, 50 tokens)",
			rec:  stream(func(r *Record) { r.RequestedOSL = 4 }),
			want: Values{TTFT: 20, TTFO: 20, TTST: 10, Latency: 60, ITL: 10, PerUser: 100,
				ICL: []float64{10, 10, 10, 10}, ISL: 7, OSL: 5, Reasoning: 0, Source: SourceUsage, UsageOSL: nan, Effective: nan,
				OSLMismatch: 25, Mismatched: true},
		},
		{
			name: "usage counts, AIPerf ITL formula",
			rec:  stream(nil),
			want: Values{TTFT: 20, TTFO: 20, TTST: 10, Latency: 60, ITL: 10, PerUser: 100,
				ICL: []float64{10, 10, 10, 10}, ISL: 7, OSL: 5, Reasoning: 0, Source: SourceUsage, UsageOSL: nan, Effective: nan, OSLMismatch: nan},
		},
		{
			name: "reasoning first: TTFT before TTFO, reasoning tokens in OSL",
			rec: stream(func(r *Record) {
				r.FirstContentNs = 140 * ms
				r.ReasoningEvents = 2
				r.Text, r.ReasoningText = "c d e", "a b"
				r.Usage = Usage{}
			}),
			tok: wordCounter{},
			want: Values{TTFT: 20, TTFO: 40, TTST: 10, Latency: 60, ITL: 10, PerUser: 100,
				ICL: []float64{10, 10, 10, 10}, ISL: 7, OSL: 5, Reasoning: 2, Source: SourceTokenizer, UsageOSL: nan, Effective: nan, OSLMismatch: nan},
		},
		{
			name: "no usage, no tokenizer: SSE events; ISL from prompt unknown",
			rec: stream(func(r *Record) {
				r.Usage = Usage{}
				r.InputTokens = 0
			}),
			want: Values{TTFT: 20, TTFO: 20, TTST: 10, Latency: 60, ITL: 10, PerUser: 100,
				ICL: []float64{10, 10, 10, 10}, ISL: nan, OSL: 5, Reasoning: 0, Source: SourceEvents, UsageOSL: nan, Effective: nan, OSLMismatch: nan},
		},
		{
			name: "tokenizer counts the prompt when the dataset did not",
			rec: stream(func(r *Record) {
				r.InputTokens, r.InputText = 0, "one two three"
			}),
			tok: wordCounter{},
			want: Values{TTFT: 20, TTFO: 20, TTST: 10, Latency: 60, ITL: 10, PerUser: 100,
				ICL: []float64{10, 10, 10, 10}, ISL: 3, OSL: 5, Reasoning: 0, Source: SourceUsage, UsageOSL: 5, Effective: nan, OSLMismatch: nan},
		},
		{
			name: "scheduled: latency from the intended time too",
			rec: stream(func(r *Record) {
				r.Scheduled, r.IntendedNs = true, 90*ms
			}),
			want: Values{TTFT: 20, TTFO: 20, TTST: 10, Latency: 60, ITL: 10, PerUser: 100, Effective: 70, EffectiveTTFT: 30, EffectiveTTFO: 30,
				ICL: []float64{10, 10, 10, 10}, ISL: 7, OSL: 5, Reasoning: 0, Source: SourceUsage, UsageOSL: nan, OSLMismatch: nan},
		},
		{
			name: "one token: no ITL",
			rec: &Record{Streamed: true, SentNs: 100 * ms, EndNs: 125 * ms, TokenNs: []int64{125 * ms},
				FirstContentNs: 125 * ms, Usage: Usage{Present: true, CompletionTokens: 1}},
			want: Values{TTFT: 25, TTFO: 25, TTST: nan, Latency: 25, ITL: nan, PerUser: nan,
				ISL: 0, OSL: 1, Reasoning: 0, Source: SourceUsage, UsageOSL: nan, Effective: nan, OSLMismatch: nan},
		},
		{
			name: "non-streamed: latency and lengths only",
			rec: &Record{SentNs: 100 * ms, EndNs: 300 * ms, TokenNs: []int64{300 * ms}, FirstContentNs: 300 * ms,
				Usage: Usage{Present: true, PromptTokens: 4, CompletionTokens: 50}},
			want: Values{TTFT: nan, TTFO: nan, TTST: nan, Latency: 200, ITL: nan, PerUser: nan,
				ISL: 4, OSL: 50, Reasoning: 0, Source: SourceUsage, UsageOSL: nan, Effective: nan, OSLMismatch: nan},
		},
		{
			name: "transport breakdown: duration and overhead are sums",
			rec: &Record{SentNs: 100 * ms, EndNs: 300 * ms, Usage: Usage{Present: true, PromptTokens: 4, CompletionTokens: 50},
				HTTP: HTTPTiming{Traced: true, Blocked: 1 * ms, DNS: 2 * ms, Connecting: 3 * ms, TLS: 2 * ms,
					Sending: ms / 2, Waiting: 150 * ms, Receiving: 50 * ms,
					DataSent: 2048, DataReceived: 512, ChunksSent: 1, ChunksReceived: 7}},
			// total: blocked + dns + connecting (TLS inside) + sending +
			// waiting + receiving; data in KB of 1024; a new connection.
			want: Values{TTFT: nan, TTFO: nan, TTST: nan, Latency: 200, ITL: nan, PerUser: nan,
				ISL: 4, OSL: 50, Reasoning: 0, Source: SourceUsage, UsageOSL: nan, Effective: nan,
				OSLMismatch: nan, HTTP: [httpTags]float64{1, 2, 3, 2, 0.5, 150, 50, 200.5, 6, 206.5, 2, 0.5, 1, 7, 0}},
		},
	}
	for _, tc := range cases {
		if tc.want.HTTP == ([httpTags]float64{}) {
			for i := range tc.want.HTTP {
				tc.want.HTTP[i] = nan // not traced
			}
		}
		tc.want.Images, tc.want.AudioSeconds, tc.want.MediaBytes = nan, nan, nan // no media: TestComputeMedia
		if math.IsNaN(tc.want.Effective) {
			tc.want.EffectiveTTFT, tc.want.EffectiveTTFO = nan, nan // not scheduled
		}
		got := Compute(tc.rec, tc.tok)
		// TestComputeAIPerfMetrics checks the rest.
		rest := cmpopts.IgnoreFields(Values{}, "Decode", "Prefill", "E2E", "Output", "Usage", "ErrorISL", "TokenizerOSL", "InputSource", "Truncated", "TTFTSent", "LatencySent")
		if d := cmp.Diff(tc.want, got, cmpopts.EquateNaNs(), cmpopts.EquateApprox(0, 1e-9), rest); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, d)
		}
	}
}

// TestComputeAIPerfMetrics checks the metrics AIPerf derives from the
// basic ones, by its formulas (docs/metrics-reference.md), and the usage
// counts as the server sent them.
func TestComputeAIPerfMetrics(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	// Sent at 100 ms; text events at 120 (reasoning), 150, 160, 200 ms.
	r := &Record{
		Streamed: true, SentNs: 100 * ms, EndNs: 200 * ms,
		TokenNs:        []int64{120 * ms, 150 * ms, 160 * ms, 200 * ms},
		FirstContentNs: 150 * ms, ReasoningEvents: 1, InputTokens: 40,
		Usage: Usage{Present: true, PromptTokens: 40, CompletionTokens: 10, ReasoningTokens: 2, TotalTokens: 50,
			CacheReadTokens: 32, Fields: UsagePromptField | UsageCompletionField | UsageTotalField | UsageReasoningField | UsageCacheReadField},
	}
	v := Compute(r, nil)
	want := map[Tag]float64{
		TTFT: 20, TTFO: 50,
		TTST:           30, // second event − first (AIPerf), not − send
		RequestLatency: 100,
		DecodeDuration: 80,         // latency − TTFT
		ITL:            80.0 / 9,   // (latency − TTFT) / (OSL − 1)
		PrefillPerUser: 40 / 0.020, // ISL / TTFT in seconds
		E2EThroughput:  10 / 0.100, // OSL / latency in seconds
		OutputTokens:   8, OSL: 10, // content tokens; + reasoning
		ReasoningTokens: 2, ISL: 40,
		UsagePrompt: 40, UsageCompletion: 10, UsageTotal: 50, UsageReasoning: 2, UsageCacheRead: 32,
		UsageCacheWrite: nan, // not sent
		ErrorISL:        nan,
	}
	for tag, w := range want {
		if g := v.Get(tag); !(g == w || math.IsNaN(g) && math.IsNaN(w) || math.Abs(g-w) < 1e-9) {
			t.Errorf("%s = %v, want %v", tag, g, w)
		}
	}

	// A tokenizer re-counting the text counts content and reasoning apart;
	// by default the server's usage gives OSL.
	r.Text, r.ReasoningText = "a b c", "x y z w"
	v = ComputeWith(r, wordCounter{}, Counting{Retokenize: true})
	if v.Output != 3 || v.Reasoning != 4 || v.OSL != 7 {
		t.Errorf("tokenizer: output %v reasoning %v OSL %v, want 3 4 7", v.Output, v.Reasoning, v.OSL)
	}
	v = Compute(r, wordCounter{})
	if v.Output != 8 || v.Reasoning != 2 || v.OSL != 10 || v.TokenizerOSL != 7 {
		t.Errorf("usage: output %v reasoning %v OSL %v tokenizer %v, want 8 2 10 7", v.Output, v.Reasoning, v.OSL, v.TokenizerOSL)
	}

	// A failure keeps its input length only.
	f := ComputeFailed(&Record{SentNs: ms, EndNs: 2 * ms, InputText: "one two", Err: &Error{Type: "x"}}, wordCounter{})
	if f.ErrorISL != 2 || !math.IsNaN(f.Latency) || !math.IsNaN(f.ISL) || !math.IsNaN(f.Usage[0]) {
		t.Errorf("failed: %+v", f)
	}
	if f := ComputeFailed(&Record{Err: &Error{Type: "x"}}, nil); !math.IsNaN(f.ErrorISL) {
		t.Errorf("failed without a known prompt: error_isl %v, want NaN", f.ErrorISL)
	}
}

func TestParseGoodput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    []SLO
		wantErr string
	}{
		{"time_to_first_token:200 inter_token_latency:20", []SLO{{TTFT, 200}, {ITL, 20}}, ""},
		{"request_latency=1500,output_token_throughput_per_user:30", []SLO{{RequestLatency, 1500}, {PerUser, 30}}, ""},
		{"", nil, ""},
		{"ttft:200", nil, `unknown metric "ttft"`},
		{"time_to_first_token", nil, "not tag:value"},
		{"time_to_first_token:abc", nil, "not a non-negative number"},
		{"time_to_first_token:-1", nil, "not a non-negative number"},
		{"time_to_first_token:1 time_to_first_token:2", nil, "given twice"},
	}
	for _, tc := range cases {
		got, err := ParseGoodput(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseGoodput(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseGoodput(%q): %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParseGoodput(%q) (-want +got)\n%s", tc.in, d)
		}
	}
}

func TestGood(t *testing.T) {
	t.Parallel()
	slos := []SLO{{TTFT, 200}, {ITL, 20}, {PerUser, 40}}
	cases := []struct {
		name string
		v    Values
		want bool
	}{
		{"meets all", Values{TTFT: 150, ITL: 20, PerUser: 50}, true},
		{"TTFT over", Values{TTFT: 201, ITL: 10, PerUser: 100}, false},
		{"throughput floor missed", Values{TTFT: 10, ITL: 10, PerUser: 39}, false},
		{"missing ITL fails its SLO", Values{TTFT: 10, ITL: math.NaN(), PerUser: 100}, false},
	}
	for _, tc := range cases {
		if got := Good(&tc.v, slos); got != tc.want {
			t.Errorf("%s: Good = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func FuzzParseGoodput(f *testing.F) {
	for _, s := range []string{"time_to_first_token:200 inter_token_latency:20", "request_latency=1", ":", "a:b:c", "time_to_first_token:1e309"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slos, err := ParseGoodput(s)
		if err != nil {
			return
		}
		for _, o := range slos {
			if _, ok := defOf(o.Tag); !ok || o.Value < 0 || math.IsNaN(o.Value) || math.IsInf(o.Value, 0) {
				t.Fatalf("ParseGoodput(%q) accepted %+v", s, o)
			}
		}
	})
}

func TestHTTPDefsSize(t *testing.T) {
	if len(HTTPDefs) != httpTags {
		t.Fatalf("len(HTTPDefs) = %d, httpTags = %d", len(HTTPDefs), httpTags)
	}
}

// TestComputeLatencyEnd: request_latency ends where AIPerf's
// RequestLatencyMetric ends it, at the last response that carried content
// (text or reasoning): a trailing usage-only chunk and [DONE] arriving
// later move neither it nor what follows from it (decode, ITL, the E2E
// throughput); a response that was not streamed ends at its last byte.
func TestComputeLatencyEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                      string
		r                         Record
		latency, fromSend, decode float64
	}{
		{"usage chunk and [DONE] 30 ms after the last token",
			Record{Streamed: true, SentNs: 100 * ms, EndNs: 190 * ms, TokenNs: []int64{120 * ms, 140 * ms, 160 * ms},
				FirstContentNs: 120 * ms, Usage: Usage{Present: true, CompletionTokens: 3}},
			60, 60, 40},
		{"last token is the last byte",
			Record{Streamed: true, SentNs: 100 * ms, EndNs: 160 * ms, TokenNs: []int64{120 * ms, 160 * ms}, FirstContentNs: 120 * ms},
			60, 60, 40},
		{"reasoning only: its last event ends it",
			Record{Streamed: true, SentNs: 100 * ms, EndNs: 200 * ms, TokenNs: []int64{130 * ms, 150 * ms}, ReasoningEvents: 2},
			50, 50, 20},
		{"not streamed: the last byte",
			Record{SentNs: 100 * ms, EndNs: 250 * ms, TokenNs: []int64{250 * ms}},
			150, 150, math.NaN()},
	} {
		v := Compute(&tc.r, nil)
		for _, c := range []struct {
			tag  Tag
			want float64
		}{{RequestLatency, tc.latency}, {LatencyFromSend, tc.fromSend}, {DecodeDuration, tc.decode}} {
			got := v.Get(c.tag)
			if !(math.Abs(got-c.want) < 1e-9 || math.IsNaN(got) && math.IsNaN(c.want)) {
				t.Errorf("%s: %s = %v, want %v", tc.name, c.tag, got, c.want)
			}
		}
	}
}

// TestLagLeavesOutTheCapsWaits: a request the prefill cap or a concurrency
// slot held is not the client falling behind; what is left is.
func TestLagLeavesOutTheCapsWaits(t *testing.T) {
	for _, tt := range []struct {
		name                  string
		intended, issued      int64
		slotWait, prefillWait int64
		want                  int64
	}{
		{"on time", 100 * ms, 100 * ms, 0, 0, 0},
		{"the client late", 100 * ms, 112 * ms, 0, 0, 12 * ms},
		{"held by the prefill cap", 100 * ms, 586 * ms, 0, 486 * ms, 0},
		{"held by a concurrency slot, then late", 100 * ms, 350 * ms, 245 * ms, 0, 5 * ms},
		{"both caps", 100 * ms, 400 * ms, 100 * ms, 200 * ms, 0},
	} {
		r := Record{IntendedNs: tt.intended, IssuedNs: tt.issued, SentNs: tt.issued, SlotWaitNs: tt.slotWait, PrefillWaitNs: tt.prefillWait}
		if got := r.LagNs(); got != tt.want {
			t.Errorf("%s: lag %d ns, want %d", tt.name, got, tt.want)
		}
	}
}
