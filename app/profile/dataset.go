package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/datasets/tokenizer/hub"
	"github.com/surgebench/surge/metrics"
)

// Tokenizer sources, as run_info.tokenizer.source says them.
const (
	tokBuiltin  = "builtin"  // the embedded Qwen3, asked for
	tokPath     = "path"     // a tokenizer.json file or folder
	tokCache    = "cache"    // the local Hugging Face cache
	tokDownload = "download" // fetched from the Hub into that cache
	tokFallback = "fallback" // wanted but not to be had: prompts only
)

// builtinNames resolve to the embedded tokenizer without a look at the
// Hub: "builtin" as AIPerf spells it, the embedded mock's model, and
// AIPerf's placeholder model names.
var builtinNames = map[string]bool{"builtin": true, "mock": true, "mock-model": true, "test-model": true, "fake-model": true}

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
func (c *config) loadTokenizer(ctx context.Context, l cmdline.Logger) (builder datasets.Tokenizer, counter metrics.TokenCounter, src tokenizerSource, err error) {
	name := strings.TrimSpace(c.Tokenizer)
	explicit := name != ""
	if !explicit {
		name = c.Model
	}
	src = tokenizerSource{Name: name}
	path, isPath := tokenizerPath(name)
	if !explicit {
		path, isPath = modelTokenizerPath(name)
	}
	var tok *tokenizer.Tokenizer
	var perr error // a tokenizer wanted but not to be had: the fallback
	switch {
	case builtinNames[strings.ToLower(name)]:
		src.Source = tokBuiltin
		if c.UseServerTokenCount {
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
		if tok, perr = tokenizer.Load(path); perr != nil && explicit {
			return nil, nil, src, &cmdline.UsageError{Err: fmt.Errorf("--tokenizer: %w", perr)}
		}
	case !hub.IsRepoID(name) && explicit:
		return nil, nil, src, cmdline.Usagef("--tokenizer %q: no such file or folder, and not a Hugging Face model id (org/name)", name)
	default:
		o := hub.Options{Revision: c.TokenizerRevision}
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
		if !explicit {
			how = "the tokenizer of model " + name
		}
		l.Warnf("warning: %s: %v: prompts are built with the embedded Qwen3 tokenizer and token counts come from the server's usage (give --tokenizer PATH, or --tokenizer builtin to skip this look-up)", how, perr)
		return nil, nil, src, nil
	}
	switch {
	case c.UseServerTokenCount:
		src.Counts = "usage"
		return tok, nil, src, nil
	case c.RetokenizeOutput:
		src.Counts = "tokenizer"
	default:
		src.Counts = "usage, else tokenizer"
	}
	return tok, tok, src, nil
}

// tokenizerPath reports whether --tokenizer names a file or folder: one
// that exists, or a value written as a path (./x, /x, ~/x, x.json).
func tokenizerPath(name string) (string, bool) {
	name = homePath(name)
	if _, err := os.Stat(name); err == nil {
		return name, true
	}
	return name, filepath.IsAbs(name) || strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../") ||
		jsonName(name)
}

// modelTokenizerPath reports whether a model name, standing in for
// --tokenizer, names a local tokenizer: a folder holding tokenizer.json or
// an existing .json file. Servers list models by names that may match
// other files in the working directory (llama.cpp's model.gguf), which are
// no tokenizer and are not read.
func modelTokenizerPath(name string) (string, bool) {
	name = homePath(name)
	st, err := os.Stat(name)
	switch {
	case err != nil:
		return name, false
	case !st.IsDir():
		return name, jsonName(name)
	}
	for _, f := range []string{tokenizer.FileName, tokenizer.FileName + ".gz"} {
		if _, err := os.Stat(filepath.Join(name, f)); err == nil {
			return name, true
		}
	}
	return name, false
}

// homePath expands a leading ~/ as a shell would.
func homePath(name string) string {
	if rest, ok := strings.CutPrefix(name, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return name
}

// jsonName reports whether name is a tokenizer file's (plain or gzip).
func jsonName(name string) bool {
	return strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".json.gz")
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
	"Synthetic.RangeRatio": "--random-range-ratio", "Synthetic.SeqDist": "--seq-dist", "PromptCorpus": "--prompt-corpus",
}

// loadDataset builds the workload; count is how many synthetic
// conversations the run needs.
// Cancelling ctx (Ctrl-C) stops the load soon after.
func (c *config) loadDataset(ctx context.Context, tok datasets.Tokenizer, count int, log io.Writer) (*datasets.Dataset, error) {
	rankings := c.rankings()
	isl, islStddev, err := c.queryLength(rankings)
	if err != nil {
		return nil, err
	}
	audio, err := c.audioOptions()
	if err != nil {
		return nil, err
	}
	var seqDist *datasets.SeqDist
	if c.SeqDist != "" {
		if seqDist, err = datasets.ParseSeqDist(c.SeqDist); err != nil {
			return nil, cmdline.Usagef("--seq-dist %q: %v", c.SeqDist, err)
		}
	}
	progress := newDownloadLine(log)
	ds, report, err := datasets.LoadContext(ctx, datasets.Options{
		InputFile: c.InputFile, CustomDatasetType: c.CustomDatasetType, PublicDataset: c.PublicDataset,
		ISLBlockSize: c.ISLBlockSize, Tokenizer: tok, Seed: c.Seed, TurnDelayRatio: c.TurnDelayRatio, NoTurnDelays: c.NoTurnDelays,
		PromptCorpus: c.PromptCorpus, Progress: progress.update,
		Synthetic: datasets.SyntheticOptions{
			Count: count, ISL: isl, ISLStddev: islStddev, OSL: c.OSL, OSLStddev: c.OSLStddev,
			RangeRatio: c.RangeRatio, SeqDist: seqDist,
			PrefixPoolSize: c.PrefixPoolSize, PrefixLength: c.PrefixLength,
			SharedSystemPromptLength: c.SharedSystemPromptLength, Tokenizer: tok,
			Turns: c.TurnsMean, TurnsStddev: c.TurnsStddev, TurnDelay: c.TurnDelayMean, TurnDelayStddev: c.TurnDelayStd,
			Images: c.imageOptions(), Audio: audio,
		},
	})
	progress.end()
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil, fmt.Errorf("interrupted while loading the dataset (%w)", err)
	}
	if err != nil {
		// Bad files, lines and flags all exit 2 (the error names which).
		if fe := cmdline.ForFlags(err, mediaFlags); fe != err {
			return nil, &cmdline.UsageError{Err: fe}
		}
		return nil, &cmdline.UsageError{Err: cmdline.ForFlags(err, datasetFlags)}
	}
	if report != nil {
		for _, l := range report.Lines {
			fmt.Fprintln(log, l)
		}
	}
	if rankings {
		if err := c.addPassages(ds, tok, log); err != nil {
			return nil, err
		}
	}
	if err := c.addSystemPrompt(ds); err != nil {
		return nil, err
	}
	return ds, nil
}

// each (seeded). One model needs nothing: the endpoint names it.
func assignModels(ds *datasets.Dataset, models []string, strategy string, seed uint64) {
	if len(models) < 2 {
		return
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c73)) // "models"
	n := 0
	for ci := range ds.Conversations {
		for ti := range ds.Conversations[ci].Turns {
			m := models[n%len(models)]
			if strategy == "random" {
				m = models[rng.IntN(len(models))]
			}
			ds.Conversations[ci].Turns[ti].Model = m
			n++
		}
	}
}

// downloadLine is the console's progress line for a public dataset's
// download: one line rewritten in place at most every 250 ms and at each
// whole percent, closed with a newline when the download ends.
type downloadLine struct {
	w         io.Writer
	last      time.Time
	lastPct   int64
	shown     bool
	done, all int64
}

func newDownloadLine(w io.Writer) *downloadLine { return &downloadLine{w: w, lastPct: -1} }

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
	d.print()
}

func (d *downloadLine) print() {
	const mib = 1 << 20
	if d.all > 0 {
		fmt.Fprintf(d.w, "\rdownloading the public dataset: %.1f of %.1f MiB (%d%%)", float64(d.done)/mib, float64(d.all)/mib, d.done*100/d.all)
		return
	}
	fmt.Fprintf(d.w, "\rdownloading the public dataset: %.1f MiB", float64(d.done)/mib)
}

// end prints the final count and ends the line, if a download was shown.
func (d *downloadLine) end() {
	if d.shown {
		d.print()
		fmt.Fprintln(d.w)
	}
}
