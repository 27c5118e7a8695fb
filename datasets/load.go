package datasets

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Dataset types accepted by --custom-dataset-type.
const (
	TypeSingleTurn = "single_turn"
	TypeMultiTurn  = "multi_turn"
	TypeRandomPool = "random_pool"
	TypeMooncake   = "mooncake_trace"
	TypeAzure      = "azure_trace"
)

// TypeSynthetic is the type of a generated dataset (no input file).
const TypeSynthetic = "synthetic"

// PublicShareGPT is the --public-dataset name of ShareGPT.
const PublicShareGPT = "sharegpt"

// ShareGPTCacheName is the file looked for in the cache directory
// (os.UserCacheDir()/surge) when --public-dataset sharegpt has no
// --input-file. surge never downloads it: fetch it once and put it there.
const ShareGPTCacheName = "ShareGPT_V3_unfiltered_cleaned_split.json"

// Options selects and shapes a workload; the fields map to CLI flags.
type Options struct {
	// InputFile, CustomDatasetType and PublicDataset are --input-file,
	// --custom-dataset-type and --public-dataset. With no input file and no
	// public dataset the workload is synthetic. An input file without a
	// type has it guessed from the extension and first line (the Report
	// says what was guessed).
	InputFile, CustomDatasetType, PublicDataset string
	// Synthetic shapes generated prompts (--isl, --osl, prefixes);
	// Synthetic.Count is also how many conversations random_pool draws.
	Synthetic SyntheticOptions
	// ISLBlockSize is the Mooncake block size (--isl-block-size); 0 means
	// DefaultISLBlockSize.
	ISLBlockSize int
	// Tokenizer measures and builds prompts; nil uses the embedded default.
	Tokenizer Tokenizer
	// Seed (--random-seed) makes every generated prompt and every random
	// draw reproducible; it overrides Synthetic.Seed.
	Seed uint64
	// TurnDelayRatio scales every turn's delay, a file's or a synthetic
	// one's (AIPerf's --conversation-turn-delay-ratio); 0 means 1.
	TurnDelayRatio float64
}

// Report describes a loaded dataset in lines for the run to print.
type Report struct {
	// Source is the file read, or "synthetic".
	Source string
	// Type is the dataset type used (guessed or given).
	Type string
	// Rows is the number of records read from the file (0 for synthetic).
	Rows int
	// Conversations and Turns count the dataset built.
	Conversations, Turns int
	// ShareGPT holds the filter counts for --public-dataset sharegpt.
	ShareGPT *ShareGPTStats
	// Lines are human-readable lines: source, counts, filter counts.
	Lines []string
}

// Load builds the workload Options describe. Bad input comes back as an
// *InputError ("file:line: what is wrong"); nothing is skipped silently
// except by the ShareGPT filter, whose counts are in the Report.
func Load(o Options) (*Dataset, *Report, error) {
	d, rep, err := load(o)
	if err != nil {
		return nil, nil, err
	}
	switch r := o.TurnDelayRatio; {
	case r < 0 || math.IsNaN(r) || math.IsInf(r, 0):
		return nil, nil, optionErrorf("TurnDelayRatio", "must be a finite number ≥ 0, got %g", r)
	case r != 0 && r != 1:
		scaleDelays(d, r)
		rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: turn delays scaled by %g", r))
	}
	return d, rep, nil
}

// scaleDelays multiplies every turn's delay by r. Turns a dataset shares
// between conversations (a random pool's) are scaled once.
func scaleDelays(d *Dataset, r float64) {
	done := map[*Turn]bool{}
	for i := range d.Conversations {
		for j := range d.Conversations[i].Turns {
			t := &d.Conversations[i].Turns[j]
			if !done[t] {
				t.Delay = time.Duration(math.Round(float64(t.Delay) * r))
				done[t] = true
			}
		}
	}
}

// load is Load before the delays are scaled.
func load(o Options) (*Dataset, *Report, error) {
	o.Synthetic.Seed = o.Seed
	if o.Synthetic.Tokenizer == nil {
		o.Synthetic.Tokenizer = o.Tokenizer
	}
	bs := o.ISLBlockSize
	if bs == 0 {
		bs = DefaultISLBlockSize
	}
	if bs < 0 {
		return nil, nil, optionErrorf("ISLBlockSize", "must be positive, got %d", bs)
	}
	rep := &Report{Source: o.InputFile}
	kind := o.CustomDatasetType

	switch o.PublicDataset {
	case "":
	case PublicShareGPT:
		if kind != "" {
			return nil, nil, optionErrorf("PublicDataset", "excludes a custom dataset type (give one of them)")
		}
		kind = PublicShareGPT
		if rep.Source == "" {
			dir, err := os.UserCacheDir()
			if err != nil {
				return nil, nil, &OptionError{Option: "PublicDataset", Reason: "sharegpt: no input file and no cache directory: " + err.Error(), Err: err}
			}
			rep.Source = filepath.Join(dir, "surge", ShareGPTCacheName)
			if _, err := os.Stat(rep.Source); err != nil {
				return nil, nil, &OptionError{Option: "PublicDataset", Reason: fmt.Sprintf("sharegpt: no input file given and %s is missing (surge does not download; fetch ShareGPT_V3 yourself and pass it as the input file): %v", rep.Source, err), Err: err}
			}
		}
	default:
		return nil, nil, optionErrorf("PublicDataset", "%q: unknown (known: %s)", o.PublicDataset, PublicShareGPT)
	}

	if rep.Source == "" {
		if kind != "" {
			return nil, nil, optionErrorf("CustomDatasetType", "%s needs an input file", kind)
		}
		d, err := Synthetic(o.Synthetic)
		if err != nil {
			return nil, nil, err
		}
		rep.Source, rep.Type, d.Type = "synthetic", TypeSynthetic, TypeSynthetic
		head := fmt.Sprintf("dataset: synthetic, prompts of ISL %d±%g tokens, OSL %d±%g, seed %d",
			o.Synthetic.ISL, o.Synthetic.ISLStddev, o.Synthetic.OSL, o.Synthetic.OSLStddev, o.Seed)
		if so := o.Synthetic; so.Turns > 1 || so.TurnsStddev > 0 {
			head += fmt.Sprintf(", %d±%d turns a conversation, %s±%s apart", max(so.Turns, 1), so.TurnsStddev, so.TurnDelay, so.TurnDelayStddev)
		}
		rep.Lines = append(rep.Lines, mediaLines(d)...)
		rep.finish(d, head)
		return d, rep, nil
	}

	f, err := os.Open(rep.Source)
	if err != nil {
		return nil, nil, &InputError{File: rep.Source, Msg: fmt.Sprintf("cannot read the input file: %v", err), Err: err}
	}
	defer f.Close()
	if kind == "" {
		kind, err = guessType(f, rep.Source)
		if err != nil {
			return nil, nil, err
		}
		rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: no --custom-dataset-type given; %s looks like %s", rep.Source, kind))
	}
	rep.Type = kind

	// Mooncake and Azure prompts are cut from the corpus (newPrompter
	// knows the default tokenizer's view of it without parsing it);
	// ShareGPT's conversations are measured with the tokenizer itself.
	var tok Tokenizer
	if kind == PublicShareGPT {
		if tok, err = tokenizerOrDefault(o.Tokenizer); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", kind, err)
		}
	}
	var d *Dataset
	switch kind {
	case TypeSingleTurn:
		d, err = readSingleTurn(f, rep.Source)
		if err == nil {
			rep.Rows = len(d.Conversations)
		}
	case TypeMultiTurn:
		d, err = readMultiTurn(f, rep.Source)
		if err == nil {
			rep.Rows = len(d.Conversations)
		}
	case TypeRandomPool:
		d, rep.Rows, err = readRandomPool(f, rep.Source, o.Synthetic.Count, o.Seed)
	case TypeMooncake:
		var rows []MooncakeRow
		if rows, err = readMooncake(f, rep.Source, bs); err != nil {
			return nil, nil, err
		}
		p, perr := newPrompter(o.Tokenizer, o.Seed)
		if perr != nil {
			return nil, nil, fmt.Errorf("%s: %w", kind, perr)
		}
		var bb *blockBuilder
		d, bb = mooncakeDataset(rep.Source, rows, bs, p, o.Seed)
		rep.Rows = len(rows)
		rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: %d distinct full prefix blocks of %d tokens built once and shared", len(bb.full), bs))
		if bb.short > 0 {
			rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: %d blocks came out one token short (no clean cut)", bb.short))
		}
	case TypeAzure:
		var rows []AzureRow
		if rows, err = readAzure(f, rep.Source); err != nil {
			return nil, nil, err
		}
		p, perr := newPrompter(o.Tokenizer, o.Seed)
		if perr != nil {
			return nil, nil, fmt.Errorf("%s: %w", kind, perr)
		}
		d = azureDataset(rep.Source, rows, p, o.Seed)
		rep.Rows = len(rows)
	case PublicShareGPT:
		data, rerr := os.ReadFile(rep.Source)
		if rerr != nil {
			return nil, nil, &InputError{File: rep.Source, Msg: fmt.Sprintf("cannot read the input file: %v", rerr), Err: rerr}
		}
		var st ShareGPTStats
		d, st, err = readShareGPT(data, rep.Source, tok)
		rep.ShareGPT = &st
		rep.Rows = st.Total
		if err == nil {
			rep.Lines = append(rep.Lines, st.String())
		}
	default:
		return nil, nil, optionErrorf("CustomDatasetType", "%q: unknown (known: %s)", kind,
			strings.Join([]string{TypeSingleTurn, TypeMultiTurn, TypeRandomPool, TypeMooncake, TypeAzure}, ", "))
	}
	if err != nil {
		return nil, nil, err
	}
	d.Type = kind
	rep.Lines = append(rep.Lines, mediaLines(d)...)
	rep.finish(d, fmt.Sprintf("dataset: %s %s: %d rows", kind, rep.Source, rep.Rows))
	return d, rep, nil
}

// finish counts the dataset and puts the headline first.
func (r *Report) finish(d *Dataset, headline string) {
	r.Conversations = len(d.Conversations)
	for _, c := range d.Conversations {
		r.Turns += len(c.Turns)
	}
	line := fmt.Sprintf("%s → %d conversations, %d turns", headline, r.Conversations, r.Turns)
	if d.HasTimestamps() {
		line += " (timestamped: replayable with --fixed-schedule)"
	}
	r.Lines = append([]string{line}, r.Lines...)
}

// guessType names the format of an input file from its extension and, for
// JSONL, the fields of its first line; it rewinds f.
func guessType(f *os.File, file string) (string, error) {
	defer f.Seek(0, 0)
	switch strings.ToLower(filepath.Ext(file)) {
	case ".csv":
		return TypeAzure, nil
	case ".json":
		return PublicShareGPT, nil
	}
	lr := newLineReader(f, file)
	for {
		b, ok, err := lr.next()
		if err != nil {
			return "", err
		}
		if !ok {
			return "", inputErrorf(file, 0, "no rows")
		}
		if blank(b) {
			continue
		}
		s := string(b)
		switch {
		case strings.Contains(s, `"hash_ids"`) || strings.Contains(s, `"input_length"`) || strings.Contains(s, `"text_input"`) ||
			strings.Contains(s, `"payload"`) || strings.Contains(s, `"messages"`):
			return TypeMooncake, nil
		case strings.Contains(s, `"turns"`):
			return TypeMultiTurn, nil
		case strings.HasPrefix(strings.TrimSpace(s), "["):
			return PublicShareGPT, nil
		}
		return TypeSingleTurn, nil
	}
}
