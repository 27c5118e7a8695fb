package profile

import (
	"context"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics"
)

// maxSystemPrompt bounds --system-prompt-file.
const maxSystemPrompt = 1 << 20

// systemPrompt is --system-prompt, or the text of --system-prompt-file
// (one of the two: both is a usage error naming them).
func (c *config) systemPrompt() (string, error) {
	switch {
	case c.SystemPrompt != "" && c.SystemPromptFile != "":
		return "", cmdline.Usagef("--system-prompt and --system-prompt-file: give one")
	case c.SystemPromptFile == "":
		return c.SystemPrompt, nil
	}
	f, err := os.Open(c.SystemPromptFile)
	if err != nil {
		return "", cmdline.Usagef("--system-prompt-file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSystemPrompt+1))
	switch {
	case err != nil:
		return "", cmdline.Usagef("--system-prompt-file %s: %w", c.SystemPromptFile, err)
	case len(b) > maxSystemPrompt:
		return "", cmdline.Usagef("--system-prompt-file %s: larger than %d bytes", c.SystemPromptFile, maxSystemPrompt)
	case !utf8.Valid(b):
		return "", cmdline.Usagef("--system-prompt-file %s: not UTF-8 text", c.SystemPromptFile)
	case len(b) == 0:
		return "", cmdline.Usagef("--system-prompt-file %s: empty", c.SystemPromptFile)
	}
	return string(b), nil
}

// addSystemPrompt puts the system prompt flags' text at the head of every
// conversation's system message: alone, or before a dataset's own (a
// shared system prompt's) after a blank line.
func (c *config) addSystemPrompt(ds *datasets.Dataset) error {
	text, err := c.systemPrompt()
	if err != nil || text == "" {
		return err
	}
	for i := range ds.Conversations {
		conv := &ds.Conversations[i]
		if conv.SystemPrompt == "" {
			conv.SystemPrompt = text
		} else {
			conv.SystemPrompt = text + "\n\n" + conv.SystemPrompt
		}
	}
	return nil
}

// valuePools are the synthetic prompts of a sweep's values, one pool of
// size conversations per value, as AIPerf builds each value's dataset
// anew with seed --random-seed + the value's index: a prefix cache sees
// no prompt of an earlier value again (with --parameter-sweep-same-seed,
// every value the same prompts). n 0: one pool for the whole run.
type valuePools struct {
	n, size  int
	seed     func(value int) uint64
	strategy string
}

// loadValueDatasets loads the run's dataset into *ds: for a sweep of
// synthetic prompts with a fixed --num-dataset-entries, one pool per value
// (value i seeded Seed+i), else the one dataset the run shares.
func (c *config) loadValueDatasets(ctx context.Context, ds **datasets.Dataset, tok datasets.Tokenizer, l load, log io.Writer) (valuePools, error) {
	values := max(len(l.concs), len(l.rates), 1)
	synthetic := c.InputFile == "" && c.PublicDataset == "" && !c.rankings()
	if values < 2 || c.NumDatasetEntries == 0 || !synthetic || c.FixedSchedule {
		d, err := c.loadDataset(ctx, tok, c.conversationsNeeded(l), log)
		*ds = d
		return valuePools{}, err
	}
	var all *datasets.Dataset
	for i := range values {
		vc := *c
		vc.Seed = c.ValueSeed(i)
		d, err := vc.loadDataset(ctx, tok, c.NumDatasetEntries, log)
		if err != nil {
			return valuePools{}, err
		}
		if all == nil {
			all = d
			continue
		}
		for _, conv := range d.Conversations {
			conv.ID = fmt.Sprintf("%s-v%d", conv.ID, i)
			all.Conversations = append(all.Conversations, conv)
		}
	}
	*ds = all
	strategy := c.SamplingStrategy
	if strategy == "" {
		strategy = datasets.DefaultSampling(all.Type)
	}
	return valuePools{n: values, size: c.NumDatasetEntries, seed: c.ValueSeed, strategy: strategy}, nil
}

// assign points each profile stage at its value's pool (the warmup takes
// the first value's), the pool's conversations taken by the sampling
// strategy, seeded per value.
func (vp valuePools) assign(stages []loadgen.Stage) {
	if vp.n == 0 {
		return
	}
	v := 0
	for i := range stages {
		pool := min(v, vp.n-1)
		if stages[i].Phase == metrics.Profile {
			v++
		}
		base, size := pool*vp.size, vp.size
		pick := func(k int) int { return k }
		if vp.strategy != datasets.SampleSequential {
			pick = datasets.NewSampler(vp.strategy, size, vp.seed(pool)).Pick
		}
		stages[i].Conversation = func(k int) int { return base + pick(k)%size }
	}
}
