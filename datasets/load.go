package datasets

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/surgebench/surge/datasets/tokenizer/hub"
	"github.com/surgebench/surge/internal/bounded"
)

// Dataset types accepted by --custom-dataset-type.
const (
	TypeSingleTurn = "single_turn"
	TypeMultiTurn  = "multi_turn"
	TypeRandomPool = "random_pool"
	TypeMooncake   = "mooncake_trace"
	TypeAzure      = "azure_trace"
	// TypeBailian is Alibaba Bailian's trace (chat_id/parent_chat_id
	// sessions, 16-token hash blocks).
	TypeBailian = "bailian_trace"
	// TypeBurstGPT is BurstGPT's CSV trace.
	TypeBurstGPT = "burst_gpt_trace"
	// TypeBaseten is Baseten's completion trace, in JSON Lines.
	TypeBaseten = "baseten"
	// TypeWeka is WEKA's agentic (AgentX) trace: a JSON file per session,
	// or a directory of them.
	TypeWeka = "weka"
	// TypeInputsJSON replays a run's inputs.json byte for byte.
	TypeInputsJSON = "inputs_json"
	// TypeRawPayload sends JSON Lines of whole request bodies byte for
	// byte (a directory: a *.jsonl file per conversation).
	TypeRawPayload = "raw_payload"
)

// customTypes are the --custom-dataset-type values, in the order errors
// list them.
var customTypes = []string{TypeSingleTurn, TypeMultiTurn, TypeRandomPool, TypeMooncake, TypeAzure,
	TypeBailian, TypeBurstGPT, TypeBaseten, TypeWeka, TypeInputsJSON, TypeRawPayload}

// TypeSynthetic is the type of a generated dataset (no input file).
const TypeSynthetic = "synthetic"

// PublicShareGPT is the --public-dataset name of ShareGPT.
const PublicShareGPT = "sharegpt"

// ShareGPTCacheName is ShareGPT's file: downloaded once from the Hugging
// Face Hub (PublicSources) when --public-dataset sharegpt has no
// --input-file, unless a copy is in os.UserCacheDir()/surge.
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
	// Hub says where a public dataset is downloaded from and cached (the
	// zero value: the Hugging Face environment, HF_ENDPOINT, HF_TOKEN,
	// HF_HOME…); Progress, when set, sees the download's bytes.
	Hub      hub.Options
	Progress func(done, total int64)
	// PromptCorpus is the text generated prompts are cut from (AIPerf's
	// --prompt-corpus): "sonnet" or "" (the embedded corpus), "coding", or
	// a text file of one sentence a line.
	PromptCorpus string
	// TurnDelayRatio scales every turn's delay, a file's or a synthetic
	// one's (AIPerf's --conversation-turn-delay-ratio); 0 means 1.
	TurnDelayRatio float64
	// NoTurnDelays removes every turn's delay: a ratio of 0 as AIPerf's
	// multiplication has it (TurnDelayRatio's zero value leaves them).
	NoTurnDelays bool
	// HF reads a Hugging Face Hub dataset (HF.Dataset, mapped by
	// HF.Columns), or sets the subset, split and filters of a
	// PublicDataset read from the Hub (every name but sharegpt).
	HF HFOptions
	// OnDemand builds conversations as the run asks for them
	// (Dataset.Source) instead of all of them at Load: synthetic prompts
	// and random_pool draws (memory and start-up no longer grow with how
	// many a run sends, and Synthetic.Count may be 0: no end, OnDemandLen
	// distinct ones; synthetic images and audio are drawn in order and are
	// refused), and a Mooncake trace's turns, its rows kept compact (tens
	// of bytes a row). Other files' rows are held as turns (a trace's
	// prompts always as their blocks, Prompt).
	OnDemand bool
	// AllowInvalidUTF8 reads input files that are not UTF-8 text instead of
	// refusing them at the first such line (ErrInvalidUTF8 says what
	// becomes of the bytes).
	AllowInvalidUTF8 bool
	// Replay reshapes a trace's timing and what its rows send; an option
	// that does not apply to the dataset's type is an *OptionError.
	Replay ReplayOptions
	// Synthesis reshapes a trace's rows before their prompts are built;
	// as Replay, it is refused for a type it cannot reshape.
	Synthesis SynthesisOptions
	// UserContextLength (> 0) gives every synthetic conversation a user
	// context prompt of its own of that many tokens.
	UserContextLength int
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
// except by the ShareGPT filter, whose counts are in the Report. Lengths
// over the limits (MaxRequestTokens, MaxLineBytes, ...) are bad input,
// found before memory is spent on them.
func Load(o Options) (*Dataset, *Report, error) {
	return LoadContext(context.Background(), o)
}

// LoadContext is Load that stops soon after ctx is done (reading a file,
// building prompts), returning an error that wraps ctx's.
func LoadContext(ctx context.Context, o Options) (*Dataset, *Report, error) {
	d, rep, err := load(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	if err := o.Replay.Check(d.Type); err != nil {
		return nil, nil, err
	}
	if err := o.Synthesis.Check(d.Type); err != nil {
		return nil, nil, err
	}
	if d, err = addUserContexts(ctx, d, &o); err != nil {
		return nil, nil, err
	}
	switch d.Type {
	case TypeAzure, TypeBurstGPT, TypeBaseten: // no hash ids: the built turns
		rep.Lines = append(rep.Lines, synthesizeTurns(d, &o.Synthesis)...)
	}
	if len(d.Conversations) == 0 && o.Synthesis.MaxISL > 0 {
		return nil, nil, optionErrorf("Synthesis.MaxISL", "%d leaves none of the trace's rows", o.Synthesis.MaxISL)
	}
	rep.Lines = append(rep.Lines, applyReplay(d, &o.Replay, o.Seed)...)
	if len(d.Conversations) != rep.Conversations {
		rep.Conversations, rep.Turns = len(d.Conversations), 0
		for _, c := range d.Conversations {
			rep.Turns += len(c.Turns)
		}
	}
	if line := checkToolResults(d); line != "" {
		rep.Lines = append(rep.Lines, line)
	}
	switch r := o.TurnDelayRatio; {
	case r < 0 || math.IsNaN(r) || math.IsInf(r, 0):
		return nil, nil, optionErrorf("TurnDelayRatio", "must be a finite number ≥ 0, got %g", r)
	case d.Source != nil && (o.NoTurnDelays || r != 0 && r != 1):
		if o.NoTurnDelays {
			r = 0
		}
		if sc, ok := d.Source.(interface{ scaleDelays(float64) }); ok {
			sc.scaleDelays(r)
		}
		rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: turn delays scaled by %g", r))
	case o.NoTurnDelays:
		scaleDelays(d, 0)
		rep.Lines = append(rep.Lines, "dataset: turn delays removed (ratio 0)")
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
				if t.HasTimestamp {
					t.RecordedDelay = t.RecordedThink()
				}
				t.Delay = time.Duration(math.Round(float64(t.Delay) * r))
				done[t] = true
			}
		}
	}
}

// load is Load before the delays are scaled.
func load(ctx context.Context, o Options) (*Dataset, *Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("loading the dataset: %w", err)
	}
	o.Synthetic.Seed = o.Seed
	corpus, err := promptCorpus(o.PromptCorpus)
	if err != nil {
		return nil, nil, err
	}
	o.Synthetic.Corpus = corpus
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
	if err := tokensOption("ISLBlockSize", bs); err != nil {
		return nil, nil, err
	}
	rep := &Report{Source: o.InputFile}
	kind := o.CustomDatasetType

	if o.HF.set() || o.PublicDataset != "" && o.PublicDataset != PublicShareGPT {
		switch {
		case o.PublicDataset == PublicShareGPT:
			return nil, nil, optionErrorf("PublicDataset", "sharegpt reads its own file: the Hugging Face dataset options do not apply to it")
		case kind != "":
			return nil, nil, optionErrorf("CustomDatasetType", "excludes a Hugging Face dataset (give one of them)")
		case o.InputFile != "":
			return nil, nil, optionErrorf("InputFile", "excludes a Hugging Face dataset (give one of them)")
		}
		d, err := loadHub(ctx, o, rep)
		if err != nil {
			return nil, nil, err
		}
		return d, rep, nil
	}
	switch o.PublicDataset {
	case "":
	case PublicShareGPT:
		if kind != "" {
			return nil, nil, optionErrorf("PublicDataset", "excludes a custom dataset type (give one of them)")
		}
		kind = PublicShareGPT
		if rep.Source == "" {
			p, err := publicFile(o, o.PublicDataset)
			if err != nil {
				return nil, nil, err
			}
			rep.Source = p
		}
	}

	if rep.Source == "" {
		if kind != "" {
			return nil, nil, optionErrorf("CustomDatasetType", "%s needs an input file", kind)
		}
		d, err := synthetic(ctx, o.Synthetic, o.OnDemand)
		if err != nil {
			return nil, nil, err
		}
		rep.Source, rep.Type, d.Type = "synthetic", TypeSynthetic, TypeSynthetic
		osl := fmt.Sprintf("OSL %d±%g", o.Synthetic.OSL, o.Synthetic.OSLStddev)
		if o.Synthetic.OSL <= 0 {
			osl = "OSL the server's default" // no cap is sent
		}
		head := fmt.Sprintf("dataset: synthetic, prompts of ISL %d±%g tokens, %s, seed %d",
			o.Synthetic.ISL, o.Synthetic.ISLStddev, osl, o.Seed)
		switch so := o.Synthetic; {
		case so.SeqDist != nil:
			head = fmt.Sprintf("dataset: synthetic, ISL,OSL pairs drawn from %s (weights in %%), seed %d", so.SeqDist, o.Seed)
		case so.RangeRatio > 0:
			head = fmt.Sprintf("dataset: synthetic, prompts of ISL %d, OSL %d, each uniform within ±%g of its mean, seed %d", so.ISL, so.OSL, so.RangeRatio, o.Seed)
		}
		if o.PromptCorpus != "" {
			head += ", corpus " + o.PromptCorpus
		}
		if so := o.Synthetic; so.Turns > 1 || so.TurnsStddev > 0 {
			head += fmt.Sprintf(", %d±%d turns a conversation, %s±%s apart", max(so.Turns, 1), so.TurnsStddev, so.TurnDelay, so.TurnDelayStddev)
		}
		rep.Lines = append(rep.Lines, mediaLines(d)...)
		rep.finish(d, head)
		return d, rep, nil
	}

	if st, err := os.Stat(rep.Source); err == nil && st.IsDir() && kind != TypeWeka && kind != TypeRawPayload {
		return nil, nil, optionErrorf("InputFile", "%s is a folder: only %s and %s read folders (give one with the custom dataset type)", rep.Source, TypeWeka, TypeRawPayload)
	}
	if kind == TypeWeka || kind == TypeRawPayload {
		// Either may be a directory of files.
		d, err := loadTree(ctx, o, rep, kind)
		if err != nil {
			return nil, nil, err
		}
		d.Type, rep.Type = kind, kind
		rep.finish(d, fmt.Sprintf("dataset: %s %s: %d rows", kind, rep.Source, rep.Rows))
		return d, rep, nil
	}
	file, err := bounded.OpenStream(ctx, rep.Source)
	if err != nil {
		return nil, nil, openError(ctx, rep.Source, err)
	}
	defer file.Close()
	// A read that blocks (a FIFO, a stalled network file) ends when the
	// file is closed: do that when ctx is done.
	defer context.AfterFunc(ctx, func() { file.Close() })()
	if st, err := file.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		le := &LimitError{What: "file", Got: st.Size(), Limit: MaxFileBytes, Unit: "bytes"}
		return nil, nil, &InputError{File: rep.Source, Msg: le.Error(), Err: le}
	}
	if kind == "" {
		kind, err = guessType(ctx, file, rep.Source)
		if err != nil {
			return nil, nil, err
		}
		rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: no --custom-dataset-type given; %s looks like %s", rep.Source, kind))
	}
	rep.Type = kind
	// Every reader below reads through f: bounded by MaxFileBytes and
	// stopped by ctx.
	f := newBoundedReader(ctx, file)
	if !o.AllowInvalidUTF8 {
		f.checkUTF8(rep.Source)
	}

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
		d, rep.Rows, err = readRandomPool(f, rep.Source, o.Synthetic.Count, o.Seed, o.OnDemand)
	case TypeMooncake:
		p, perr := newCorpusPrompter(ctx, o.Tokenizer, o.Seed, o.Synthetic.Corpus)
		if perr != nil {
			return nil, nil, fmt.Errorf("%s: %w", kind, perr)
		}
		var bb *blockStats
		if o.Synthesis.any() {
			// Synthesis reshapes the trace as a whole (its prefix tree, its
			// timing): its rows are read first, then built, held (and so is
			// a trace whose replay options reshape its conversations).
			var rows []MooncakeRow
			if rows, err = readMooncakeRows(ctx, f, rep.Source, bs); err != nil {
				return nil, nil, err
			}
			var lines []string
			rows, lines = synthesizeRows(rows, bs, &o.Synthesis, o.Seed)
			rep.Lines = append(rep.Lines, lines...)
			if d, bb, err = mooncakeDataset(ctx, rep.Source, rows, bs, p, o.Seed); err != nil {
				return nil, nil, err
			}
			rep.Rows = len(rows)
		} else if d, bb, rep.Rows, err = readMooncake(ctx, f, rep.Source, bs, p, o.Seed, o.OnDemand && !o.Replay.any()); err != nil {
			return nil, nil, err
		}
		rep.Lines = append(rep.Lines, bb.lines("")...)
	case TypeAzure:
		var rows []AzureRow
		if rows, err = readAzure(f, rep.Source); err != nil {
			return nil, nil, err
		}
		p, perr := newCorpusPrompter(ctx, o.Tokenizer, o.Seed, o.Synthetic.Corpus)
		if perr != nil {
			return nil, nil, fmt.Errorf("%s: %w", kind, perr)
		}
		if d, err = azureDataset(ctx, rep.Source, rows, p, o.Seed); err != nil {
			return nil, nil, err
		}
		rep.Rows = len(rows)
	case TypeBailian, TypeBurstGPT, TypeBaseten, TypeInputsJSON:
		d, err = loadTrace(ctx, o, rep, kind, f)
	case PublicShareGPT:
		// A JSON array or nothing: refuse anything else (/dev/zero) before
		// reading it whole.
		br := bufio.NewReaderSize(f, 64<<10)
		head, perr := br.Peek(64 << 10)
		var ie *InputError
		if errors.As(perr, &ie) {
			return nil, nil, ie // not UTF-8
		}
		if head = bytes.TrimLeft(head, " \t\r\n"); len(head) > 0 && head[0] != '[' {
			return nil, nil, inputErrorf(rep.Source, 1, "want a JSON array of conversations")
		}
		var st ShareGPTStats
		d, st, err = readShareGPT(ctx, br, rep.Source, tok)
		rep.ShareGPT = &st
		rep.Rows = st.Total
		if err == nil {
			rep.Lines = append(rep.Lines, st.String())
		}
	default:
		return nil, nil, optionErrorf("CustomDatasetType", "%q: unknown (known: %s)", kind, strings.Join(customTypes, ", "))
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
	r.Conversations = d.Len()
	var line string
	if d.Source != nil {
		if u := d.Source.UniformTurns(); u > 0 {
			r.Turns = r.Conversations * u
		}
		line = fmt.Sprintf("%s → %d conversations, built as they are sent", headline, r.Conversations)
		if r.Conversations == OnDemandLen {
			line = headline + " → conversations built as they are sent, as many as the run sends, none repeated"
		}
		r.Lines = append([]string{line}, r.Lines...)
		return
	}
	for _, c := range d.Conversations {
		r.Turns += len(c.Turns)
	}
	line = fmt.Sprintf("%s → %d conversations, %d turns", headline, r.Conversations, r.Turns)
	if d.HasTimestamps() {
		line += " (timestamped: replayable with --fixed-schedule)"
	}
	r.Lines = append([]string{line}, r.Lines...)
}

// guessType names the format of an input file from its extension and, for
// JSONL, the fields of its first line; it rewinds f.
func guessType(ctx context.Context, f *os.File, file string) (string, error) {
	defer f.Seek(0, 0)
	lr := newLineReader(newBoundedReader(ctx, f), file)
	switch strings.ToLower(filepath.Ext(file)) {
	case ".parquet":
		return TypeBaseten, nil
	case ".csv":
		if head, _, _ := lr.next(); strings.Contains(string(head), "Request tokens") {
			return TypeBurstGPT, nil
		}
		return TypeAzure, nil
	case ".json":
		if head, _, _ := lr.next(); strings.HasPrefix(strings.TrimSpace(string(head)), "{") {
			return TypeInputsJSON, nil
		}
		return PublicShareGPT, nil
	}
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
		case strings.Contains(s, `"chat_id"`) && strings.Contains(s, `"parent_chat_id"`):
			return TypeBailian, nil
		case strings.Contains(s, `"timestamp_start_unix_ms"`):
			return TypeBaseten, nil
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
