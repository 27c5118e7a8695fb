package guidellm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/peers"
)

// plan is a GuideLLM command line (either version's), read and checked:
// the benchmarks to run, how, and the outputs to write.
type plan struct {
	// version is the report schema: 1 for v0.6's benchmark, 2 for
	// v0.7's run.
	version int
	tool    string
	// target is the server, model the model sent ("": the server's),
	// format chat or completions, processor the tokenizer ("": the
	// model's).
	target, model, format, processor string
	headers                          map[string]string
	extras                           map[string]any
	// timeout is each request's (seconds; 0: surge's default).
	timeout float64
	data    dataSpec
	// profile is the profile's kind: synchronous, concurrent,
	// throughput, constant, poisson, async or sweep.
	profile string
	// streams (concurrent), rates (constant, poisson, async), sweepSize,
	// maxConc (throughput, sweep and the async kinds: 0 none), rampup.
	streams   []int
	rates     []float64
	sweepSize int
	maxConc   int
	rampup    float64
	// strategyType is the async and sweep profiles' constant or poisson.
	strategyType string
	seed         int
	maxSeconds   float64 // NaN: none
	maxRequests  int     // 0: none
	// constraints are the profile's constraints as GuideLLM records them.
	constraints      *peers.Object
	warmup, cooldown transient
	sample           int // -1: every request
	outputs          []output
	console          bool
	progress         bool
	// args is the command line as the report's args (v1) or config (v2).
	args *peers.Object
	// syncRate, thrRate and measured are a sweep's measured rates and the
	// strategies made from them.
	syncRate, thrRate float64
	measured          []strategy
}

// output is one file GuideLLM writes: json, yaml or csv, at path.
type output struct{ kind, path string }

// dataSpec is the data's surge flags, and whether its requests fix their
// output length (GuideLLM then sends ignore_eos and stop: null).
type dataSpec struct {
	args        []string
	fixedOutput bool
}

// maxConcurrencyDefault is GuideLLM's settings.max_concurrency: the
// throughput profile's concurrency when none is given.
const maxConcurrencyDefault = 512

// strategies are the benchmarks the profile runs that need no earlier
// result (a sweep's later ones come from its first two).
func (p *plan) first() []strategy {
	base := strategy{maxConc: p.maxConc, rampup: p.rampup, seed: p.seed}
	var out []strategy
	switch p.profile {
	case "synchronous":
		out = append(out, strategy{kind: "synchronous"})
	case "concurrent":
		for _, n := range p.streams {
			s := base
			s.kind, s.streams, s.maxConc = "concurrent", n, 0
			out = append(out, s)
		}
	case "throughput":
		s := base
		s.kind = "throughput"
		out = append(out, s)
	case "constant", "poisson", "async":
		for _, r := range p.rates {
			s := base
			s.kind, s.rate = p.strategyType, r
			if s.kind == "poisson" {
				s.rampup = 0
			}
			out = append(out, s)
		}
	case "sweep":
		out = append(out, strategy{kind: "synchronous"}, strategy{kind: "throughput", maxConc: p.maxConc, rampup: p.rampup})
	}
	return out
}

// surgeArgs are the `surge profile` flags of one benchmark, exporting
// into dir.
func (p *plan) surgeArgs(s strategy, dir string) []string {
	args := []string{"--url", p.target, "--endpoint-type", p.format, "--streaming", "--per-chunk-usage"}
	if p.model != "" {
		args = append(args, "--model", p.model)
	}
	if p.processor != "" {
		args = append(args, "--tokenizer", p.processor)
	}
	switch s.kind {
	case "synchronous":
		args = append(args, "--concurrency", "1")
	case "concurrent":
		args = append(args, "--concurrency", strconv.Itoa(s.streams))
		if s.rampup > 0 {
			args = append(args, "--concurrency-ramp-duration", fmtFloat(s.rampup))
		}
	case "throughput":
		c := s.maxConc
		if c == 0 {
			c = maxConcurrencyDefault
		}
		args = append(args, "--concurrency", strconv.Itoa(c))
		if s.rampup > 0 {
			args = append(args, "--concurrency-ramp-duration", fmtFloat(s.rampup))
		}
	case "constant", "poisson":
		args = append(args, "--request-rate", fmtFloat(s.rate), "--arrival-pattern", s.kind)
		if s.maxConc > 0 {
			args = append(args, "--concurrency", strconv.Itoa(s.maxConc))
		}
		if s.rampup > 0 {
			args = append(args, "--request-rate-ramp-duration", fmtFloat(s.rampup))
		}
	}
	if p.maxRequests > 0 {
		args = append(args, "--request-count", strconv.Itoa(p.maxRequests))
	}
	if known(p.maxSeconds) {
		// GuideLLM cancels what is in flight when the time is up: its
		// incomplete requests.
		args = append(args, "--benchmark-duration", fmtFloat(p.maxSeconds), "--benchmark-grace-period", "0")
	}
	args = append(args, "--random-seed", strconv.Itoa(p.seed))
	body := map[string]any{}
	for k, v := range p.extras {
		body[k] = v
	}
	if p.data.fixedOutput {
		body["stop"], body["ignore_eos"] = nil, true
	}
	if len(body) > 0 {
		j, _ := json.Marshal(body)
		args = append(args, "--extra-inputs", string(j))
	}
	if len(p.headers) > 0 {
		j, _ := json.Marshal(p.headers)
		args = append(args, "--header", string(j))
	}
	if p.timeout > 0 {
		args = append(args, "--request-timeout-seconds", fmtFloat(p.timeout))
	}
	// GuideLLM's client follows redirects.
	args = append(args, "--follow-redirects")
	if !p.progress {
		args = append(args, "--ui", "none")
	}
	args = append(args, "--export-outputs-json", "--output-artifact-dir", dir)
	return append(args, p.data.args...)
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Env is where a command line runs.
type Env struct {
	Version        string
	Stdout, Stderr io.Writer
	TTY            bool
	Now            func() time.Time
}

// execute runs the plan's benchmarks one surge run each, then writes its
// outputs from the finished runs (whatever ended the runs: an interrupt
// still writes what finished).
func (p *plan) execute(ctx context.Context, env Env) (int, error) {
	// An interrupt between benchmarks ends the profile and still writes
	// the report of those done; within one the surge run takes it.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := filepath.Join("artifacts", "guidellm-"+env.Now().Format("20060102-150405"))
	c := &compiler{version: p.version, runID: uuid(), warmup: p.warmup, cooldown: p.cooldown, maxSeconds: p.maxSeconds,
		maxRequests: p.maxRequests, sample: p.sample, backend: p.backendInfo(), requestsInfo: p.requestsInfo()}
	c.profile = p.profileObject
	runner := peers.Runner{Version: env.Version, Log: env.Stderr, TTY: env.TTY}
	var done []run
	queue := p.first()
	code := cmdline.ExitOK
	var runErr error
	for i := 0; i < len(queue) && ctx.Err() == nil; i++ {
		s := queue[i]
		dir := filepath.Join(root, fmt.Sprintf("%02d_%s", i, s.label()))
		code, runErr = runner.Run(ctx, p.surgeArgs(s, dir))
		if _, err := os.Stat(filepath.Join(dir, "profile_export_aiperf.json")); err != nil {
			break // it never started
		}
		f, err := peers.Load(ctx, dir, true)
		if err != nil {
			return max(code, cmdline.ExitFailed), errors.Join(runErr, err)
		}
		done = append(done, run{strategy: s, f: f, constraints: p.constraintsInfo()})
		if p.console {
			p.printBenchmark(env.Stdout, c.benchmark(done, len(done)-1))
		}
		if code != cmdline.ExitOK || runErr != nil {
			break // interrupted, failed: no later benchmark
		}
		if p.profile == "sweep" && i == 1 {
			more, err := p.sweepRates(done)
			if err != nil {
				return cmdline.ExitFailed, err
			}
			queue = append(queue, more...)
		}
	}
	if len(done) == 0 {
		return code, runErr
	}
	// Every benchmark's config holds the profile as it ended (GuideLLM's
	// benchmarks share one profile, written at the end).
	c.profile = func([]run) *peers.Object { return p.profileObject(done) }
	var benchmarks []any
	for i := range done {
		benchmarks = append(benchmarks, c.benchmark(done, i))
	}
	report := &peers.Object{}
	report.Set("metadata", metadata(p.version, env.Version))
	if p.version >= 2 {
		report.Set("config", p.args)
	} else {
		report.Set("args", p.args)
	}
	report.Set("benchmarks", benchmarks)
	for _, o := range p.outputs {
		if err := writeOutput(o, report); err != nil {
			return max(code, cmdline.ExitFailed), errors.Join(runErr, err)
		}
		fmt.Fprintf(env.Stderr, "surge: GuideLLM's %s: %s\n", o.kind, o.path)
	}
	fmt.Fprintf(env.Stderr, "surge: surge's exports: %s\n", root)
	if ctx.Err() != nil && code == cmdline.ExitOK {
		code = cmdline.ExitInterrupted
	}
	return code, runErr
}

// label names a strategy's folder: its kind and value.
func (s strategy) label() string {
	switch s.kind {
	case "concurrent":
		return fmt.Sprintf("concurrent_%d", s.streams)
	case "throughput":
		if s.maxConc > 0 {
			return fmt.Sprintf("throughput_%d", s.maxConc)
		}
	case "constant", "poisson":
		return s.kind + "_" + strings.ReplaceAll(fmtFloat(s.rate), ".", "p")
	}
	return s.kind
}

// sweepRates are a sweep's later benchmarks: rates evenly spaced from the
// synchronous benchmark's request rate to the throughput benchmark's
// (GuideLLM's linspace over sweep_size − 1 points, the first dropped).
func (p *plan) sweepRates(done []run) ([]strategy, error) {
	syncRate, thrRate := p.measuredRate(done, 0), p.measuredRate(done, 1)
	if syncRate <= 0 && thrRate <= 0 {
		return nil, fmt.Errorf("%s: Invalid rates in sweep; aborting. Were there any successful requests?", p.tool)
	}
	n := p.sweepSize - 1
	var out []strategy
	for k := 1; k < n; k++ {
		r := syncRate + (thrRate-syncRate)*float64(k)/float64(n-1)
		if r <= 0 {
			break
		}
		out = append(out, strategy{kind: p.strategyType, rate: r, maxConc: p.maxConc, seed: p.seed})
	}
	p.measured = out
	p.syncRate, p.thrRate = syncRate, thrRate
	return out, nil
}

// measuredRate is a benchmark's successful requests per second (the mean
// of its rate distribution, as GuideLLM's sweep takes it).
func (p *plan) measuredRate(done []run, i int) float64 {
	c := &compiler{warmup: p.warmup, cooldown: p.cooldown, maxSeconds: p.maxSeconds, maxRequests: p.maxRequests}
	stats := make([]reqStat, 0, len(done[i].f.Requests))
	var ok []weighted
	for _, q := range done[i].f.Requests {
		stats = append(stats, newReqStat(q))
	}
	w := c.window(stats)
	for _, q := range stats {
		if q.status == "completed" && q.end >= w.measureStart && q.start <= w.measureEnd {
			ok = append(ok, weighted{q.end, 1})
		}
	}
	return rateFromTimings(ok, &w.measureStart, &w.measureEnd).mean
}

// backendInfo is the backend as the report's config records it.
func (p *plan) backendInfo() *peers.Object {
	o := &peers.Object{}
	o.Set("type_", "openai_http")
	o.Set("target", p.target)
	o.Set("model", nilIfEmpty(p.model))
	o.Set("request_format", map[string]string{"chat": "/v1/chat/completions", "completions": "/v1/completions"}[p.format])
	o.Set("driver", "surge")
	return o
}

// requestsInfo is the request source as the report's config records it.
func (p *plan) requestsInfo() *peers.Object {
	o := &peers.Object{}
	o.Set("type_", "surge_dataset")
	o.Set("surge_args", strings.Join(p.data.args, " "))
	return o
}

// constraintsInfo are the benchmark's constraints, as GuideLLM records
// them.
func (p *plan) constraintsInfo() *peers.Object {
	o := &peers.Object{}
	if known(p.maxSeconds) {
		c := &peers.Object{}
		c.Set("type_", "max_duration")
		c.Set("max_duration", p.maxSeconds)
		c.Set("current_index", 0)
		o.Set("max_seconds", c)
	}
	if p.maxRequests > 0 {
		c := &peers.Object{}
		c.Set("type_", "max_number")
		c.Set("max_num", p.maxRequests)
		c.Set("current_index", 0)
		o.Set("max_requests", c)
	}
	return o
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// profileObject is the profile as GuideLLM records it once done have
// completed.
func (p *plan) profileObject(done []run) *peers.Object {
	o := &peers.Object{}
	kind := p.profile
	o.Set("type_", kind)
	completed := make([]any, len(done))
	for i, r := range done {
		completed[i] = r.strategy.object()
	}
	o.Set("completed_strategies", completed)
	if p.constraints != nil && len(p.constraints.Keys()) > 0 {
		o.Set("constraints", p.constraints)
	} else {
		o.Set("constraints", nil)
	}
	o.Set("rampup_duration", p.rampup)
	var types []string
	maxConc := func() any {
		if p.maxConc > 0 {
			return p.maxConc
		}
		return nil
	}
	switch kind {
	case "synchronous":
		types = []string{"synchronous"}
	case "concurrent":
		o.Set("streams", p.streams)
		for range p.streams {
			types = append(types, "concurrent")
		}
	case "throughput":
		o.Set("max_concurrency", maxConc())
		types = []string{"throughput"}
	case "constant", "poisson", "async":
		o.Set("strategy_type", p.strategyType)
		o.Set("rate", p.rates)
		o.Set("max_concurrency", maxConc())
		o.Set("random_seed", p.seed)
		for range p.rates {
			types = append(types, p.strategyType)
		}
	case "sweep":
		o.Set("sweep_size", p.sweepSize)
		o.Set("strategy_type", p.strategyType)
		o.Set("max_concurrency", maxConc())
		o.Set("random_seed", p.seed)
		o.Set("synchronous_rate", rateOr(p.syncRate, len(done) > 0))
		o.Set("throughput_rate", rateOr(p.thrRate, len(done) > 1))
		o.Set("async_rates", []float64{})
		rates := []float64{}
		if len(done) > 1 {
			for _, s := range p.measured {
				rates = append(rates, s.rate)
			}
		}
		o.Set("measured_rates", rates)
		types = []string{"synchronous", "throughput"}
		for len(types) < p.sweepSize {
			types = append(types, p.strategyType)
		}
	}
	o.Set("strategy_types", types)
	return o
}

func rateOr(r float64, ok bool) float64 {
	if !ok {
		return -1.0
	}
	return r
}
