package main

import (
	"fmt"
	"io"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/metrics"
)

// loadTokenizer loads --tokenizer. Without one, prompts are built with the
// embedded default, but counts come from usage or SSE events (design §3):
// counter is nil then.
func (c *Config) loadTokenizer() (builder datasets.Tokenizer, counter metrics.TokenCounter, err error) {
	if c.Tokenizer == "" {
		return nil, nil, nil
	}
	tok, err := tokenizer.Load(c.Tokenizer)
	if err != nil {
		return nil, nil, &UsageError{fmt.Errorf("--tokenizer: %w", err)}
	}
	if c.UseServerTokenCount {
		return tok, nil, nil
	}
	return tok, tok, nil
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
}

// loadDataset builds the workload; count is how many synthetic
// conversations the run needs.
func (c *Config) loadDataset(tok datasets.Tokenizer, count int, log io.Writer) (*datasets.Dataset, error) {
	rankings := c.rankings()
	isl, islStddev, err := c.queryLength(rankings)
	if err != nil {
		return nil, err
	}
	ds, report, err := datasets.Load(datasets.Options{
		InputFile: c.InputFile, CustomDatasetType: c.CustomDatasetType, PublicDataset: c.PublicDataset,
		ISLBlockSize: c.ISLBlockSize, Tokenizer: tok, Seed: c.Seed, TurnDelayRatio: c.TurnDelayRatio,
		Synthetic: datasets.SyntheticOptions{
			Count: count, ISL: isl, ISLStddev: islStddev, OSL: c.OSL, OSLStddev: c.OSLStddev,
			PrefixPoolSize: c.PrefixPoolSize, PrefixLength: c.PrefixLength,
			SharedSystemPromptLength: c.SharedSystemPromptLength, Tokenizer: tok,
			Turns: c.TurnsMean, TurnsStddev: c.TurnsStddev, TurnDelay: c.TurnDelayMean, TurnDelayStddev: c.TurnDelayStd,
		},
	})
	if err != nil {
		// Bad files, lines and flags all exit 2 (the error names which).
		return nil, &UsageError{forFlags(err, datasetFlags)}
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
	return ds, nil
}
