package vllmbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/peers"
)

// Env is where a command line runs: surge's version, its output streams,
// whether stdout is a terminal, and the clock (the result's date).
type Env struct {
	Version        string
	Stdout, Stderr io.Writer
	TTY            bool
	Now            func() time.Time
}

const help = `surge vllm-bench serve [vllm bench serve's flags]

Runs a ` + "`vllm bench serve`" + ` command line unchanged with surge's engine: vLLM's flags as vLLM
defines them, vLLM's summary block on stdout (its labels exactly), vLLM's result JSON with
--save-result (its keys and its metric definitions: TPOT excludes the first token, ITLs are the
gaps between streamed chunks, percentiles are numpy's), and surge's own exports beside it (the
line before the run names the equivalent surge profile command). docs/comparability.md says where
the numbers of vLLM, surge, GuideLLM and inference-perf differ, and why.`

// Command is `surge vllm-bench`, whose one subcommand, serve, takes
// `vllm bench serve`'s command line; *code gets the exit code the run
// earns.
func Command(version string, code *int) *cli.Command {
	return &cli.Command{
		Name:            "vllm-bench",
		Usage:           "run a `vllm bench serve` command line and write its result",
		SkipFlagParsing: true,
		Action: func(cc *cli.Context) error {
			env := Env{Version: version, Stdout: os.Stdout, Stderr: os.Stderr, TTY: term.IsTerminal(os.Stdout.Fd()), Now: time.Now}
			c, err := Main(cc.Context, cc.Args().Slice(), env)
			*code = c
			return err
		},
	}
}

// Main runs `surge vllm-bench ARGS`: `serve` and vLLM's flags.
func Main(ctx context.Context, args []string, env Env) (int, error) {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		peers.WriteHelp(env.Stdout, help, flags)
		return cmdline.ExitOK, nil
	}
	if args[0] != "serve" {
		return cmdline.ExitUsage, cmdline.Usagef("surge vllm-bench: unknown subcommand %q: surge runs vllm bench serve (surge vllm-bench serve --help)", args[0])
	}
	if slices.Contains(args[1:], "--help") || slices.Contains(args[1:], "-h") {
		peers.WriteHelp(env.Stdout, help, flags)
		return cmdline.ExitOK, nil
	}
	return Serve(ctx, args[1:], env)
}

// Serve runs one `vllm bench serve` command line (its flags) and writes
// vLLM's outputs from the finished run.
func Serve(ctx context.Context, argv []string, env Env) (int, error) {
	b, err := parse(argv)
	if err != nil {
		return cmdline.ExitUsage, err
	}
	start := env.Now()
	dir := filepath.Join("artifacts", b.stem(b.model, start))
	tmp, err := os.MkdirTemp("", "surge-vllm-bench-")
	if err != nil {
		return cmdline.ExitFailed, err
	}
	defer os.RemoveAll(tmp)
	dataArgs, err := b.dataset.prepare(ctx, tmp)
	if err != nil {
		return cmdline.ExitUsage, err
	}
	if b.dataset.note != "" {
		fmt.Fprintf(env.Stderr, "surge: %s\n", b.dataset.note)
	}
	if b.dataset.count != b.numPrompts {
		fmt.Fprintf(env.Stderr, "surge: %s builds %d requests of --num-prompts %d, as vLLM's does\n", b.dataset.name, b.dataset.count, b.numPrompts)
	}
	args := b.surgeArgs(dir, dataArgs)
	// vLLM's lines before its run that describe the load.
	fmt.Fprintf(env.Stdout, "Traffic request rate: %s\n", pyNum(b.rate))
	dist := "Poisson process"
	if b.burstiness != 1 {
		dist = "Gamma distribution"
	}
	fmt.Fprintf(env.Stdout, "Burstiness factor: %s (%s)\n", pyNum(b.burstiness), dist)
	conc := "None"
	if b.maxConc > 0 {
		conc = strconv.Itoa(b.maxConc)
	}
	fmt.Fprintf(env.Stdout, "Maximum request concurrency: %s\n", conc)
	run := peers.Runner{Version: env.Version, Log: env.Stderr, TTY: env.TTY}
	code, runErr := run.Run(ctx, args)
	if _, err := os.Stat(filepath.Join(dir, "profile_export_aiperf.json")); err != nil {
		return code, runErr // the run never started: nothing to report
	}
	if err := b.report(ctx, dir, env); err != nil {
		return max(code, cmdline.ExitFailed), errors.Join(runErr, err)
	}
	return code, runErr
}

// pyNum is Python's str() of a float flag's value (1.0, inf).
func pyNum(f float64) string {
	if math.IsInf(f, 1) {
		return "inf"
	}
	return peers.PyFloat(f)
}

// stem is vLLM's default result file name without its extension:
// LABEL-RATEqps[-concurrencyN]-MODEL-DATE.
func (b *bench) stem(model string, at time.Time) string {
	label := b.label
	if label == "" {
		label = b.backend
	}
	conc := ""
	if b.maxConc > 0 {
		conc = fmt.Sprintf("-concurrency%d", b.maxConc)
	}
	base := model[strings.LastIndex(model, "/")+1:]
	if base == "" {
		base = "server-model"
	}
	return fmt.Sprintf("%s-%sqps%s-%s-%s", label, pyNum(b.rate), conc, base, at.Format("20060102-150405"))
}

// surgeArgs are the `surge profile` flags that run this command line,
// exporting into dir.
func (b *bench) surgeArgs(dir string, dataArgs []string) []string {
	kind := "completions"
	if b.backend == chatBackend {
		kind = "chat"
	}
	args := []string{"--url", b.baseURL, "--endpoint-type", kind, "--endpoint", b.endpoint, "--streaming"}
	switch {
	case len(b.lora) > 0:
		for _, l := range b.lora {
			args = append(args, "--model", l)
		}
		args = append(args, "--model-selection-strategy", "random")
		if t := cmp(b.tokenizer, b.model); t != "" {
			args = append(args, "--tokenizer", t)
		}
	case b.served != "":
		args = append(args, "--model", b.served)
		if t := cmp(b.tokenizer, b.model); t != "" {
			args = append(args, "--tokenizer", t)
		}
	case b.model != "":
		args = append(args, "--model", b.model)
		if b.tokenizer != "" {
			args = append(args, "--tokenizer", b.tokenizer)
		}
	case b.tokenizer != "":
		args = append(args, "--tokenizer", b.tokenizer)
	}
	count := b.dataset.count
	args = append(args, "--request-count", strconv.Itoa(count))
	switch {
	case math.IsInf(b.rate, 1):
		c := count
		if b.maxConc > 0 {
			c = b.maxConc
		}
		args = append(args, "--concurrency", strconv.Itoa(c))
	default:
		args = append(args, "--request-rate", strconv.FormatFloat(b.rate, 'g', -1, 64))
		switch {
		case b.burstiness == 1:
			args = append(args, "--arrival-pattern", "poisson")
		case math.IsInf(b.burstiness, 1):
			args = append(args, "--arrival-pattern", "constant")
		default:
			args = append(args, "--arrival-pattern", "gamma", "--arrival-smoothness", strconv.FormatFloat(b.burstiness, 'g', -1, 64))
		}
		if b.maxConc > 0 {
			args = append(args, "--concurrency", strconv.Itoa(b.maxConc))
		}
	}
	if b.warmups > 0 {
		c := b.warmups
		if b.maxConc > 0 {
			c = b.maxConc
		}
		args = append(args, "--warmup-request-count", strconv.Itoa(b.warmups), "--warmup-concurrency", strconv.Itoa(c), "--warmup-grace-period", "inf")
	}
	args = append(args, "--random-seed", strconv.FormatInt(b.seed, 10))
	if t, _ := intFlag(b.args, "ready-check-timeout-sec", 600); t > 0 {
		args = append(args, "--wait-for-model-timeout", strconv.Itoa(t))
	} else {
		args = append(args, "--skip-preflight")
	}
	body := map[string]any{}
	for k, v := range b.extraBody {
		body[k] = v
	}
	if b.ignoreEOS {
		body["ignore_eos"] = true
	}
	if len(body) > 0 {
		j, _ := json.Marshal(body)
		args = append(args, "--extra-inputs", string(j))
	}
	if kind == "chat" {
		// vLLM sends max_completion_tokens whatever the server honours.
		args = append(args, "--use-legacy-max-tokens=false")
	}
	if len(b.headers) > 0 {
		j, _ := json.Marshal(b.headers)
		args = append(args, "--header", string(j))
	}
	if len(b.goodput) > 0 {
		tags := map[string]string{"ttft": "time_to_first_token", "tpot": "inter_token_latency", "e2el": "request_latency"}
		var slos []string
		for _, g := range b.goodput {
			slos = append(slos, tags[g.name]+":"+strconv.FormatFloat(g.ms, 'g', -1, 64))
		}
		args = append(args, "--goodput", strings.Join(slos, " "))
	}
	if b.args.Has("profile") {
		args = append(args, "--server-profiler")
	}
	if b.args.Has("disable-tqdm") {
		args = append(args, "--ui", "none")
	}
	if b.saveDetailed {
		args = append(args, "--export-outputs-json")
	}
	args = append(args, "--output-artifact-dir", dir)
	return append(args, dataArgs...)
}

// cmp is the first of its arguments that is not empty.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// report reads the finished run in dir back and writes vLLM's summary
// block and, when asked, its result JSON.
func (b *bench) report(ctx context.Context, dir string, env Env) error {
	f, err := peers.Load(ctx, dir, b.saveDetailed)
	if err != nil {
		return err
	}
	model := b.model
	if model == "" {
		model = servedModel(f)
	}
	tokenizer := cmp(b.tokenizer, model)
	o := compute(f, b.goodput)
	now := env.Now()
	result := &peers.Object{}
	result.Set("date", now.Format("20060102-150405"))
	result.Set("endpoint_type", b.backend)
	result.Set("backend", b.backend)
	if b.label != "" {
		result.Set("label", b.label)
	} else {
		result.Set("label", nil)
	}
	result.Set("model_id", model)
	result.Set("tokenizer_id", tokenizer)
	result.Set("num_prompts", b.numPrompts)
	for _, kv := range b.metadata {
		result.Set(kv[0], kv[1])
	}
	if math.IsInf(b.rate, 1) {
		result.Set("request_rate", "inf")
	} else {
		result.Set("request_rate", b.rate)
	}
	result.Set("burstiness", b.burstiness)
	if b.maxConc > 0 {
		result.Set("max_concurrency", b.maxConc)
	} else {
		result.Set("max_concurrency", nil)
	}
	b.writeSummary(env.Stdout, o, result)
	fmt.Fprintf(env.Stderr, "surge: surge's exports: %s\n", dir)
	if !b.saveResult && !b.appendResult {
		return nil
	}
	name := b.resultFile
	if name == "" {
		name = b.stem(model, now) + ".json"
	}
	if b.resultDir != "" {
		if err := os.MkdirAll(b.resultDir, 0o755); err != nil {
			return err
		}
		name = filepath.Join(b.resultDir, name)
	}
	js, err := result.MarshalJSON()
	if err != nil {
		return err
	}
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if b.appendResult {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	out, err := os.OpenFile(name, flag, 0o644)
	if err != nil {
		return err
	}
	if st, err := out.Stat(); err == nil && b.appendResult && st.Size() > 0 {
		js = append([]byte("\n"), js...)
	}
	if _, err := out.Write(js); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "surge: vLLM's result JSON: %s\n", name)
	return nil
}

// servedModel is the model the run sent (the one the server named when
// the command line gave none), from the summary's input_config.
func servedModel(f *peers.Finished) string {
	if f.Summary == nil {
		return ""
	}
	ep, _ := f.Summary.InputConfig["endpoint"].(map[string]any)
	names, _ := ep["model_names"].([]any)
	if len(names) > 0 {
		if s, ok := names[0].(string); ok {
			return s
		}
	}
	return ""
}
