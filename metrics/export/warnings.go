package export

import (
	"regexp"
	"sync"

	"github.com/surgebench/surge/internal/sanitize"
)

// Warning is one caveat as the console prints it: a short code (its row
// in docs/warnings.md), one line, and the full text the summary keeps (the
// JSON's warnings, and the console's with -v).
type Warning struct {
	Code, Line, Text string
	// InTable is set when a sweep's stage table says it already (the knee).
	InTable bool
}

// String is the console's line: "warning [code]: line", whole (the
// console wraps it to the terminal, never cuts it).
func (w Warning) String() string { return "warning [" + w.Code + "]: " + w.Line }

// A WarningKind is one code: the warning texts it covers (Match, on the
// full text) and the line the console prints for them. To add a warning,
// add a row here and to docs/warnings.md (TestWarningKindsAreDocumented
// checks both); a text no row matches still prints, whole, as code
// "other".
type WarningKind struct {
	Code  string
	Match *regexp.Regexp
	// Line builds the console's line from Match's groups (m[0] the match).
	Line func(m []string) string
	// Last: only the last warning of this code is printed (a live caveat
	// that the summary's own, counted one restates).
	Last bool
	// InTable: a sweep's stage table says it, so the console does not
	// repeat it among the warnings.
	InTable bool
}

// The warnings' patterns are compiled on first use, by a run that has a
// warning to print: at init they were ≈ 1 ms (0.5 MB allocated) of the
// start of every surge process, surge --version included.
var groupRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\d`) })

// tmpl is a Line that expands $1… in t with Match's groups.
func tmpl(t string) func([]string) string {
	return func(m []string) string {
		return groupRef().ReplaceAllStringFunc(t, func(g string) string {
			if i := int(g[1] - '0'); i < len(m) {
				return m[i]
			}
			return g
		})
	}
}

func wkind(code, match string, line func([]string) string) WarningKind {
	return WarningKind{Code: code, Match: regexp.MustCompile(match), Line: line}
}

// busy shortens the machine-load clause of a read delay warning.
var busy = map[string]string{
	"the client was saturated":                                 "the client was saturated",
	"this machine was busy":                                    "this machine was busy",
	"the client was late although the machine was mostly idle": "the client was late on an idle machine",
}

// warningKinds are the codes, in docs/warnings.md's order; the first row
// whose Match matches a text names it. They are built on first use (see
// groupRef).
var warningKinds = sync.OnceValue(func() []WarningKind {
	return []WarningKind{
		// The client's own timing.
		wkind("read-delay", `^client read delay p99 (\S+) ms exceeds (\d+) ms: (the client was saturated|this machine was busy|the client was late although the machine was mostly idle)(.*--timestamps kernel)?`,
			func(m []string) string {
				s := "client read delay p99 " + m[1] + " ms > " + m[2] + " ms: " + busy[m[3]]
				if m[4] != "" {
					return s + "; latencies include it (--timestamps kernel)"
				}
				return s + " (kernel stamps keep it out)"
			}),
		wkind("first-shared", `^(\d+) of (\d+) first tokens \((\S+)\) were read together with the next token`,
			tmpl("$1 of $2 first tokens ($3) read with the next: their TTFT may be late by up to one ITL")),
		wkind("sched-lag", `^scheduler lag p99 (\S+) ms exceeds (\d+) ms`,
			tmpl("scheduler lag p99 $1 ms > $2 ms: the client fell behind its schedule")),
		wkind("omission", `^coordinated omission: from the schedule's intended start, (.+?) p(\S+) is (\S+) ms against (\S+) ms from the issue \((\S+),`,
			tmpl("coordinated omission: $1 p$2 is $3 ms from the intended start, $4 ms from the issue ($5): see effective_*")),
		wkind("littles-law", `^Little's law(.*?): rate × time in flight says (\S+) requests were in flight on average (?:of|, more than) the concurrency of (\S+)`,
			tmpl("Little's law$1: $2 requests in flight on average against a concurrency of $3: a client bottleneck or a measurement fault")),
		wkind("rate-behind", `^achieved request rate (\S+) is (\S+) of the schedule's (\S+) \(--request-rate (\S+)\)`,
			tmpl("achieved request rate $1 is $2 of the schedule's $3: the client fell behind")),
		wkind("cores", `^the client calibration \((\S+) tokens/s timed honestly\) was measured with (.+?); this run's client has (.+?):`,
			tmpl("calibrated with $2, this run has $3: run surge calibrate on these cores")),
		wkind("clock-step", `^the wall clock moved (\S+) ms against the monotonic clock`,
			tmpl("the wall clock stepped $1 ms during the run: kernel timestamps after it are off by that")),
		wkind("fd-limit", `^--concurrency (\d+) may not fit:`,
			tmpl("--concurrency $1 may not fit the open-file limit: raise ulimit -n or lower it")),
		// Token counts.
		{Code: "prompt-cut", Match: regexp.MustCompile(`^the server cut (?:a prompt: it counted (\d+) prompt tokens|the prompt of (\d+) of (\d+) requests: it counted (\d+) prompt tokens on average) \(usage\.prompt_tokens\) where surge sent (\d+)`),
			Line: func(m []string) string {
				if m[1] != "" {
					return "the server cut a prompt: " + m[5] + " tokens sent, " + m[1] + " kept (its context length?)"
				}
				return "the server cut " + m[2] + " of " + m[3] + " prompts: avg " + m[5] + " tokens sent, " + m[4] + " kept (its context length?)"
			}, Last: true},
		// The token-count warnings' texts come from metrics' producers
		// (TokenCountWarning, TruncationWarning, EmptyResponsesWarning), which
		// warnings_test.go calls: a change of their words fails it.
		wkind("osl-count", `^output token counts disagree: the tokenizer counts (\S+), the server's usage (\S+) \((\S+)\)(; the tokenizer that counted is not known)?`,
			func(m []string) string {
				s := "output tokens: tokenizer " + m[1] + " vs server usage " + m[2] + " (" + m[3] + ")"
				if m[4] != "" {
					return s + ": give the model's with --tokenizer"
				}
				return s + ": the streamed text re-tokenized"
			}),
		wkind("chunks", `^(\d+) of (\d+) chunks carried more than one token`,
			tmpl("$1 of $2 chunks carried several tokens: ITL is per token, inter_chunk_latency per chunk")),
		wkind("chunks", `^(\d+) requests had more tokens than chunks(?:.*(leaves the first chunk's tokens out of ITL))?`,
			func(m []string) string {
				if m[2] != "" {
					return m[1] + " requests had more tokens than chunks: ITL is per token, inter_chunk_latency per chunk"
				}
				return m[1] + " requests had more tokens than chunks: without per-chunk usage ITL may be a little short"
			}),
		wkind("batched", `^the server sends its tokens in batches: (\d+) of (\d+) streamed answers came several tokens an event \((\S+) tokens an event on average, up to (\d+); the first event carried (\S+) of an answer`,
			tmpl("$1 of $2 answers came in batches (the first event $5 of an answer): ITL is the delivery cadence")),
		wkind("usage", `^the server's usage is not believable \((\S+)\): .*?: token counts come from (surge's tokenizer|the text events)`,
			tmpl("the server's usage is not believable ($1): token counts come from $2")),
		wkind("over-cap", `^responses run past the requested output length: request \S+ asked for (\d+) tokens \((\S+)\), got (\d+)(.*--use-legacy-max-tokens)?`,
			func(m []string) string {
				s := "answers ran past their cap: asked " + m[1] + " by " + m[2] + ", got " + m[3]
				if m[4] != "" {
					return s + "; try --use-legacy-max-tokens"
				}
				return s + "; check the server's output limit"
			}),
		wkind("empty", `^(\d+) responses ended with no tokens`,
			tmpl("$1 answers ended with no tokens: counted as errors, outside latency, OSL and goodput")),
		wkind("tokenizer", `(?s)^(?:the tokenizer of model|--tokenizer) (\S+): (.*): prompts are built with the embedded Qwen3 tokenizer`,
			tmpl("embedded Qwen3 tokenizer used, not $1's: $2 (give --tokenizer PATH, or --tokenizer builtin to skip the look-up)")),
		// The target and the transport.
		wkind("no-model", `(?s)^no --model given and (\S+)/v1/models named none \((.*)\): sending model "([^"]*)"`,
			tmpl(`no --model given and $1/v1/models named none ($2): sending model "$3"`)),
		wkind("server-gone", `^the server at (\S+) answered the preflight (\S+) s before the run, then refused (\d+) connections`,
			tmpl("the server at $1 answered the preflight, then refused $3 connections: it went away")),
		wkind("no-stream", `^--streaming: endpoint type (\S+) does not stream`,
			tmpl("--streaming: endpoint type $1 does not stream; its requests are read whole")),
		wkind("redirect", `^(\d+) (?:responses were redirects|response was a redirect) not followed`,
			tmpl("$1 redirects not followed: following would resend them as GETs without a body")),
		wkind("redirect", `^(\d+) (?:responses were redirects|response was a redirect) \(not followed`,
			tmpl("$1 redirects not followed (--follow-redirects follows them)")),
		wkind("cross-origin", `^the server redirected a request to another origin, (\S+):`,
			tmpl("a request was redirected to $1: its answers are in the results")),
		wkind("control-open", `^--control-addr (\S+) accepts connections from other machines`,
			tmpl("--control-addr $1 accepts other machines: anyone with its token steers the run")),
		wkind("network", `^network latency: no handshake probe succeeded`,
			tmpl("network latency: no handshake probe succeeded, so no network_adjusted_* metrics")),
		wkind("network", `^network latency: the (\S+) ms round trip subtracted exceeds some`,
			tmpl("network latency: the $1 ms round trip exceeds some latencies (clamped at 0)")),
		// The plan and its stages.
		{Code: "knee", Match: regexp.MustCompile(`^knee at (\S+) (\S+): .*recommended operating point: (\S+) (\S+)$`),
			Line: tmpl("knee at $1 $2; recommended operating point: $3 $4"), InTable: true},
		{Code: "knee-unsure", Match: regexp.MustCompile(`^knee inconclusive: run more requests per stage \((\d+) suggested\): at (\S+) (\S+)`),
			Line: tmpl("knee inconclusive at $2 $3: run more requests per stage ($1 suggested)"), InTable: true},
		wkind("stopped", `^stopped early: (.*)`, tmpl("stopped early: $1")),
		wkind("trim", `^trim auto: no steady state found`, tmpl("trim auto: no steady state found; the whole run is reported")),
		wkind("trim", `^trim auto: .*: the (\d+) requests sent in (\S+) s of the run`,
			tmpl("trim auto: latencies and throughputs are the steady state's ($1 requests, $2 s of the run)")),
		wkind("scenario-lock", `^--scenario (\S+) lock broken under --unsafe-override: `,
			tmpl("--scenario $1 lock broken (--unsafe-override): not a valid submission")),
		wkind("session-limit", `^(\d+) sessions? ended at a session limit: arguments (.+?), (\d+) calls, context (\d+) tokens or (.+?) \(`,
			tmpl("$1 sessions ended at a limit: arguments $2, $3 calls, context $4 tokens or $5")),
		wkind("tool-ids", `^(\d+) tool-call ids? the server sent (?:were|was) missing, repeated or longer than (\d+) bytes`,
			tmpl("$1 tool-call ids missing, repeated or over $2 bytes: sent back as surge's own (call_surge_N)")),
		// Shards.
		wkind("shard-late", `^started (\S+) late for --start-at (\S+):`,
			tmpl("started $1 late for --start-at: its schedule runs that far behind the others'")),
		wkind("shard-late", `^shards started late for --start-at: (.*)`, tmpl("shards started late for --start-at: $1")),
		wkind("shard-windows", `^the shards' windows do not overlap as one plan's: (.*?) \(shard .*; the throughputs, over the \S+ s, read up to (\d+)% low`,
			tmpl("the shards ran apart: $1; the throughputs read up to $2% low")),
		wkind("digests", `^percentiles from the shards' merged t-digests`,
			tmpl("percentiles from the shards' merged t-digests (a shard has no profile_export.jsonl)")),
	}
})

// shardPrefix is the "shard i/N: " a merged export's warnings carry from
// their shard (and a shard's own lateness).
var shardPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^shard \d+/\d+: `) })

// ClassifyWarning is text's code and console line (code "other", the
// whole text, when no WarningKind matches).
func ClassifyWarning(text string) Warning {
	w, _ := classify(text)
	return w
}

func classify(text string) (Warning, *WarningKind) {
	prefix := shardPrefix().FindString(text)
	body := text[len(prefix):]
	kinds := warningKinds()
	for i := range kinds {
		k := &kinds[i]
		if m := k.Match.FindStringSubmatch(body); m != nil {
			return Warning{Code: k.Code, Line: prefix + k.Line(m), Text: text, InTable: k.InTable}, k
		}
	}
	return Warning{Code: "other", Line: text, Text: text}, nil
}

// Warnings are texts as the console prints them: each line once, and of a
// code that keeps its Last only the last.
func Warnings(texts []string) []Warning {
	var out []Warning
	last := map[string]int{} // code → index in out, for Last kinds
	seen := map[string]bool{}
	for _, t := range texts {
		w, k := classify(t)
		if seen[w.Line] {
			continue
		}
		seen[w.Line] = true
		if k != nil && k.Last {
			if i, ok := last[w.Code]; ok {
				out[i] = w
				continue
			}
			last[w.Code] = len(out)
		}
		out = append(out, w)
	}
	return out
}

// FormatWarning is text as the console prints it: its line, wrapped to
// width columns (≤ 0: DefaultWidth) and, verbose (-v), the full text
// indented under it.
func FormatWarning(text string, verbose bool, width int) string {
	return wrapWarning(ClassifyWarning(text), verbose, width)
}

// wrapWarning writes w, its outside strings (a server's message, a
// model's name, a file's) with their control characters escaped.
func wrapWarning(w Warning, verbose bool, width int) string {
	s := Wrap(sanitize.Line(w.String()), width, 2)
	if verbose && w.Text != w.Line {
		s += Wrap("    "+sanitize.Line(w.Text), width, 2)
	}
	return s
}
