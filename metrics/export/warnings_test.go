package export

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/surgebench/surge/metrics"
)

// warningTexts are the warnings surge writes, as their producers word them
// (the metrics and loadgen packages, the composer, merge), with wide
// numbers, and the code and line each gets.
var warningTexts = []struct{ text, code, line string }{
	{"client read delay p99 12345.67 ms exceeds 1 ms: the client was late although the machine was mostly idle (the client used 3% of its CPU, other processes 4%), and with read timestamps its latencies are inflated by up to that much (use --timestamps kernel)",
		"read-delay", "client read delay p99 12345.67 ms > 1 ms: the client was late on an idle machine; latencies include it (--timestamps kernel)"},
	{"client read delay p99 1.91 ms exceeds 1 ms: this machine was busy (other processes used 97% of its CPU, the client 3%): timings include that; token times came from the kernel's receive stamps, so latencies do not include that delay, except for tokens read together with later ones, which carry the later arrival (send times may include it: see http_req_blocked)",
		"read-delay", "client read delay p99 1.91 ms > 1 ms: this machine was busy (kernel stamps keep it out)"},
	{"31 of 881 first tokens (3.5%) were read together with the next token: a read carries its last segment's arrival time, so their TTFT may be late by up to one token gap (the client was busy when they arrived, or the server sent the two together, which delays nothing)",
		"first-shared", "31 of 881 first tokens (3.5%) read with the next: their TTFT may be late by up to one ITL"},
	{"scheduler lag p99 123.4 ms exceeds 10 ms: the client fell behind its schedule",
		"sched-lag", "scheduler lag p99 123.4 ms > 10 ms: the client fell behind its schedule"},
	{"achieved request rate 812.34/s is 81.2% of the schedule's 1000.12/s (--request-rate 1000): the client fell behind",
		"rate-behind", "achieved request rate 812.34/s is 81.2% of the schedule's 1000.12/s: the client fell behind"},
	{"the client calibration (12000 tokens/s timed honestly) was measured with GOMAXPROCS 16 on 16 CPUs; this run's client has GOMAXPROCS 2 on 2 CPUs: it may time less than that honestly (run surge calibrate with the cores the run has)",
		"cores", "calibrated with GOMAXPROCS 16 on 16 CPUs, this run has GOMAXPROCS 2 on 2 CPUs: run surge calibrate on these cores"},
	{"the wall clock moved 12.3 ms against the monotonic clock during the run: kernel timestamps after the step are off by up to that much",
		"clock-step", "the wall clock stepped 12.3 ms during the run: kernel timestamps after it are off by that"},
	{"--concurrency 100000 may not fit: open files 1024 (hard 4096); requests past it fail on the client's side (client_fd_exhausted): raise ulimit -n (the hard limit too) or lower the concurrency",
		"fd-limit", "--concurrency 100000 may not fit the open-file limit: raise ulimit -n or lower it"},
	{"the server cut a prompt: it counted 1024 prompt tokens (usage.prompt_tokens) where surge sent 32000; the likely cause is its context length (the summary counts such requests)",
		"prompt-cut", "the server cut a prompt: 32000 tokens sent, 1024 kept (its context length?)"},
	{metrics.TruncationWarning(1234, 12345, 32000, 1024, metrics.InputFromUsage),
		"prompt-cut", "the server cut 1234 of 12345 prompts: avg 32000 tokens sent, 1024 kept (its context length?)"},
	{metrics.TokenCountWarning(1234, 999, false, metrics.SourceUsage),
		"osl-count", "output tokens: tokenizer 1234 vs server usage 999 (+23.5%): give the model's with --tokenizer"},
	{metrics.TokenCountWarning(99999, 123456, true, metrics.SourceTokenizer),
		"osl-count", "output tokens: tokenizer 99999 vs server usage 123456 (-19.0%): the streamed text re-tokenized"},
	{"1234 of 5678 chunks carried more than one token (by the server's per-chunk usage): ITL and per-user throughput are per token (the decode time over the tokens after the first chunk's), inter_chunk_latency per chunk",
		"chunks", "1234 of 5678 chunks carried several tokens: ITL is per token, inter_chunk_latency per chunk"},
	{"1234 requests had more tokens than chunks (99999 tokens in 5678 chunks in all): some chunks carried several tokens (speculative decoding or batched sends); without per-chunk usage the first chunk counts as one token, so ITL may be a little short; ITL and per-user throughput are per token",
		"chunks", "1234 requests had more tokens than chunks: without per-chunk usage ITL may be a little short"},
	{"1234 requests had more tokens than chunks (99999 tokens in 5678 chunks in all): their text has multi-byte characters, and a server that sends only whole characters (llama.cpp's) holds a token back until the next one completes its character, then sends both in one chunk; the tokenizer's count of each chunk leaves the first chunk's tokens out of ITL; ITL and per-user throughput are per token",
		"chunks", "1234 requests had more tokens than chunks: ITL is per token, inter_chunk_latency per chunk"},
	{metrics.BatchedWarning(&metrics.TokensPerEvent{Batched: 12345, Counted: 12346, Single: 2, Mean: 12.345, Max: 999, FirstShare: 0.876,
		Hist: []int64{1, 2, 3, 4, 5, 6, 7}, Buckets: []string{"1", "2", "3-4", "5-8", "9-16", "17-32", "33+"}}),
		"batched", "12345 of 12346 answers came in batches (the first event 88% of an answer): ITL is the delivery cadence"},
	{metrics.UsageWarning(&metrics.UsageDistrust{Sign: metrics.SignSameUsage, Detail: "requests 0123456789abcdef and fedcba9876543210 both say 100 prompt and 100 completion tokens, where surge counts 1234 and 9 output tokens in their different texts"}, true),
		"usage", "the server's usage is not believable (same_usage): token counts come from surge's tokenizer"},
	{metrics.UsageWarning(&metrics.UsageDistrust{Sign: metrics.SignOverCap, Detail: "request r asked for at most 16 output tokens and its usage says 100 completion tokens, where surge counts 17 in the text it got"}, false),
		"usage", "the server's usage is not believable (over_cap): token counts come from the text events"},
	{"responses run past the requested output length: request 123456 asked for 128 tokens (max_completion_tokens), got 1024 tokens; the server likely ignores max_completion_tokens (some llama.cpp builds do): try --use-legacy-max-tokens, which sends max_tokens",
		"over-cap", "answers ran past their cap: asked 128 by max_completion_tokens, got 1024; try --use-legacy-max-tokens"},
	{"responses run past the requested output length: request 7 asked for 128 tokens (max_tokens), got 512 tokens, and the cap guard ended it; the server likely ignores max_tokens; check the server's own output limit",
		"over-cap", "answers ran past their cap: asked 128 by max_tokens, got 512; check the server's output limit"},
	{"the tokenizer of model Qwen/Qwen3-235B-A22B-Instruct-2507: Qwen/Qwen3-235B-A22B-Instruct-2507@main: downloading from https://huggingface.co: dial tcp: no such host: prompts are built with the embedded Qwen3 tokenizer and token counts come from the server's usage (give --tokenizer PATH, or --tokenizer builtin to skip this look-up)",
		"tokenizer", "embedded Qwen3 tokenizer used, not Qwen/Qwen3-235B-A22B-Instruct-2507's: Qwen/Qwen3-235B-A22B-Instruct-2507@main: downloading from https://huggingface.co: dial tcp: no such host (give --tokenizer PATH, or --tokenizer builtin to skip the look-up)"},
	{`no --model given and http://127.0.0.1:8000/v1/models named none (HTTP 404: "not found"): sending model "mock"`,
		"no-model", `no --model given and http://127.0.0.1:8000/v1/models named none (HTTP 404: "not found"): sending model "mock"`},
	{"the server at 127.0.0.1:9990 answered the preflight 0.4 s before the run, then refused 30 connections: it went away after the preflight (stopped or crashed)",
		"server-gone", "the server at 127.0.0.1:9990 answered the preflight, then refused 30 connections: it went away"},
	{"--streaming: endpoint type embeddings does not stream; its requests are sent and read whole",
		"no-stream", "--streaming: endpoint type embeddings does not stream; its requests are read whole"},
	{"3 responses were redirects not followed: following would resend the request as a GET without its body",
		"redirect", "3 redirects not followed: following would resend them as GETs without a body"},
	{"1 response was a redirect (not followed: --follow-redirects)", "redirect", "1 redirects not followed (--follow-redirects follows them)"},
	{"the server redirected a request to another origin, https://other.example:8443: followed without credential headers, so the results include that server's answers",
		"cross-origin", "a request was redirected to https://other.example:8443: its answers are in the results"},
	{"--control-addr 0.0.0.0:9090 accepts connections from other machines: anyone who can reach it and has the token steers the run",
		"control-open", "--control-addr 0.0.0.0:9090 accepts other machines: anyone with its token steers the run"},
	{"knee at concurrency 16: p95 TTFT rose more than 2× over the first stage while throughput gained < 10%; recommended operating point: concurrency 8",
		"knee", "knee at concurrency 16; recommended operating point: concurrency 8"},
	{"knee inconclusive: run more requests per stage (491 suggested): at request_rate 16 the stages' 95% intervals could not tell whether p95 TTFT rose more than 2× and throughput gained < 10%; no knee or operating point is named",
		"knee-unsure", "knee inconclusive at request_rate 16: run more requests per stage (491 suggested)"},
	{"3 sessions ended at a session limit: arguments 4 MiB, 128 calls, context 2097152 tokens or 32 MiB (a call's arguments past --tool-max-argument-bytes, a reply's calls past --tool-max-calls-per-reply, the context past --session-max-context-tokens or --session-max-context-bytes; the session_limit errors say which): the server sent what no agent would",
		"session-limit", "3 sessions ended at a limit: arguments 4 MiB, 128 calls, context 2097152 tokens or 32 MiB"},
	{"12 tool-call ids the server sent were missing, repeated or longer than 256 bytes: surge sent ids of its own (call_surge_N) in their place, so each tool result answers one call",
		"tool-ids", "12 tool-call ids missing, repeated or over 256 bytes: sent back as surge's own (call_surge_N)"},
	{"stopped early: --stop-on ttft:p99>500@10s: ttft was 812.3 for 10s (since 1m2s)",
		"stopped", "stopped early: --stop-on ttft:p99>500@10s: ttft was 812.3 for 10s (since 1m2s)"},
	{"shard 2/3: started 1.234s late for --start-at 2026-05-01T12:00:00Z: its schedule runs that much behind the other shards' (not shifted to hide it; run_info late_ms)",
		"shard-late", "shard 2/3: started 1.234s late for --start-at: its schedule runs that far behind the others'"},
	{"shards started late for --start-at: shard 0 by 12 ms, shard 2 by 1234 ms", "shard-late", "shards started late for --start-at: shard 0 by 12 ms, shard 2 by 1234 ms"},
	{"shard 1/3: scheduler lag p99 12.0 ms exceeds 10 ms: the client fell behind its schedule",
		"sched-lag", "shard 1/3: scheduler lag p99 12.0 ms > 10 ms: the client fell behind its schedule"},
	{"the shards' windows do not overlap as one plan's: they ran 8.0 s together of 10.5 s (shard 0 0.0–10.0 s, shard 1 2.5–10.5 s); the throughputs, over the 10.5 s, read up to 5% low",
		"shard-windows", "the shards ran apart: they ran 8.0 s together of 10.5 s; the throughputs read up to 5% low"},
	{"percentiles from the shards' merged t-digests (not every shard has its profile_export.jsonl)",
		"digests", "percentiles from the shards' merged t-digests (a shard has no profile_export.jsonl)"},
	{metrics.EmptyResponsesWarning(12), "empty", "12 answers ended with no tokens: counted as errors, outside latency, OSL and goodput"},
	{"network latency: no handshake probe succeeded, so there are no network_adjusted_* metrics",
		"network", "network latency: no handshake probe succeeded, so no network_adjusted_* metrics"},
	{"network latency: the 12.5 ms round trip subtracted exceeds some measured latencies (clamped at 0): it may be more than their network leg",
		"network", "network latency: the 12.5 ms round trip exceeds some latencies (clamped at 0)"},
	{"trim auto: no steady state found (the run is too short to tell a warm-up from a steady state); the whole run is reported",
		"trim", "trim auto: no steady state found; the whole run is reported"},
	{"trim auto: time to first token, inter token latency, request latency, output sequence length and the output token and request throughputs (with their intervals) are the steady state's: the 1234 requests sent in 12.5–98.0 s of the run (12.5 s of warm-up and 2.0 s of drain cut, mser-5); every other number covers the whole run",
		"trim", "trim auto: latencies and throughputs are the steady state's (1234 requests, 12.5–98.0 s of the run)"},
	{"--scenario inferencex-agentx-mvp lock broken under --unsafe-override: it runs 4 requests, not at least 900 s; the run is not a valid submission",
		"scenario-lock", "--scenario inferencex-agentx-mvp lock broken (--unsafe-override): not a valid submission"},
	{"a caveat no row knows yet, long enough: with its detail after the colon, and the fix at its end",
		"other", "a caveat no row knows yet, long enough: with its detail after the colon, and the fix at its end"},
}

// TestWarningLines: every warning surge writes gets its code and a line,
// "warning [code]: line", printed whole: on one line where it fits the
// width, wrapped at spaces otherwise, every word kept (the fix a line ends
// with most of all).
func TestWarningLines(t *testing.T) {
	for _, tc := range warningTexts {
		w := ClassifyWarning(tc.text)
		if w.Code != tc.code || w.Line != tc.line {
			t.Errorf("%q:\n got [%s] %q\nwant [%s] %q", tc.text, w.Code, w.Line, tc.code, tc.line)
		}
		if s := w.String(); !strings.HasPrefix(s, "warning ["+tc.code+"]: ") {
			t.Errorf("%q: no code", s)
		}
		if w.Text != tc.text {
			t.Errorf("%q: the full text is not kept", tc.text)
		}
		for _, width := range []int{80, 120} {
			printed := FormatWarning(tc.text, false, width)
			lines := strings.Split(strings.TrimSuffix(printed, "\n"), "\n")
			for _, l := range lines {
				// A single word longer than the line (a URL) may stand alone.
				if n := utf8.RuneCountInString(l); n > width && strings.Contains(strings.TrimSpace(l), " ") {
					t.Errorf("%d columns: %q is %d wide", width, l, n)
				}
			}
			if utf8.RuneCountInString(w.String()) <= width && len(lines) != 1 {
				t.Errorf("%d columns: %q fits one line but was wrapped:\n%s", width, w.String(), printed)
			}
			if got := strings.Join(strings.Fields(printed), " "); got != w.String() {
				t.Errorf("%d columns: a word was lost:\n got %q\nwant %q", width, got, w.String())
			}
		}
	}
}

// TestWarningsOnce: the same warning is printed once; of the prompts the
// server cut, the summary's count replaces the live first one.
func TestWarningsOnce(t *testing.T) {
	live := warningTexts[8].text // the server cut a prompt (live)
	got := Warnings([]string{live, warningTexts[3].text, live, warningTexts[9].text, warningTexts[3].text})
	if len(got) != 2 || got[0].Code != "prompt-cut" || got[0].Text != warningTexts[9].text || got[1].Code != "sched-lag" {
		t.Errorf("got %+v, want the summary's prompt-cut then sched-lag, once each", got)
	}
	var b bytes.Buffer
	s := &metrics.Summary{Warnings: []string{live, live}}
	Console(&b, "t", s, Verbose(true))
	if n := strings.Count(b.String(), "warning [prompt-cut]"); n != 1 || !strings.Contains(b.String(), "\n    the server cut a prompt:") || !hasProse(b.String(), live) {
		t.Errorf("-v: want the line once and the full text under it:\n%s", b.String())
	}
}

// TestWarningKindsAreDocumented: docs/warnings.md has a row for every code.
func TestWarningKindsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/warnings.md")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{"other": true}
	for _, k := range warningKinds() {
		codes[k.Code] = true
	}
	rows := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllStringSubmatch(string(doc), -1)
	documented := map[string]bool{}
	for _, r := range rows {
		documented[r[1]] = true
		if !codes[r[1]] {
			t.Errorf("docs/warnings.md documents %s, which no WarningKind has", r[1])
		}
	}
	for c := range codes {
		if !documented[c] {
			t.Errorf("docs/warnings.md has no row for code %s", c)
		}
	}
}
