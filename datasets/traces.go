package datasets

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// loadTrace reads the trace formats that come as one file (Bailian,
// BurstGPT, Baseten, inputs.json) and notes what it read in rep.
func loadTrace(ctx context.Context, o Options, rep *Report, kind string, f io.Reader) (*Dataset, error) {
	file := rep.Source
	switch kind {
	case TypeBailian:
		rows, err := readBailian(f, file)
		if err != nil {
			return nil, err
		}
		bs := o.ISLBlockSize
		if bs == 0 {
			bs = BailianBlockSize
		}
		p, err := newCorpusPrompter(ctx, o.Tokenizer, o.Seed, o.Synthetic.Corpus)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		mrows, lines := synthesizeRows(bailianSessions(rows), bs, &o.Synthesis, o.Seed)
		rep.Lines = append(rep.Lines, lines...)
		d, bb, err := traceBlocksDataset(ctx, file, mrows, bs, p, o.Seed)
		if err != nil {
			return nil, err
		}
		rep.Rows = len(rows)
		rep.Lines = append(rep.Lines, bb.lines("; every turn carries its own history")...)
		return d, nil
	case TypeBurstGPT:
		rows, err := readBurstGPT(f, file)
		if err != nil {
			return nil, err
		}
		p, err := newCorpusPrompter(ctx, o.Tokenizer, o.Seed, o.Synthetic.Corpus)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		d, zeros := burstGPTDataset(file, rows, p, o.Seed)
		rep.Rows = len(rows)
		if zeros > 0 {
			rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: %d rows with 0 request or response tokens (failed requests) sent with 1 token instead", zeros))
		}
		return d, nil
	case TypeBaseten:
		var rows []BasetenRow
		var err error
		osf, ok := f.(*os.File)
		if b, bounded := f.(*boundedReader); bounded { // Parquet reads at offsets: the file itself
			osf, ok = b.r.(*os.File)
		}
		if ok && strings.EqualFold(filepath.Ext(file), ".parquet") {
			rows, err = readBasetenParquet(osf, file)
		} else {
			rows, err = readBaseten(f, file)
		}
		if err != nil {
			return nil, err
		}
		d, key := basetenDataset(file, rows, &o.Replay)
		rep.Rows = len(rows)
		if key == "" {
			key = "none (a session per row)"
		}
		rep.Lines = append(rep.Lines, "dataset: baseten sessions by "+key+"; every turn sends its recorded prompt"+basetenSends(&o.Replay))
		return d, nil
	case TypeInputsJSON:
		d, rows, skipped, err := readInputsJSON(f, file)
		if err != nil {
			return nil, err
		}
		rep.Rows = rows
		if skipped > 0 {
			rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: %d payloads the recorded run never sent (null) left out", skipped))
		}
		return d, nil
	}
	return nil, optionErrorf("CustomDatasetType", "%q: not a trace type", kind)
}

// loadTree reads the formats that may be a directory (WEKA, raw_payload).
func loadTree(ctx context.Context, o Options, rep *Report, kind string) (*Dataset, error) {
	switch kind {
	case TypeWeka:
		traces, err := readWeka(ctx, rep.Source, o)
		if err != nil {
			return nil, err
		}
		d, calls, lines, err := wekaDataset(ctx, o, rep.Source, traces)
		if err != nil {
			return nil, err
		}
		rep.Rows = calls
		rep.Lines = append(rep.Lines, lines...)
		return d, nil
	case TypeRawPayload:
		d, rows, err := readRawPayload(ctx, rep.Source, o)
		if err != nil {
			return nil, err
		}
		rep.Rows = rows
		return d, nil
	}
	return nil, optionErrorf("CustomDatasetType", "%q: not a directory type", kind)
}

// wekaDataset builds the conversations of WEKA traces of one block size,
// the model calls read and the report's lines about them.
func wekaDataset(ctx context.Context, o Options, source string, traces []*WekaTrace) (*Dataset, int, []string, error) {
	rows, st := wekaRows(traces, &o.Replay)
	if len(rows) == 0 {
		if st.OverContext > 0 {
			return nil, 0, nil, optionErrorf("Replay.MaxContext", "%d leaves none of the %d traces (each has a longer call context)", o.Replay.MaxContext, st.OverContext)
		}
		return nil, 0, nil, inputErrorf(source, 0, "no model calls to replay")
	}
	p, err := newCorpusPrompter(ctx, o.Tokenizer, o.Seed, o.Synthetic.Corpus)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("%s: %w", TypeWeka, err)
	}
	bs := traces[0].BlockSize
	rows, lines := synthesizeRows(rows, bs, &o.Synthesis, o.Seed)
	if len(rows) == 0 {
		return nil, 0, nil, optionErrorf("Synthesis.MaxISL", "%d leaves none of the %d model calls", o.Synthesis.MaxISL, st.Calls)
	}
	d, bb, err := traceBlocksDataset(ctx, source, rows, bs, p, o.Seed)
	if err != nil {
		return nil, 0, nil, err
	}
	threadWeka(d, rows, bb)
	return d, st.Calls, append(append(lines, st.String()), bb.lines("; every turn carries its own context")...), nil
}

// basetenSends says what a Baseten turn adds to its prompt and how it is
// timed, for the load report.
func basetenSends(r *ReplayOptions) string {
	s := ""
	if !r.NoMinTokens {
		s += ", min_tokens = its recorded output"
	}
	if !r.OmitKVHints {
		s += ", its recorded hash_ids and block_size"
	}
	switch {
	case r.Strict:
		s += "; every row its own session at its recorded time (open loop, strict)"
	case r.ClosedLoop:
		s += "; a later turn a think time after the previous reply (closed loop)"
	default:
		s += "; every turn at its recorded time, or after the previous reply if that is later (open loop)"
	}
	return s
}
