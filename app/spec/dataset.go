package spec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/media"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/datasets/tokenizer/hub"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// Dataset is what to send: a file, a public dataset or synthetic prompts
// of a shape, and what every conversation adds (a system prompt, rankings
// passages).
type Dataset struct {
	InputFile, Type, Public string
	// ChatOverhead is the model's chat template's wrapping, taken off
	// synthetic turns (--apply-chat-template). Parse leaves it zero: the
	// run fills it in once it has read the template (app/profile).
	ChatOverhead datasets.TemplateOverhead
	ISLBlockSize int
	// ISL and OSL (with their spreads) shape synthetic prompts and output
	// caps; for the rankings types the query's length comes from
	// QueryTokens when given (QueryLength).
	ISL, OSL                     int
	ISLStddev, OSLStddev         float64
	RangeRatio                   float64
	SeqDist                      *datasets.SeqDist
	PromptCorpus                 string
	PrefixPoolSize, PrefixLength int
	SharedSystemPromptLength     int
	// UserContextLength gives every synthetic conversation a user context
	// prompt of its own (--user-context-prompt-length; 0: none).
	UserContextLength int
	// TextBatch is how many texts an embeddings request carries
	// (--batch-size-text; 1: one).
	TextBatch int
	Images    media.ImageOptions
	Audio     media.AudioOptions
	// TurnsMean and TurnsStddev shape synthetic conversations.
	TurnsMean, TurnsStddev int
	// Entries is --num-dataset-entries (0: one conversation per session).
	Entries int
	// Sampling is --dataset-sampling-strategy ("": the dataset type's
	// default).
	Sampling string
	// SystemPrompt is --system-prompt, or --system-prompt-file's text.
	SystemPrompt string
	// Rankings is set for the rankings types, which rank Passages
	// (generated where the dataset gives none).
	Rankings bool
	Passages datasets.PassageOptions
	// QueryTokens and QueryTokensStddev are a synthetic rankings query's
	// length (0: --isl, --isl-stddev).
	QueryTokens, QueryTokensStddev int
	// AllowInvalidUTF8 reads input that is not UTF-8 instead of refusing
	// it by file:line.
	AllowInvalidUTF8 bool
	// MaxMemory is the bytes the dataset and the requests in flight may
	// take (0: three quarters of the machine's memory).
	MaxMemory int64
	// Replay reshapes a trace's replay (AIPerf's trace replay flags), and
	// Wrap says whether a WEKA replay may reuse its traces.
	Replay datasets.ReplayOptions
	Wrap   Wrap
	// Synthesis reshapes a trace's rows (AIPerf's --synthesis-* flags).
	Synthesis datasets.SynthesisOptions
	// CacheBust is where a marker a session defeats a prefix cache
	// (--cache-bust: datasets.CacheBust*; "": none).
	CacheBust string
	// HF is the Hugging Face Hub dataset (--hf-dataset, or
	// --hf-weka-dataset with Public weka_hf) and the subset, split, columns
	// and filters of it or of a public dataset; its Rows is the run's to
	// say.
	HF datasets.HFOptions
}

// Synthetic reports whether the prompts are synthetic (no file, no public
// or Hub dataset, not rankings).
func (d *Dataset) Synthetic() bool {
	return d.InputFile == "" && d.Public == "" && d.HF.Dataset == "" && !d.Rankings
}

// datasetGiven reports whether the flags name a dataset (a file, a public
// or a Hub dataset), which brings its own prompts and media.
func datasetGiven(c *cmdline.Config) bool {
	return c.InputFile != "" || c.PublicDataset != "" || c.HFDataset != "" || c.HFWekaDataset != ""
}

// QueryLength is the synthetic prompt length: for the rankings types the
// --rankings-query-prompt-token-* flags, each defaulting to its --isl
// counterpart.
func (d *Dataset) QueryLength() (mean int, stddev float64) {
	if !d.Rankings {
		return d.ISL, d.ISLStddev
	}
	mean, stddev = d.ISL, d.ISLStddev
	if d.QueryTokens > 0 {
		mean = d.QueryTokens
	}
	if d.QueryTokens > 0 || d.QueryTokensStddev > 0 {
		stddev = float64(d.QueryTokensStddev)
	}
	return mean, stddev
}

// maxSystemPrompt bounds --system-prompt-file.
const maxSystemPrompt = 1 << 20

// parseDataset reads the dataset flags: the source, the synthetic shape
// (media and --seq-dist parsed), the system prompt (its file read here).
func parseDataset(s *Spec, c *cmdline.Config) error {
	d := &s.Dataset
	*d = Dataset{InputFile: c.InputFile, Type: c.CustomDatasetType, Public: c.PublicDataset, ISLBlockSize: c.ISLBlockSize,
		ISL: c.ISL, OSL: c.OSL, ISLStddev: c.ISLStddev, OSLStddev: c.OSLStddev, RangeRatio: c.RangeRatio,
		PromptCorpus: c.PromptCorpus, PrefixPoolSize: c.PrefixPoolSize, PrefixLength: c.PrefixLength,
		SharedSystemPromptLength: c.SharedSystemPromptLength, Images: imageOptions(c),
		TurnsMean: c.TurnsMean, TurnsStddev: c.TurnsStddev, Entries: c.NumDatasetEntries, Sampling: c.SamplingStrategy,
		Rankings: s.Endpoint.Info().Rankings, QueryTokens: c.RankingsQueryTokens, QueryTokensStddev: c.RankingsQueryTokensStddev,
		Passages: datasets.PassageOptions{Count: c.RankingsPassagesMean, CountStddev: c.RankingsPassagesStddev,
			ISL: c.RankingsPassageTokens, ISLStddev: c.RankingsPassageTokensStddev},
		AllowInvalidUTF8: c.AllowInvalidUTF8}
	switch {
	case c.UserContextLength < 0:
		return cmdline.Usagef("--user-context-prompt-length must be ≥ 1, got %d", c.UserContextLength)
	case c.UserContextLength == 0:
	case c.PrefixPoolSize > 0 || c.PrefixLength > 0:
		return cmdline.Usagef("--user-context-prompt-length and --prompt-prefix-pool-size/--prompt-prefix-length cannot be used together")
	case !d.Synthetic():
		return cmdline.Usagef("--user-context-prompt-length shapes synthetic prompts: not with an input file or public dataset")
	}
	d.UserContextLength = c.UserContextLength
	d.TextBatch = max(c.TextBatchSize, 1)
	switch kind := s.Endpoint.Kind; {
	case c.TextBatchSize < 0:
		return cmdline.Usagef("--batch-size-text must be ≥ 1, got %d", c.TextBatchSize)
	case d.TextBatch == 1:
	case kind != endpoint.Embeddings && kind != endpoint.NIMEmbeddings:
		return cmdline.Usagef("--batch-size-text %d batches the texts of an embeddings request (embeddings, nim_embeddings): endpoint type %s sends one (a rankings request's inputs are its --rankings-passages-mean passages)", c.TextBatchSize, kind)
	case !d.Synthetic():
		return cmdline.Usagef("--batch-size-text %d batches synthetic texts: a dataset file gives each request's own", c.TextBatchSize)
	}
	if d.Rankings && (c.RankingsQueryTokens < 0 || c.RankingsQueryTokensStddev < 0) {
		return cmdline.Usagef("--rankings-query-prompt-token-mean and -stddev must not be negative")
	}
	var err error
	if d.MaxMemory, err = parseBytes(c.MaxMemory); err != nil {
		return cmdline.Usagef("--max-memory %q: %v", c.MaxMemory, err)
	}
	if d.Audio, err = audioOptions(c); err != nil {
		return err
	}
	if c.SeqDist != "" {
		if d.SeqDist, err = datasets.ParseSeqDist(c.SeqDist); err != nil {
			return cmdline.Usagef("--seq-dist %q: %v", c.SeqDist, err)
		}
	}
	if err := parseHub(d, c); err != nil {
		return err
	}
	d.SystemPrompt, err = systemPrompt(c)
	return err
}

// byteUnits are the suffixes parseBytes takes: powers of 1000 and of
// 1024, in any case, with or without the B.
var byteUnits = map[string]float64{"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40}

// parseBytes reads a size such as 4GiB, 512MB, 2.5G or 1000000 ("": 0),
// between 64 MiB and 1 PiB (a memory budget).
func parseBytes(v string) (int64, error) { return parseSize(v, 64<<20, 1<<50) }

// parseSize reads a size as parseBytes does, between lo and hi bytes.
func parseSize(v string, lo, hi int64) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(v)
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	unit, ok := byteUnits[strings.ToLower(strings.TrimSpace(v[i:]))]
	switch {
	case err != nil || !ok:
		return 0, errors.New("want a size such as 4GiB, 512MiB or 8GB")
	case n*unit < float64(lo) || n*unit > float64(hi):
		return 0, fmt.Errorf("want between %s and %s", sizeText(lo), sizeText(hi))
	}
	return int64(n * unit), nil
}

// sizeText writes a power-of-two size as parseSize reads it back.
func sizeText(n int64) string {
	for _, u := range []struct {
		s    string
		size int64
	}{{"PiB", 1 << 50}, {"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// wekaHF is the public dataset --hf-weka-dataset selects.
const wekaHF = "weka_hf"

// parseHub checks the public dataset's name and the Hub dataset flags
// against each other, so that a name surge refuses, a bad column mapping
// or a flag that would not apply is a usage error before any download.
func parseHub(d *Dataset, c *cmdline.Config) error {
	d.HF = datasets.HFOptions{Dataset: c.HFDataset, Subset: c.HFSubset, Split: c.HFSplit, Columns: c.HFColumns, Filters: c.DatasetFilters}
	if w := c.HFWekaDataset; w != "" {
		switch {
		case d.Public != "" && d.Public != wekaHF:
			return cmdline.Usagef("--hf-weka-dataset %s reads --public-dataset %s, not %s: drop --public-dataset", w, wekaHF, d.Public)
		case d.HF.Dataset != "" && d.HF.Dataset != w:
			return cmdline.Usagef("--hf-weka-dataset %s and --hf-dataset %s: give one", w, d.HF.Dataset)
		}
		d.Public, d.HF.Dataset = wekaHF, w
	}
	hubFlag := ""
	for _, f := range []struct {
		flag string
		set  bool
	}{{"--hf-subset", c.HFSubset != ""}, {"--hf-split", c.HFSplit != ""}, {"--hf-column", len(c.HFColumns) > 0}, {"--dataset-filter", len(c.DatasetFilters) > 0}} {
		if f.set {
			hubFlag = f.flag
			break
		}
	}
	if d.HF.Dataset != "" && (!hub.IsRepoID(d.HF.Dataset) || !strings.Contains(d.HF.Dataset, "/")) {
		return cmdline.Usagef("--hf-dataset %q: not a Hugging Face dataset id (ORG/NAME)", d.HF.Dataset)
	}
	var pub datasets.PublicDataset
	if d.Public != "" {
		var known bool
		for _, p := range datasets.PublicDatasets() {
			if p.Name == d.Public {
				pub, known = p, true
			}
		}
		switch {
		case !known:
			return cmdline.Usagef("--public-dataset %q: unknown (surge reads %s; docs/workloads.md lists AIPerf's every name)", d.Public, strings.Join(datasets.PublicNames(), ", "))
		case pub.Refused != "":
			return cmdline.Usagef("--public-dataset %s: refused: %s (%s)", pub.Name, pub.Refused, pub.Fix)
		case pub.Name == datasets.PublicShareGPT && (hubFlag != "" || d.HF.Dataset != ""):
			if hubFlag == "" {
				hubFlag = "--hf-dataset"
			}
			return cmdline.Usagef("%s does not apply to --public-dataset sharegpt, which reads its own file", hubFlag)
		case pub.Name == datasets.PublicShareGPT:
			return nil
		case c.InputFile != "" || c.CustomDatasetType != "":
			return cmdline.Usagef("--public-dataset %s is read from the Hugging Face Hub: drop --input-file and --custom-dataset-type", pub.Name)
		case len(c.HFColumns) > 0:
			return cmdline.Usagef("--hf-column does not apply to --public-dataset %s, which maps its own columns (--hf-dataset %s maps others)", pub.Name, pub.Repo)
		case pub.Repo == "" && d.HF.Dataset == "":
			return cmdline.Usagef("--public-dataset %s reads the WEKA traces of a Hub dataset: name it with --hf-dataset ORG/NAME (or --hf-weka-dataset)", pub.Name)
		case pub.Repo != "" && d.HF.Dataset != "":
			return cmdline.Usagef("--hf-dataset %s: --public-dataset %s reads %s; give one of them", d.HF.Dataset, pub.Name, pub.Repo)
		}
		return checkFilters(c.DatasetFilters, pub.Name, pub.Filters)
	}
	if d.HF.Dataset == "" {
		if hubFlag != "" {
			return cmdline.Usagef("%s needs a Hub dataset: --hf-dataset ORG/NAME, or a --public-dataset read from the Hub", hubFlag)
		}
		return nil
	}
	if c.InputFile != "" || c.CustomDatasetType != "" {
		return cmdline.Usagef("--hf-dataset %s and --input-file/--custom-dataset-type: give one dataset", d.HF.Dataset)
	}
	if _, err := datasets.ParseColumns(c.HFColumns); err != nil {
		return cmdline.Usagef("--hf-column (for --hf-dataset %s): %w", d.HF.Dataset, err)
	}
	return checkFilters(c.DatasetFilters, "", nil)
}

// checkFilters checks --dataset-filter values: KEY=VALUE, and for a public
// dataset one of the keys it takes (name "": --hf-dataset, any column).
func checkFilters(filters []string, name string, keys []string) error {
	for _, f := range filters {
		k, _, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok || k == "":
			return cmdline.Usagef("--dataset-filter %q: want KEY=VALUE", f)
		case name == "":
		case len(keys) == 0:
			return cmdline.Usagef("--dataset-filter: --public-dataset %s takes no filters (exgentic does; --hf-dataset filters rows by column)", name)
		case !slices.Contains(keys, k):
			return cmdline.Usagef("--dataset-filter %q: --public-dataset %s takes %s", f, name, strings.Join(keys, ", "))
		}
	}
	return nil
}

// systemPrompt is --system-prompt, or the text of --system-prompt-file
// (one of the two: both is a usage error naming them).
func systemPrompt(c *cmdline.Config) (string, error) {
	switch {
	case c.SystemPrompt != "" && c.SystemPromptFile != "":
		return "", cmdline.Usagef("--system-prompt and --system-prompt-file: give one")
	case c.SystemPromptFile == "":
		return c.SystemPrompt, nil
	}
	b, err := bounded.ReadFile(context.Background(), c.SystemPromptFile, maxSystemPrompt)
	switch {
	case err != nil:
		return "", cmdline.Usagef("--system-prompt-file: %w", err)
	case !utf8.Valid(b):
		return "", cmdline.Usagef("--system-prompt-file %s: not UTF-8 text", c.SystemPromptFile)
	case len(b) == 0:
		return "", cmdline.Usagef("--system-prompt-file %s: empty", c.SystemPromptFile)
	}
	return string(b), nil
}

// imageOptions are --image-* as the datasets library takes them.
func imageOptions(c *cmdline.Config) media.ImageOptions {
	return media.ImageOptions{
		WidthMean: c.ImageWidthMean, WidthStddev: c.ImageWidthStddev,
		HeightMean: c.ImageHeightMean, HeightStddev: c.ImageHeightStddev,
		Format: c.ImageFormat, BatchSize: c.ImageBatchSize, Source: c.ImageSource, Sampling: c.ImageSourceSampling,
	}
}

// audioOptions are --audio-* as the datasets library takes them; the lists
// are parsed here (kHz and bits).
func audioOptions(c *cmdline.Config) (media.AudioOptions, error) {
	o := media.AudioOptions{LengthMean: c.AudioLengthMean, LengthStddev: c.AudioLengthStddev,
		Format: c.AudioFormat, Channels: c.AudioChannels, BatchSize: c.AudioBatchSize}
	for _, s := range splitList(c.AudioSampleRates) {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return o, cmdline.Usagef("--audio-sample-rates %q: want numbers in kHz, e.g. 16 44.1", s)
		}
		o.SampleRates = append(o.SampleRates, r)
	}
	for _, s := range splitList(c.AudioDepths) {
		d, err := strconv.Atoi(s)
		if err != nil {
			return o, cmdline.Usagef("--audio-depths %q: want bits, e.g. 16 24", s)
		}
		o.Depths = append(o.Depths, d)
	}
	return o, nil
}

// splitList is a list flag's values, each also split at commas.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// parseMedia checks the synthetic media flags against the rest of the
// run: they shape synthetic prompts (a dataset file names its own media)
// and only a type that sends media can carry them.
func parseMedia(s *Spec, c *cmdline.Config) error {
	if c.MockPrefillPerImage < 0 || c.MockPrefillPerAudioSecond < 0 {
		return cmdline.Usagef("--mock-prefill-per-image and --mock-prefill-per-audio-second must be ≥ 0")
	}
	// A negative size or half a size would leave the media off without a
	// word, the run measuring text alone.
	for _, f := range []struct {
		flag string
		v    float64
	}{{"--image-width-mean", c.ImageWidthMean}, {"--image-width-stddev", c.ImageWidthStddev},
		{"--image-height-mean", c.ImageHeightMean}, {"--image-height-stddev", c.ImageHeightStddev},
		{"--audio-length-mean", c.AudioLengthMean}, {"--audio-length-stddev", c.AudioLengthStddev},
		{"--image-batch-size", float64(c.ImageBatchSize)}, {"--audio-batch-size", float64(c.AudioBatchSize)}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return cmdline.Usagef("%s must be ≥ 0, got %g", f.flag, f.v)
		}
	}
	if (c.ImageWidthMean > 0) != (c.ImageHeightMean > 0) {
		return cmdline.Usagef("--image-width-mean %g and --image-height-mean %g: images need both (each > 0)", c.ImageWidthMean, c.ImageHeightMean)
	}
	imo, ao := imageOptions(c), media.AudioOptions{LengthMean: c.AudioLengthMean, BatchSize: c.AudioBatchSize}
	var flag string
	switch {
	case imo.Enabled():
		flag = "--image-width-mean"
	case ao.Enabled():
		flag = "--audio-length-mean"
	default:
		return nil
	}
	kind := s.Endpoint.Kind
	switch {
	case datasetGiven(c):
		return cmdline.Usagef("%s: synthetic images and audio go with synthetic prompts; a dataset file names its own (its image/images/audio fields)", flag)
	case !kind.Info().Media:
		return cmdline.Usagef("%s: endpoint type %s cannot send images or audio (use --endpoint-type chat)", flag, kind)
	}
	return nil
}

// syntheticMedia reports whether synthetic turns carry media (then --isl
// may be 0: media alone, as AIPerf allows).
func syntheticMedia(c *cmdline.Config) bool {
	imo := imageOptions(c)
	ao := media.AudioOptions{LengthMean: c.AudioLengthMean, BatchSize: c.AudioBatchSize}
	return imo.Enabled() || ao.Enabled()
}

// Tokenizer is how prompts are built and tokens counted: --tokenizer (the
// model's own when not given) and the counting flags.
type Tokenizer struct {
	// Name is --tokenizer, else the model's name (Explicit false).
	Name     string
	Explicit bool
	// Revision is the Hub revision of a tokenizer named by its model id.
	Revision string
	// UseServerCount counts tokens from the server's usage, ISL included;
	// Retokenize counts output with the tokenizer even where usage says.
	UseServerCount, Retokenize bool
	// ApplyChatTemplate counts a chat request's ISL as the model's chat
	// template renders its messages and takes the template's wrapping off
	// synthetic prompts (--apply-chat-template).
	ApplyChatTemplate bool
}

// builtinNames resolve to the embedded tokenizer without a look at the
// Hub: "builtin" as AIPerf spells it, the embedded mock's model, and
// AIPerf's placeholder model names.
var builtinNames = map[string]bool{"builtin": true, "mock": true, "mock-model": true, "test-model": true, "fake-model": true}

// Builtin reports whether the name is the embedded Qwen3's.
func (t *Tokenizer) Builtin() bool { return builtinNames[strings.ToLower(t.Name)] }

// Path is where the tokenizer lies when its name is a file or folder: an
// explicit --tokenizer written as a path, or a model name that names a
// local tokenizer.
func (t *Tokenizer) Path() (string, bool) {
	if t.Explicit {
		return tokenizerPath(t.Name)
	}
	return modelTokenizerPath(t.Name)
}

// parseTokenizer checks an explicit --tokenizer: a file or folder, or a
// Hugging Face model id (a name derived from the model is never an error:
// the run falls back to the embedded tokenizer).
func parseTokenizer(s *Spec, c *cmdline.Config) error {
	name := strings.TrimSpace(c.Tokenizer)
	t := Tokenizer{Name: name, Explicit: name != "", Revision: c.TokenizerRevision,
		UseServerCount: c.UseServerTokenCount, Retokenize: c.RetokenizeOutput, ApplyChatTemplate: c.ApplyChatTemplate}
	if !t.Explicit {
		t.Name = c.Model
	}
	if k := s.Endpoint.Kind; t.ApplyChatTemplate && k != endpoint.Chat && k != endpoint.Responses && k != endpoint.Messages {
		return cmdline.Usagef("--apply-chat-template counts the messages of a chat request as the model's chat template renders them: --endpoint-type %s sends none (chat, responses and messages do)", k)
	}
	if _, isPath := t.Path(); t.Explicit && !t.Builtin() && !isPath && !hub.IsRepoID(name) {
		return cmdline.Usagef("--tokenizer %q: no such file or folder, and not a Hugging Face model id (org/name)", name)
	}
	s.Tokenizer = t
	return nil
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
