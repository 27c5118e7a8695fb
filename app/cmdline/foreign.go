package cmdline

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// catAIPerf groups, in --help, AIPerf's flags that surge accepts but does
// not implement.
const catAIPerf = "AIPerf flags surge accepts without implementing (each says what surge does)"

// foreignOption is an AIPerf `profile` flag surge accepts, so that an
// AIPerf command line runs unchanged, but does not implement. A value that
// leaves the run as it would be without the flag (neutral: AIPerf's
// default, 0, none) is accepted silently. Any other value is refused (exit
// 2), unless the row is one of the reviewed few whose value has nothing
// to change in surge (AIPerf's process layout, a console or file choice
// surge always makes): those are accepted, with one line on stderr saying
// what surge does.
type foreignOption struct {
	name    string   // AIPerf's names, space-separated, the canonical first
	kind    argKind  // switch, value or list (many)
	path    string   // AIPerf's config path, for input_config
	refuse  bool     // a non-neutral value is a usage error
	neutral []string // values that change nothing
	does    string   // what surge does instead (a clause after "surge")
}

// Kinds and verdicts, to keep the table below to one line a flag.
const (
	fSwitch = argSwitch
	fValue  = argValue
	fList   = argMany
)

// What surge does instead, for the rows that share it.
const (
	noVideo = "sends no video (AIPerf encodes its videos with FFmpeg; surge has no pure-Go video encoder)"
	noWandB = "uploads nothing to Weights & Biases: surge has no W&B client (its upload cannot be tested here); --mlflow-tracking-uri and --otel-url are there"
	// byBisection: AIPerf's Bayesian search and its knobs.
	byBisection = "searches by bisection within SLOs (surge search --slo, --search-recipe max-concurrency-under-sla), not by Bayesian optimisation"
)

func accepted(names string, kind argKind, path, does string, neutral ...string) foreignOption {
	return foreignOption{name: names, kind: kind, path: path, does: does, neutral: neutral}
}

func refused(names string, kind argKind, path, does string, neutral ...string) foreignOption {
	return foreignOption{name: names, kind: kind, path: path, does: does, neutral: neutral, refuse: true}
}

// foreignOptions are the flags of AIPerf's docs/cli-options.md (`aiperf
// profile`) that surge has no option for. A row whose name a real option
// (flags.go) also takes is left out of the command, so a flag implemented
// later simply shadows its row here.
var foreignOptions = []foreignOption{
	// Endpoint
	refused("url-strategy", fValue, "endpoint.url_selection_strategy", "spreads requests over several --url round-robin, AIPerf's only strategy", "round_robin"),
	refused("transport transport-type", fValue, "endpoint.transport", "speaks HTTP only", "http"),
	refused("download-video-content", fSwitch, "endpoint.download_video_content", "benchmarks no video generation endpoints", "false"),
	refused("request-content-type", fValue, "endpoint.request_content_type", "sends JSON bodies only", "application/json"),
	refused("uuid-and-strip", fSwitch, "endpoint.uuid_and_strip", "does not strip repeated images for a server's media cache (it sends them whole each time)", "false"),
	// Tokenizer
	accepted("tokenizer-trust-remote-code", fSwitch, "tokenizer.trust_remote_code", "reads tokenizer.json only and runs no code: the flag has nothing to permit", "false"),
	// Input
	// Prompt
	// Video inputs: AIPerf encodes its videos with FFmpeg; Go has no pure-Go
	// video encoder to stand in (images and audio are options: flags.go).
	refused("video-batch-size batch-size-video", fValue, "input.video.batch_size", noVideo, "1"),
	refused("video-duration", fValue, "input.video.duration", noVideo, "5"),
	refused("video-fps", fValue, "input.video.fps", noVideo, "4"),
	refused("video-width", fValue, "input.video.width", noVideo),
	refused("video-height", fValue, "input.video.height", noVideo),
	refused("video-synth-type", fValue, "input.video.synth_type", noVideo, "moving_shapes"),
	refused("video-format", fValue, "input.video.format", noVideo, "webm"),
	refused("video-codec", fValue, "input.video.codec", noVideo, "libvpx-vp9"),
	refused("video-audio-sample-rate", fValue, "input.video.audio.sample_rate", noVideo, "44100", "44.1"),
	refused("video-audio-num-channels", fValue, "input.video.audio.num_channels", noVideo, "0"),
	refused("video-audio-codec", fValue, "input.video.audio.codec", noVideo),
	refused("video-audio-depth", fValue, "input.video.audio.depth", noVideo, "16"),
	// Load generator
	// Output: files and uploads.
	accepted("plot-required", fSwitch, "output.plot_required", "fails the run when --auto-plot cannot draw its charts, as the flag asks, with or without it", "false"),
	refused("wandb-project", fValue, "output.wandb.project", noWandB),
	refused("wandb-entity", fValue, "output.wandb.entity", noWandB),
	refused("wandb-run-name", fValue, "output.wandb.run_name", noWandB),
	refused("wandb-tag", fList, "output.wandb.tags", noWandB),
	accepted("export-http-trace", fSwitch, "output.export_http_trace", "writes the http_req_* timings of every request to the JSONL always (AIPerf's raw trace_data is not kept)", "false"),
	accepted("show-trace-timing", fSwitch, "output.show_trace_timing", "prints the http_req_* averages under the summary always and keeps every timing in the exports", "false"),
	accepted("server-metrics-formats", fList, "server_metrics_formats", "writes every server metrics format (JSON, CSV, JSONL) always"),
	// Multi-run, sweeps and searches.
	accepted("no-parameter-sweep-same-seed", fSwitch, "sweep.same_seed", "seeds each value of a sweep apart (AIPerf's default; --parameter-sweep-same-seed seeds them alike)", "true"),
	accepted("no-sweep-table", fSwitch, "sweep.no_sweep_table", "prints a sweep's stage table with the summary (console only)", "false"),
	refused("search-space", fList, "search.space", "searches with surge search --slo (the highest load within SLOs), not by Bayesian optimisation"),
	refused("search-metric", fValue, "search.metric", byBisection),
	refused("search-stat", fValue, "search.stat", byBisection),
	refused("search-direction", fValue, "search.direction", byBisection),
	refused("search-initial-points", fValue, "search.initial_points", byBisection),
	refused("search-random-seed", fValue, "search.random_seed", byBisection),
	refused("search-planner", fValue, "search.planner", byBisection),
	refused("optuna-sampler", fValue, "search.optuna_sampler", byBisection),
	refused("optuna-acquisition", fValue, "search.optuna_acquisition", byBisection),
	refused("optuna-terminator", fValue, "search.optuna_terminator", byBisection),
	refused("search-percentile-pooling", fValue, "search.percentile_pooling", byBisection),
	refused("bo-constraint-mode", fValue, "search.constraint_mode", byBisection),
	refused("variant sweep-variant", fList, "sweep.variants", "sweeps one flag at a time (--concurrency or --request-rate lists)"),
	// Accuracy
	refused("accuracy-benchmark", fValue, "accuracy.benchmark", "measures performance only, not accuracy"),
	refused("accuracy-tasks", fList, "accuracy.tasks", "measures performance only, not accuracy"),
	refused("accuracy-n-shots", fValue, "accuracy.n_shots", "measures performance only, not accuracy"),
	refused("accuracy-enable-cot", fSwitch, "accuracy.enable_cot", "measures performance only, not accuracy", "false"),
	refused("accuracy-no-enable-cot", fSwitch, "accuracy.enable_cot", "measures performance only, not accuracy", "false"),
	refused("accuracy-grader", fValue, "accuracy.grader", "measures performance only, not accuracy"),
	refused("accuracy-system-prompt", fValue, "accuracy.system_prompt", "measures performance only, not accuracy"),
	refused("accuracy-verbose", fSwitch, "accuracy.verbose", "measures performance only, not accuracy", "false"),
	// AIPerf's own processes.
	accepted("record-processor-service-count record-processors", fValue, "service.record_processor_service_count", "has no record processor processes: metrics are computed in one shard per CPU, so no count sets them"),
	refused("api-port", fValue, "service.api_port", "serves no metrics API (its live controls are --control-addr)"),
	refused("api-host", fValue, "service.api_host", "serves no metrics API (its live controls are --control-addr)"),
	accepted("stats-interval", fValue, "service.stats_interval", "updates the dashboard ten times a second and prints one --ui simple line a second (console only)"),
	accepted("workers-max max-workers", fValue, "service.workers_max", "has no worker processes: each request runs in its own goroutine, so no count bounds them"),
	accepted("zmq-host", fValue, "service.zmq_host", "has no ZMQ services: nothing listens or connects"),
	accepted("zmq-ipc-path", fValue, "service.zmq_ipc_path", "has no ZMQ services: nothing listens or connects"),
	accepted("zmq-dual-bind", fSwitch, "service.zmq_dual_bind", "has no ZMQ services: nothing listens or connects", "false"),
}

// names returns the row's flag names, the canonical first.
func (o *foreignOption) names() []string { return strings.Fields(o.name) }

// foreignFlags are the rows whose names no real option takes, each bound
// to c.Foreign.
func foreignFlags(c *Config, taken map[string]bool) []cli.Flag {
	var out []cli.Flag
	for i := range foreignOptions {
		o := &foreignOptions[i]
		names := o.names()
		if taken[names[0]] {
			continue
		}
		var aliases []string
		for _, n := range names[1:] {
			if !taken[n] {
				aliases = append(aliases, n)
			}
		}
		// Hidden: --help-aiperf lists them (WriteAIPerfHelp), so that
		// --help shows surge's own flags.
		g := cli.GenericFlag{Category: catAIPerf, Name: names[0], Aliases: aliases, Hidden: true,
			Usage: "AIPerf's; surge " + o.does, Value: &foreignValue{c: c, name: names[0], kind: o.kind}}
		if o.kind == argSwitch {
			out = append(out, &switchFlag{g, namesOf(g.Name, g.Aliases)})
			continue
		}
		out = append(out, NewValueFlag(g))
	}
	return out
}

// HelpAIPerfFlag is the flag that asks for WriteAIPerfHelp's list.
const HelpAIPerfFlag = "help-aiperf"

// WriteAIPerfHelp lists AIPerf's profile flags that surge accepts without
// implementing (hidden from --help): each name, its argument, whether a
// value that would change the measurement is refused (exit 2) or accepted
// with a note, the values that change nothing, and what surge does.
func WriteAIPerfHelp(w io.Writer) error {
	taken := map[string]bool{}
	for _, o := range options {
		for _, n := range o.names() {
			taken[n] = true
		}
	}
	width := helpWidth(w)
	var b strings.Builder
	b.WriteString(wrapText(catAIPerf+". refused: a value other than the neutral ones (listed) exits 2, naming the reason; "+
		"accepted: the value has nothing to change in surge (AIPerf's processes, a console or file choice surge always makes), said in one line on stderr.", width, 0, 0))
	b.WriteByte('\n')
	for i := range foreignOptions {
		o := &foreignOptions[i]
		if taken[o.names()[0]] {
			continue
		}
		b.WriteString(wrapText(strings.TrimLeft(o.helpLine(), " "), width, 2, 6))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// helpLine is the row as WriteAIPerfHelp and docs/aiperf.md show it.
func (o *foreignOption) helpLine() string {
	var names []string
	for _, n := range o.names() {
		if len(n) == 1 {
			names = append(names, "-"+n)
		} else {
			names = append(names, "--"+n)
		}
	}
	arg := map[argKind]string{argValue: " VALUE", argMany: " VALUE..."}[o.kind]
	verdict := "accepted"
	if o.refuse {
		verdict = "refused"
	}
	if len(o.neutral) > 0 {
		verdict += " (neutral: " + strings.Join(o.neutral, ", ") + ")"
	}
	return fmt.Sprintf("  %s%s  %s; surge %s", strings.Join(names, ", "), arg, verdict, o.does)
}

// switchFlag is a generic flag that takes no value (its Value is a bool
// flag), and --help shows it so.
type switchFlag struct {
	cli.GenericFlag
	names flagNames
}

// Names is the flag's name and its aliases (see valueFlag).
func (f *switchFlag) Names() []string { return f.names.or(f.Name, f.Aliases) }

// TakesValue reports that the flag takes no value.
func (*switchFlag) TakesValue() bool { return false }

// String is the flag's help line.
func (f *switchFlag) String() string { return cli.FlagStringer(f) }

// foreignValue records what an AIPerf-only flag was given.
type foreignValue struct {
	c    *Config
	name string
	kind argKind
}

func (v *foreignValue) Set(s string) error {
	if rest, ok := strings.CutPrefix(s, listCopy); ok {
		// urfave/cli copying the value to the flag's other names.
		v.c.Foreign[v.name] = strings.Split(rest, listCopy)
		return nil
	}
	if v.kind == argSwitch {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("parse error")
		}
		s = strconv.FormatBool(b)
	}
	if v.c.Foreign == nil {
		v.c.Foreign = map[string][]string{}
	}
	if v.kind == argSwitch {
		v.c.Foreign[v.name] = []string{s}
		return nil
	}
	v.c.Foreign[v.name] = append(v.c.Foreign[v.name], s)
	return nil
}

func (v *foreignValue) String() string {
	if v.c == nil || len(v.c.Foreign[v.name]) == 0 {
		return ""
	}
	return listCopy + strings.Join(v.c.Foreign[v.name], listCopy)
}

// IsBoolFlag makes a switch take no value.
func (v *foreignValue) IsBoolFlag() bool { return v.kind == argSwitch }

// TakesMany makes a list flag take every value up to the next flag.
func (v *foreignValue) TakesMany() bool { return v.kind == argMany }

// ForeignNotes judges the AIPerf-only flags c was given, in the table's
// order: an error for the first whose value would change what is measured,
// else one note for each whose value is not neutral.
func (c *Config) ForeignNotes() (notes []string, err error) {
	for i := range foreignOptions {
		o := &foreignOptions[i]
		vals, ok := c.Foreign[o.names()[0]]
		if !ok || o.isNeutral(vals) {
			continue
		}
		given := "--" + o.names()[0]
		if o.kind != argSwitch {
			given += " " + strings.Join(vals, " ")
		}
		if o.refuse {
			return nil, Usagef("%s is AIPerf's, and surge %s; drop the flag%s", given, o.does, neutralHint(o))
		}
		notes = append(notes, fmt.Sprintf("note: %s is AIPerf's and has no effect here: surge %s", given, o.does))
	}
	return notes, nil
}

// neutralHint names the values that would be accepted.
func neutralHint(o *foreignOption) string {
	if len(o.neutral) == 0 {
		return ""
	}
	return " or give it " + strings.Join(o.neutral, " or ")
}

// isNeutral reports whether every value leaves the run unchanged: equal to
// one of the row's neutral values (numbers by value, words in any case).
func (o *foreignOption) isNeutral(vals []string) bool {
	for _, v := range vals {
		if !o.neutralValue(v) {
			return false
		}
	}
	return true
}

func (o *foreignOption) neutralValue(v string) bool {
	v = strings.TrimSpace(v)
	for _, n := range o.neutral {
		if strings.EqualFold(v, n) {
			return true
		}
		x, errX := strconv.ParseFloat(v, 64)
		y, errY := strconv.ParseFloat(n, 64)
		if errX == nil && errY == nil && x == y {
			return true
		}
	}
	return false
}
