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
		p, err := newCorpusPrompter(o.Tokenizer, o.Seed, o.Synthetic.Corpus)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		d, bb, err := traceBlocksDataset(ctx, file, bailianSessions(rows), bs, p, o.Seed)
		if err != nil {
			return nil, err
		}
		rep.Rows = len(rows)
		rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: %d distinct full prefix blocks of %d tokens built once and shared; every turn carries its own history", len(bb.full), bs))
		return d, nil
	case TypeBurstGPT:
		rows, err := readBurstGPT(f, file)
		if err != nil {
			return nil, err
		}
		p, err := newCorpusPrompter(o.Tokenizer, o.Seed, o.Synthetic.Corpus)
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
		d, key := basetenDataset(file, rows)
		rep.Rows = len(rows)
		if key == "" {
			key = "none (a session per row)"
		}
		rep.Lines = append(rep.Lines, "dataset: baseten sessions by "+key+"; every turn sends its recorded prompt, min_tokens = its recorded output")
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
		traces, err := readWeka(rep.Source)
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
		d, rows, err := readRawPayload(rep.Source)
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
	rows, st := wekaRows(traces)
	if len(rows) == 0 {
		return nil, 0, nil, inputErrorf(source, 0, "no model calls to replay")
	}
	p, err := newCorpusPrompter(o.Tokenizer, o.Seed, o.Synthetic.Corpus)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("%s: %w", TypeWeka, err)
	}
	bs := traces[0].BlockSize
	d, bb, err := traceBlocksDataset(ctx, source, rows, bs, p, o.Seed)
	if err != nil {
		return nil, 0, nil, err
	}
	threadWeka(d, rows, bb)
	return d, st.Calls, []string{st.String(),
		fmt.Sprintf("dataset: %d distinct full prefix blocks of %d tokens built once and shared; every turn carries its own context", len(bb.full), bs)}, nil
}
