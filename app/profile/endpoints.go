package profile

import (
	"context"
	"fmt"
	"io"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// rankingsFlags names the flags behind datasets.PassageOptions' fields.
var rankingsFlags = map[string]string{
	"Passages.Count": "--rankings-passages-mean", "Passages.CountStddev": "--rankings-passages-stddev",
	"Passages.ISL": "--rankings-passages-prompt-token-mean", "Passages.ISLStddev": "--rankings-passages-prompt-token-stddev",
}

// addPassages gives every turn without passages some to rank, for the
// rankings types: generated texts of the --rankings-passages-* shape.
func addPassages(ctx context.Context, s *spec.Spec, ds *datasets.Dataset, tok datasets.Tokenizer, log io.Writer) error {
	o := s.Dataset.Passages
	o.Seed, o.Tokenizer = s.Seed(), tok
	if err := datasets.AddPassagesContext(ctx, ds, o); err != nil {
		return &cmdline.UsageError{Err: cmdline.ForFlags(err, rankingsFlags)}
	}
	fmt.Fprintf(log, "rankings: %d±%d passages of %d±%d tokens per query, where the dataset gives none\n",
		o.Count, o.CountStddev, o.ISL, o.ISLStddev)
	return nil
}

// checkBodies builds every turn's body once when the dataset is the body
// (--endpoint-type raw, a file: held): a turn that is not one is bad
// input, refused before anything is sent rather than failing each request
// on its own.
func checkBodies(ds *datasets.Dataset, ep *endpoint.Endpoint) error {
	if ep.Kind != endpoint.Raw {
		return nil
	}
	for _, conv := range ds.Conversations {
		for i := range conv.Turns {
			if _, err := ep.Body("", nil, &conv.Turns[i]); err != nil {
				return cmdline.Usagef("%s: conversation %s turn %d: %w (give --input-file with one JSON request body per turn)", ds.Name, conv.ID, i+1, err)
			}
		}
	}
	return nil
}

// addTextBatch gives every synthetic embeddings turn the rest of its
// --batch-size-text batch: more texts of --isl tokens, sent with it as the
// request's inputs (a known ISL counts them all).
func addTextBatch(s *spec.Spec, ds *datasets.Dataset, tok datasets.Tokenizer, log io.Writer) error {
	d := &s.Dataset
	o := datasets.PassageOptions{Count: d.TextBatch - 1, ISL: d.ISL, ISLStddev: int(d.ISLStddev), Seed: s.Seed() ^ 0x6261746368, Tokenizer: tok} // "batch"
	if err := datasets.AddPassages(ds, o); err != nil {
		return &cmdline.UsageError{Err: cmdline.ForFlags(err, map[string]string{"Passages.Count": "--batch-size-text", "Passages.ISL": "--isl", "Passages.ISLStddev": "--isl-stddev"})}
	}
	fmt.Fprintf(log, "embeddings: %d texts of %d±%g tokens a request (--batch-size-text)\n", d.TextBatch, d.ISL, d.ISLStddev)
	return nil
}
