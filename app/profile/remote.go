package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets/remote"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/sanitize"
)

// fetchInput brings an --input-file a URL names (https://, hf://, s3://)
// into the local cache and returns the copy's path, saying in one line
// where it came from. A source that refuses, or a file over the bound, is
// bad input (exit 2); Ctrl-C stops the download (what came is kept for the
// next run).
func fetchInput(ctx context.Context, ref string, log io.Writer) (string, error) {
	o := remote.Options{}
	var progress *downloadLine
	if f, ok := log.(*os.File); ok && term.IsTerminal(f.Fd()) {
		// A line redrawn in place: on a terminal only.
		progress = newDownloadLine(log, "the input file")
		o.Progress = progress.update
	}
	r, err := remote.Fetch(ctx, ref, o)
	if progress != nil {
		progress.end()
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return "", fmt.Errorf("interrupted while fetching the input file (%w)", err)
	}
	if err != nil {
		return "", &cmdline.UsageError{Err: fmt.Errorf("--input-file: %w", err)}
	}
	switch r.How {
	case remote.Cached:
		fmt.Fprintf(log, "input file: %s is unchanged at its source: reading the cached copy %s\n", safeRef(ref), r.Path)
	case remote.Stale:
		fmt.Fprintf(log, "input file: %s is out of reach (%s): reading the cached copy %s\n", safeRef(ref), sanitize.Line(r.Why), r.Path)
	case remote.Resumed:
		fmt.Fprintf(log, "input file: %s: resumed the cut download, %s in all, into %s\n", safeRef(ref), bounded.Bytes(r.Size), r.Path)
	default:
		fmt.Fprintf(log, "input file: %s: downloaded %s into %s\n", safeRef(ref), bounded.Bytes(r.Size), r.Path)
	}
	return r.Path, nil
}

// safeRef is ref as it may be printed: no password, no control characters.
func safeRef(ref string) string { return sanitize.Line(remote.Redact(ref)) }
