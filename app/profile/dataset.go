package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/remote"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/datasets/tokenizer/hub"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
)

// Tokenizer sources, as run_info.tokenizer.source says them.
const (
	tokBuiltin  = "builtin"  // the embedded Qwen3, asked for
	tokPath     = "path"     // a tokenizer.json file or folder
	tokCache    = "cache"    // the local Hugging Face cache
	tokDownload = "download" // fetched from the Hub into that cache
	tokFallback = "fallback" // wanted but not to be had: prompts only
)

// tokenizerSource is how the run's tokenizer was found (run_info).
type tokenizerSource struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Path   string `json:"path,omitempty"`
	// Revision is the Hub revision asked for (--tokenizer-revision).
	Revision string `json:"revision,omitempty"`
	// Counts says where token counts come from: usage (the server's
	// only), tokenizer (--retokenize-output), or "usage, else tokenizer"
	// (the default: a response's usage where it has one).
	Counts string `json:"counts"`
	// ChatTemplate is the model's chat template (--apply-chat-template).
	ChatTemplate *chatTemplateInfo `json:"chat_template,omitempty"`
}

// loadTokenizer resolves --tokenizer, offline first: the model name when
// it is not given; "builtin" (and the mock's model "mock") is the embedded
// Qwen3; an existing file or folder is loaded; a Hugging Face id is read
// from the local Hugging Face cache, or downloaded into it once (bounded
// timeouts). The tokenizer builds the prompts and counts the tokens
// (unless --use-server-token-count). A Hub id that cannot be had (offline
// and not cached, not on the Hub, a format surge does not read) costs one
// line on log: the embedded Qwen3 builds the prompts and the counts come
// from the server's usage, as before the run knew its model. So does any
// tokenizer derived from the model name: only an explicit --tokenizer that
// fails is a usage error.
func loadTokenizer(ctx context.Context, t *spec.Tokenizer, l cmdline.Logger) (builder datasets.Tokenizer, counter metrics.TokenCounter, src tokenizerSource, err error) {
	name := t.Name
	src = tokenizerSource{Name: name}
	path, isPath := t.Path()
	var tok *tokenizer.Tokenizer
	var perr error // a tokenizer wanted but not to be had: the fallback
	switch {
	case t.Builtin():
		src.Source = tokBuiltin
		if t.UseServerCount {
			// Prompts need only the embedded tokenizer's view of the
			// corpus, which datasets has precomputed: no parse of its
			// tables (≈ 0.5 s of start-up).
			src.Counts = "usage"
			return nil, nil, src, nil
		}
		if tok, err = tokenizer.Default(); err != nil {
			return nil, nil, src, err
		}
	case isPath:
		src.Source, src.Path = tokPath, path
		if tok, perr = tokenizer.Load(path); perr != nil && t.Explicit {
			return nil, nil, src, &cmdline.UsageError{Err: fmt.Errorf("--tokenizer: %w", perr)}
		}
	default:
		o := hub.Options{Revision: t.Revision}
		src.Revision = o.FromEnv().Revision
		var where hub.Where
		if !hub.IsRepoID(name) {
			perr = fmt.Errorf("%q is not a Hugging Face model id", name)
		} else if src.Path, where, perr = hub.Find(ctx, name, o); perr == nil {
			src.Source = map[hub.Where]string{hub.Cached: tokCache, hub.Downloaded: tokDownload}[where]
			l.Debugf("tokenizer %s@%s from %s", name, src.Revision, src.Path)
			tok, perr = tokenizer.Load(src.Path)
		}
	}
	if perr != nil {
		src.Source, src.Path, src.Counts = tokFallback, "", "usage"
		how := "--tokenizer " + name
		if !t.Explicit {
			how = "the tokenizer of model " + name
		}
		l.Warnf("%s", strings.TrimSuffix(export.FormatWarning(fmt.Sprintf("%s: %v: prompts are built with the embedded Qwen3 tokenizer and token counts come from the server's usage (give --tokenizer PATH, or --tokenizer builtin to skip this look-up)", how, perr), l.Enabled("DEBUG"), 0), "\n"))
		return nil, nil, src, nil
	}
	switch {
	case t.UseServerCount:
		src.Counts = "usage"
		return tok, nil, src, nil
	case t.Retokenize:
		src.Counts = "tokenizer"
	default:
		src.Counts = "usage, else tokenizer"
	}
	return tok, tok, src, nil
}

// datasetFlags names the flags behind datasets.Options' fields.
var datasetFlags = map[string]string{
	"InputFile": "--input-file", "CustomDatasetType": "--custom-dataset-type", "PublicDataset": "--public-dataset",
	"ISLBlockSize": "--isl-block-size", "Synthetic.ISL": "--isl", "Synthetic.ISLStddev": "--isl-stddev",
	"Synthetic.OSL": "--osl", "Synthetic.OSLStddev": "--osl-stddev", "Synthetic.PrefixPoolSize": "--prompt-prefix-pool-size",
	"Synthetic.PrefixLength": "--prompt-prefix-length", "Synthetic.SharedSystemPromptLength": "--shared-system-prompt-length",
	"Synthetic.Turns": "--conversation-turn-mean", "Synthetic.TurnsStddev": "--conversation-turn-stddev",
	"Synthetic.TurnDelay": "--conversation-turn-delay-mean", "Synthetic.TurnDelayStddev": "--conversation-turn-delay-stddev",
	"TurnDelayRatio": "--conversation-turn-delay-ratio", "Synthetic.Count": "--num-dataset-entries",
	"Synthetic.RangeRatio": "--random-range-ratio", "Synthetic.SeqDist": "--seq-dist", "PromptCorpus": "--prompt-corpus", "UserContextLength": "--user-context-prompt-length",
	"HF.Dataset": "--hf-dataset", "HF.Subset": "--hf-subset", "HF.Split": "--hf-split", "HF.Columns": "--hf-column",
	"HF.Filters": "--dataset-filter", "HF.Rows": "--request-count",
}

// onDemand reports whether s's conversations are built as the run asks
// for them (synthetic prompts, random_pool draws, a Mooncake trace), so
// memory and start-up do not grow with how many it sends: all but the
// rankings types and embeddings batches (their passages and texts are
// added to held conversations) and synthetic images or audio (drawn in
// sequence).
func onDemand(s *spec.Spec) bool {
	d := &s.Dataset
	return !d.Rankings && !d.Images.Enabled() && !d.Audio.Enabled() && d.TextBatch <= 1
}

// datasetCount is the synthetic conversations (or random_pool draws) s
// builds: --num-dataset-entries, 0 for a new one per session (on demand:
// no end), or, held, enough for every session of the plan.
func datasetCount(s *spec.Spec) int {
	if onDemand(s) {
		return s.Dataset.Entries
	}
	return conversationsNeeded(s)
}

// hubRows is how many conversations a Hub dataset reads: as many as the
// run sends (its warmup's included), at most datasets.MaxHubRows (a longer
// run sends them again, as it does any dataset's), or 0 when a duration
// alone bounds the run, which leaves the library's default (and says so).
func hubRows(s *spec.Spec) int {
	l := &s.Load
	if l.Duration > 0 && l.RequestCount == 0 && l.ConversationNum == 0 {
		return 0
	}
	return min(sessionsNeeded(s), datasets.MaxHubRows)
}

// loadDataset builds the workload of s; count is how many synthetic
// conversations it makes (datasetCount). Cancelling ctx (Ctrl-C) stops the
// load soon after.
func loadDataset(ctx context.Context, s *spec.Spec, tok datasets.Tokenizer, count int, log io.Writer) (*datasets.Dataset, error) {
	d, td := &s.Dataset, &s.Load.TurnDelay
	isl, islStddev := d.QueryLength()
	hf := d.HF
	what := "the public dataset"
	if hf.Dataset != "" || d.Public != "" && d.Public != datasets.PublicShareGPT {
		hf.Rows = hubRows(s)
		what = "the Hub dataset"
	}
	o := datasets.Options{
		InputFile: d.InputFile, CustomDatasetType: d.Type, PublicDataset: d.Public, HF: hf,
		ISLBlockSize: d.ISLBlockSize, Tokenizer: tok, Seed: s.Seed(), TurnDelayRatio: td.Ratio, NoTurnDelays: td.None,
		PromptCorpus: d.PromptCorpus, OnDemand: onDemand(s), AllowInvalidUTF8: d.AllowInvalidUTF8,
		Replay: d.Replay, Synthesis: d.Synthesis, UserContextLength: d.UserContextLength,
		Synthetic: datasets.SyntheticOptions{
			Count: count, ISL: isl, ISLStddev: islStddev, OSL: d.OSL, OSLStddev: d.OSLStddev,
			RangeRatio: d.RangeRatio, SeqDist: d.SeqDist,
			PrefixPoolSize: d.PrefixPoolSize, PrefixLength: d.PrefixLength,
			SharedSystemPromptLength: d.SharedSystemPromptLength, Tokenizer: tok, Template: d.ChatOverhead,
			Turns: d.TurnsMean, TurnsStddev: d.TurnsStddev, TurnDelay: td.Mean, TurnDelayStddev: td.Stddev,
			Images: d.Images, Audio: d.Audio,
		},
	}
	if remote.IsRemote(o.InputFile) {
		p, err := fetchInput(ctx, o.InputFile, log)
		if err != nil {
			return nil, err
		}
		o.InputFile = p
	}
	if err := checkMemory(ctx, s, o); err != nil {
		return nil, err
	}
	progress := newDownloadLine(log, what)
	o.Progress = progress.update
	ds, report, err := datasets.LoadContext(ctx, o)
	progress.end()
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil, fmt.Errorf("interrupted while loading the dataset (%w)", err)
	}
	if err != nil {
		// Bad files, lines and flags all exit 2 (the error names which).
		if fe := cmdline.ForFlags(err, mediaFlags); fe != err {
			return nil, &cmdline.UsageError{Err: fe}
		}
		if fe := cmdline.ForFlags(err, spec.ReplayFlags()); fe != err {
			return nil, &cmdline.UsageError{Err: fe}
		}
		if fe := cmdline.ForFlags(err, spec.SynthesisFlags()); fe != err {
			return nil, &cmdline.UsageError{Err: fe}
		}
		return nil, &cmdline.UsageError{Err: cmdline.ForFlags(err, datasetFlags)}
	}
	if report != nil {
		for _, l := range report.Lines {
			// File and column names shown escaped; a long note wrapped at
			// spaces, as a warning is, never cut.
			fmt.Fprint(log, export.Wrap(sanitize.Line(l), s.Columns, 2))
		}
	}
	if d.Rankings {
		if err := addPassages(ctx, s, ds, tok, log); err != nil {
			return nil, err
		}
	}
	if d.TextBatch > 1 {
		if err := addTextBatch(s, ds, tok, log); err != nil {
			return nil, err
		}
	}
	return addSystemPrompt(ds, d.SystemPrompt), nil
}

// checkMemory estimates, before loading, the memory the workload o needs
// with the run's requests in flight, and refuses one over --max-memory
// (default: three quarters of the machine's) with the numbers. What cannot
// be estimated before it is read (a public dataset not downloaded yet)
// is not refused here.
func checkMemory(ctx context.Context, s *spec.Spec, o datasets.Options) error {
	budget := s.Dataset.MaxMemory
	if budget == 0 {
		b, ok := datasets.DefaultMemoryBudget()
		if !ok {
			return nil
		}
		budget = b
	}
	if st, err := os.Stat(o.InputFile); o.InputFile != "" && (err != nil || !st.Mode().IsRegular()) {
		return nil // a pipe is read once: by the load
	}
	f, err := datasets.Estimate(ctx, o)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while estimating the dataset (%w)", ctx.Err())
		}
		return nil // the load says what is wrong with the input, by file and line
	}
	// Beside this, the dispatcher builds bodies ahead up to its own bound
	// (loadgen.LookaheadBytes), small beside any budget.
	err = f.Check(s.Load.MaxConcurrency(), budget)
	var be *datasets.BudgetError
	if errors.As(err, &be) {
		hint := "use --max-memory to allow more"
		if d := &s.Dataset; d.InputFile != "" {
			hint += ", or a smaller trace (--fixed-schedule-end-offset, fewer rows)"
		}
		if s.Load.MaxConcurrency() > 1 {
			hint += ", or fewer requests in flight (--concurrency)"
		}
		return cmdline.Usagef("%v: %s", err, hint)
	}
	return err
}

// assignModels gives every turn of ds one of several models, as AIPerf's
// --model-selection-strategy does: round_robin sends the n-th prompt (the
// dataset's turns in order) to model n mod count, random draws one for
// each (seeded). One model needs nothing: the endpoint names it. A dataset
// built on demand numbers its prompts by conversation and turn where every
// conversation has as many turns (else by conversation plus turn), and
// draws each from a seed of its own.
func assignModels(ds *datasets.Dataset, models []string, strategy string, weights []float64, seed uint64) *datasets.Dataset {
	if len(models) < 2 {
		return ds
	}
	// pick is the model of prompt n by a draw r in [0, 1): weighted walks
	// the cumulative weights, random takes an even share.
	pick := func(n int, r float64) string {
		switch strategy {
		case "random":
			return models[min(int(r*float64(len(models))), len(models)-1)]
		case "weighted":
			for i, w := range weights {
				if r < w {
					return models[i]
				}
				r -= w
			}
			return models[len(models)-1]
		}
		return models[n%len(models)]
	}
	if ds.Source == nil {
		rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c73)) // "models"
		n := 0
		return datasets.Each(ds, func(_ int, c *datasets.Conversation) {
			for ti := range c.Turns {
				c.Turns[ti].Model = pick(n, rng.Float64())
				n++
			}
		})
	}
	per := ds.Source.UniformTurns()
	return datasets.Each(ds, func(i int, c *datasets.Conversation) {
		for ti := range c.Turns {
			n := i + ti
			if per > 0 {
				n = i*per + ti
			}
			c.Turns[ti].Model = pick(n, rand.New(rand.NewPCG(seed^0x6d6f64656c73, uint64(i)<<16|uint64(ti))).Float64())
		}
	})
}

// downloadLine is the console's progress line for a public dataset's
// download: on a terminal, one line rewritten in place at most every
// 250 ms and at each whole percent, closed with a newline when the
// download ends; elsewhere (a log file, a pipe) only the last count, on a
// line of its own: a carriage return would garble a saved log.
type downloadLine struct {
	w         io.Writer
	what      string
	tty       bool
	last      time.Time
	lastPct   int64
	shown     bool
	done, all int64
}

func newDownloadLine(w io.Writer, what string) *downloadLine {
	f, ok := w.(*os.File)
	return &downloadLine{w: w, what: what, lastPct: -1, tty: ok && term.IsTerminal(f.Fd())}
}

// update is datasets.Options.Progress.
func (d *downloadLine) update(done, total int64) {
	d.done, d.all = done, total
	pct := int64(-1)
	if total > 0 {
		pct = done * 100 / total
	}
	now := time.Now()
	if d.shown && now.Sub(d.last) < 250*time.Millisecond && pct == d.lastPct {
		return
	}
	d.last, d.lastPct, d.shown = now, pct, true
	if d.tty {
		fmt.Fprint(d.w, "\r")
		d.print()
	}
}

func (d *downloadLine) print() {
	const mib = 1 << 20
	if d.all > 0 {
		fmt.Fprintf(d.w, "downloading %s: %.1f of %.1f MiB (%d%%)", d.what, float64(d.done)/mib, float64(d.all)/mib, d.done*100/d.all)
		return
	}
	fmt.Fprintf(d.w, "downloading %s: %.1f MiB", d.what, float64(d.done)/mib)
}

// end prints the final count and ends the line, if a download was shown.
func (d *downloadLine) end() {
	if d.shown {
		if d.tty {
			fmt.Fprint(d.w, "\r")
		}
		d.print()
		fmt.Fprintln(d.w)
	}
}
