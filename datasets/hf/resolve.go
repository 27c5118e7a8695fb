// Package hf reads a Hugging Face Hub dataset through the Hub's HTTP API,
// as the datasets library would load it, without Python: the repository's
// files are listed (/api/datasets/ORG/NAME/tree/REVISION), the files of the
// subset (config) and split asked for are picked (the dataset card's
// "configs", else the Hub's file-name rules for splits, else the Hub's own
// Parquet conversion on refs/convert/parquet), and their rows are read one
// at a time from JSON, JSON Lines, CSV or Parquet files, each downloaded
// once into the Hugging Face cache (package hub: HF_ENDPOINT, HF_TOKEN,
// HF_HUB_OFFLINE, HF_HOME). A reader stops when it has the rows it needs:
// later files are never fetched, a JSON Lines or CSV file is read as it
// arrives, and a Parquet file a row group at a time.
package hf

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/surgebench/surge/datasets/tokenizer/hub"
	"github.com/surgebench/surge/internal/bounded"
)

// ParquetRevision is the branch where the Hub keeps its Parquet
// conversion of a dataset: <subset>/<split>/NNNN.parquet (partial-<split>
// when only its head was converted).
const ParquetRevision = "refs/convert/parquet"

// DefaultSplit is the split read when none is named (the datasets
// library's default too).
const DefaultSplit = "train"

// maxCardBytes bounds the dataset card (README.md) read for its configs.
const maxCardBytes = 4 << 20

// Source names the data to read: a dataset repository, its subset
// (config; "" for the default), its split ("" for DefaultSplit) and the
// revision ("" for main).
type Source struct {
	Repo, Subset, Split, Revision string
}

func (s Source) split() string {
	if s.Split == "" {
		return DefaultSplit
	}
	return s.Split
}

func (s Source) revision() string {
	if s.Revision == "" {
		return "main"
	}
	return s.Revision
}

// Plan is what Resolve found: the files that hold a split, in the order
// their rows are read, and where they are.
type Plan struct {
	Source
	// Revision is the revision the files are at: the one asked for, or
	// ParquetRevision.
	Revision string
	// Files are the split's data files, sorted by path.
	Files []hub.Entry
	// How says in words how they were found (for the run's report).
	How string
}

// readable is the file extensions surge reads rows from, by format.
var readable = map[string]Format{
	".parquet": Parquet, ".jsonl": JSONLines, ".ndjson": JSONLines, ".json": JSON,
	".csv": CSV, ".tsv": TSV,
}

// unreadable names data formats the Hub hosts that surge does not read,
// for the error that says so.
var unreadable = map[string]string{
	".arrow": "Arrow", ".tar": "tar", ".zip": "zip", ".txt": "plain text", ".zst": "zstd",
	".xz": "xz", ".bz2": "bzip2", ".lance": "Lance", ".h5": "HDF5", ".hdf5": "HDF5",
	".py": "a loading script", ".webdataset": "WebDataset", ".tgz": "tar",
}

// FormatOf is the format of a data file from its name (a .gz file is
// read through gzip); ok is false when surge cannot read it.
func FormatOf(name string) (Format, bool) {
	name = strings.ToLower(strings.TrimSuffix(strings.ToLower(name), ".gz"))
	f, ok := readable[path.Ext(name)]
	return f, ok
}

// Resolve finds the files of src's subset and split. It reads the
// dataset card's configs when it has them (as the datasets library
// does), else names files by the Hub's split rules (train/validation/test
// in a file or folder name, a subset being a top-level folder), else
// reads the Hub's Parquet conversion of the dataset. Errors name the
// dataset, what was wanted and what there is.
func Resolve(ctx context.Context, src Source, o hub.Options) (*Plan, error) {
	o.Revision = src.revision()
	files, err := hub.Tree(ctx, hub.Dataset, src.Repo, o)
	if errors.Is(err, hub.ErrNotCached) && src.Revision == "" {
		// Offline, and nothing of main cached: a dataset read before from
		// the Parquet conversion has that cached.
		po := o
		po.Revision = ParquetRevision
		if pfiles, perr := hub.Tree(ctx, hub.Dataset, src.Repo, po); perr == nil {
			return fromParquet(src, pfiles, src.Repo+" has nothing cached at main")
		}
	}
	if err != nil {
		return nil, hubError(src, "", "listing its files", err)
	}
	plan, why, err := fromMain(ctx, src, files, o)
	if err != nil || plan != nil {
		return plan, err
	}
	// Nothing readable on the revision itself: the Hub's Parquet
	// conversion (scripted datasets, archives, Arrow files...).
	po := o
	po.Revision = ParquetRevision
	pfiles, perr := hub.Tree(ctx, hub.Dataset, src.Repo, po)
	if perr != nil {
		return nil, &Error{Dataset: src.Repo, Msg: why + fmt.Sprintf("; and its Parquet conversion (%s) cannot be listed: %v", ParquetRevision, perr),
			Fix: fixFor(perr, "name a dataset with JSON, JSON Lines, CSV or Parquet files"), Err: perr}
	}
	return fromParquet(src, pfiles, why)
}

// fromMain picks the files on the revision asked for; a nil plan and a
// reason when it has none surge can read.
func fromMain(ctx context.Context, src Source, files []hub.Entry, o hub.Options) (*Plan, string, error) {
	var data, other []hub.Entry
	hasCard := false
	for _, f := range files {
		if f.Path == "README.md" {
			hasCard = true
		}
		if _, ok := FormatOf(f.Path); ok {
			data = append(data, f)
		} else if _, ok := unreadable[path.Ext(strings.ToLower(strings.TrimSuffix(f.Path, ".gz")))]; ok {
			other = append(other, f)
		}
	}
	if hasCard {
		configs, err := readCard(ctx, src, o)
		if err != nil {
			return nil, "", err
		}
		if len(configs) > 0 {
			p, err := fromConfigs(src, configs, files)
			return p, "", err
		}
	}
	why := fmt.Sprintf("%s has no JSON, JSON Lines, CSV or Parquet files at %s", src.Repo, src.revision())
	if len(other) > 0 {
		why = fmt.Sprintf("%s keeps its data in %s files (%s), which surge does not read", src.Repo, unreadable[path.Ext(strings.ToLower(strings.TrimSuffix(other[0].Path, ".gz")))], other[0].Path)
	}
	if len(data) == 0 {
		return nil, why, nil
	}
	scope := data
	if src.Subset != "" && src.Subset != "default" {
		scope = nil
		for _, f := range data {
			if strings.HasPrefix(f.Path, src.Subset+"/") {
				scope = append(scope, f)
			}
		}
		if len(scope) == 0 {
			return nil, "", &Error{Dataset: src.Repo, Msg: fmt.Sprintf("no subset %q: its dataset card names no configs and no folder %s/ holds data", src.Subset, src.Subset),
				Fix: "give one of its folders as the subset" + listOf(" (", topFolders(data), ")")}
		}
	}
	splits := splitsOf(scope)
	want := src.split()
	picked := splits[canonicalSplit(want)]
	if len(splits) == 0 && canonicalSplit(want) == DefaultSplit {
		picked = scope // no split names: every file is train
	}
	if len(picked) == 0 {
		return nil, "", &Error{Dataset: src.Repo, Msg: fmt.Sprintf("no split %q", want),
			Fix: "give one of its splits" + listOf(" (", keys(splits), ")")}
	}
	sortEntries(picked)
	return &Plan{Source: src, Revision: src.revision(), Files: picked,
		How: fmt.Sprintf("%d %s files at %s (split by file name)", len(picked), formatsOf(picked), src.revision())}, "", nil
}

// config is one of a dataset card's configs.
type config struct {
	Name    string              `yaml:"config_name"`
	Default bool                `yaml:"default"`
	Files   map[string][]string `yaml:"-"`
	Raw     yaml.Node           `yaml:"data_files"`
	Dir     string              `yaml:"data_dir"`
}

// readCard reads the configs of the dataset card's YAML header.
func readCard(ctx context.Context, src Source, o hub.Options) ([]config, error) {
	o.MaxBytes = maxCardBytes
	r, _, err := hub.Open(ctx, hub.Dataset, src.Repo, "README.md", o)
	if err != nil {
		return nil, hubError(src, "README.md", "reading its dataset card", err)
	}
	defer r.Close()
	b, err := bounded.ReadAll(ctx, r, maxCardBytes, "its dataset card")
	if err != nil {
		return nil, hubError(src, "README.md", "reading its dataset card", err)
	}
	return parseCard(b)
}

// parseCard reads the configs of a dataset card (nil when it has no YAML
// header or no configs).
func parseCard(b []byte) ([]config, error) {
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return nil, nil
	}
	head, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return nil, nil
	}
	var card struct {
		Configs []config `yaml:"configs"`
	}
	if err := yaml.Unmarshal([]byte(head), &card); err != nil {
		return nil, nil // a card whose header is not YAML: as if it named no configs
	}
	for i := range card.Configs {
		c := &card.Configs[i]
		if c.Name == "" {
			c.Name = "default"
		}
		files, err := dataFiles(&c.Raw)
		if err != nil {
			return nil, fmt.Errorf("config %q: data_files: %v", c.Name, err)
		}
		if c.Dir != "" {
			for k, pats := range files {
				for j := range pats {
					pats[j] = path.Join(c.Dir, pats[j])
				}
				files[k] = pats
			}
		}
		c.Files = files
	}
	return card.Configs, nil
}

// dataFiles reads a config's data_files: a pattern, a list of them (the
// train split), or a list of {split, path} with path a pattern or a list.
func dataFiles(n *yaml.Node) (map[string][]string, error) {
	out := map[string][]string{}
	switch n.Kind {
	case 0:
		return out, nil
	case yaml.ScalarNode:
		out[DefaultSplit] = []string{n.Value}
		return out, nil
	case yaml.MappingNode:
		var m map[string]any
		if err := n.Decode(&m); err != nil {
			return nil, err
		}
		for k, v := range m {
			pats, err := patterns(v)
			if err != nil {
				return nil, err
			}
			out[k] = pats
		}
		return out, nil
	case yaml.SequenceNode:
		var items []any
		if err := n.Decode(&items); err != nil {
			return nil, err
		}
		for _, it := range items {
			switch it := it.(type) {
			case string:
				out[DefaultSplit] = append(out[DefaultSplit], it)
			case map[string]any:
				split, _ := it["split"].(string)
				if split == "" {
					split = DefaultSplit
				}
				pats, err := patterns(it["path"])
				if err != nil {
					return nil, err
				}
				out[split] = append(out[split], pats...)
			default:
				return nil, fmt.Errorf("an entry is neither a pattern nor {split, path}")
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a pattern, a list or {split, path} entries")
}

func patterns(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		var out []string
		for _, p := range v {
			s, ok := p.(string)
			if !ok {
				return nil, fmt.Errorf("a path is not a string")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("a path is neither a pattern nor a list of them")
}

// fromConfigs picks the files of the subset and split the card's configs
// name.
func fromConfigs(src Source, configs []config, files []hub.Entry) (*Plan, error) {
	names := make([]string, len(configs))
	var c *config
	for i := range configs {
		names[i] = configs[i].Name
		if configs[i].Name == src.Subset || src.Subset == "" && configs[i].Default {
			c = &configs[i]
		}
	}
	if c == nil && src.Subset == "" {
		for i := range configs {
			if configs[i].Name == "default" {
				c = &configs[i]
			}
		}
		if c == nil && len(configs) == 1 {
			c = &configs[0]
		}
	}
	if c == nil {
		msg := fmt.Sprintf("no subset %q", src.Subset)
		if src.Subset == "" {
			msg = "it has several subsets and none is the default"
		}
		return nil, &Error{Dataset: src.Repo, Msg: msg, Fix: "name one of its subsets" + listOf(" (", names, ")")}
	}
	want := src.split()
	pats, ok := c.Files[want]
	if !ok {
		return nil, &Error{Dataset: src.Repo, Msg: fmt.Sprintf("subset %q has no split %q", c.Name, want),
			Fix: "give one of its splits" + listOf(" (", keys(c.Files), ")")}
	}
	var picked []hub.Entry
	var unread []string
	for _, f := range files {
		for _, p := range pats {
			if match(p, f.Path) {
				if _, ok := FormatOf(f.Path); ok {
					picked = append(picked, f)
				} else {
					unread = append(unread, f.Path)
				}
				break
			}
		}
	}
	if len(picked) == 0 {
		msg := fmt.Sprintf("subset %q split %q: no file matches its data_files %s", c.Name, want, strings.Join(pats, ", "))
		fix := "check the dataset card"
		if len(unread) > 0 {
			msg = fmt.Sprintf("subset %q split %q is in files surge does not read (%s)", c.Name, want, unread[0])
			fix = "surge reads JSON, JSON Lines, CSV and Parquet files"
		}
		return nil, &Error{Dataset: src.Repo, File: "README.md", Msg: msg, Fix: fix}
	}
	sortEntries(picked)
	p := &Plan{Source: src, Revision: src.revision(), Files: picked,
		How: fmt.Sprintf("%d %s files at %s (subset %q from the dataset card)", len(picked), formatsOf(picked), src.revision(), c.Name)}
	p.Subset = c.Name
	return p, nil
}

// fromParquet picks the split's files on the Parquet conversion branch.
func fromParquet(src Source, files []hub.Entry, why string) (*Plan, error) {
	subsets := map[string]bool{}
	for _, f := range files {
		if dir, _, ok := strings.Cut(f.Path, "/"); ok && strings.HasSuffix(f.Path, ".parquet") {
			subsets[dir] = true
		}
	}
	subset := src.Subset
	if subset == "" {
		switch names := keys(subsets); {
		case subsets["default"]:
			subset = "default"
		case len(names) == 1:
			subset = names[0]
		default:
			return nil, &Error{Dataset: src.Repo, Msg: why + "; its Parquet conversion has several subsets",
				Fix: "name one of them as the subset" + listOf(" (", names, ")")}
		}
	}
	if !subsets[subset] {
		return nil, &Error{Dataset: src.Repo, Msg: why + fmt.Sprintf("; its Parquet conversion has no subset %q", subset),
			Fix: "name one of its subsets" + listOf(" (", keys(subsets), ")")}
	}
	want := src.split()
	var picked []hub.Entry
	splits := map[string]bool{}
	for _, f := range files {
		dir, rest, _ := strings.Cut(f.Path, "/")
		split, _, ok := strings.Cut(rest, "/")
		if dir != subset || !ok || !strings.HasSuffix(f.Path, ".parquet") {
			continue
		}
		split = strings.TrimPrefix(split, "partial-")
		splits[split] = true
		if split == want {
			picked = append(picked, f)
		}
	}
	if len(picked) == 0 {
		return nil, &Error{Dataset: src.Repo, Msg: fmt.Sprintf("subset %q has no split %q in its Parquet conversion", subset, want),
			Fix: "give one of its splits" + listOf(" (", keys(splits), ")")}
	}
	sortEntries(picked)
	p := &Plan{Source: src, Revision: ParquetRevision, Files: picked,
		How: fmt.Sprintf("%d Parquet files of the Hub's conversion (%s)", len(picked), ParquetRevision)}
	p.Subset = subset
	return p, nil
}

// splitKeywords are the names the Hub recognises for each split in a file
// or folder name.
var splitKeywords = map[string][]string{
	"train":      {"train", "training"},
	"validation": {"validation", "valid", "dev", "val"},
	"test":       {"test", "testing", "eval", "evaluation"},
}

// canonicalSplit maps a split's other names to the Hub's.
func canonicalSplit(s string) string {
	for name, kws := range splitKeywords {
		if slices.Contains(kws, s) {
			return name
		}
	}
	return s
}

// splitsOf sorts data files by the split their path names: a keyword
// delimited by non-letters in a file or folder name.
func splitsOf(files []hub.Entry) map[string][]hub.Entry {
	out := map[string][]hub.Entry{}
	for _, f := range files {
		if s := splitOf(f.Path); s != "" {
			out[s] = append(out[s], f)
		}
	}
	return out
}

func splitOf(p string) string {
	// The file's name first, then its folders, innermost first.
	parts := strings.Split(strings.ToLower(p), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		words := strings.FieldsFunc(parts[i], func(r rune) bool { return r < 'a' || r > 'z' })
		for _, w := range words {
			for name, kws := range splitKeywords {
				if slices.Contains(kws, w) {
					return name
				}
			}
		}
	}
	return ""
}

// match reports whether a repository path matches a data_files pattern:
// "*" and "?" within a path part, "**" across parts, "[...]" classes.
func match(pattern, name string) bool {
	pattern = strings.TrimPrefix(pattern, "./")
	return matchParts(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchParts(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchParts(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func sortEntries(files []hub.Entry) {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
}

func formatsOf(files []hub.Entry) string {
	seen := map[Format]bool{}
	var names []string
	for _, f := range files {
		if ft, ok := FormatOf(f.Path); ok && !seen[ft] {
			seen[ft] = true
			names = append(names, ft.String())
		}
	}
	return strings.Join(names, "/")
}

func topFolders(files []hub.Entry) []string {
	seen := map[string]bool{}
	for _, f := range files {
		if dir, _, ok := strings.Cut(f.Path, "/"); ok {
			seen[dir] = true
		}
	}
	return keys(seen)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// listOf joins names between open and close ("" when there are none),
// at most 20 of them.
func listOf(open string, names []string, close string) string {
	if len(names) == 0 {
		return ""
	}
	if len(names) > 20 {
		names = append(names[:20:20], fmt.Sprintf("… %d more", len(names)-20))
	}
	return open + strings.Join(names, ", ") + close
}

// hubError wraps an error from the Hub client in an *Error with its fix.
func hubError(src Source, file, doing string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Dataset: src.Repo, File: file, Msg: doing + ": " + err.Error(), Fix: fixFor(err, ""), Err: err}
}

// fixFor is the fix for an error of the Hub client.
func fixFor(err error, otherwise string) string {
	var se *hub.StatusError
	switch {
	case errors.Is(err, hub.ErrNotCached):
		return "run once with the network (HF_HUB_OFFLINE unset) to cache it, or point HF_HOME at a cache that has it"
	case errors.As(err, &se) && (se.Code == 401 || se.Code == 403):
		return "set HF_TOKEN to a token with access, after accepting the dataset's terms on its Hub page"
	case errors.As(err, &se) && se.Code == 404:
		return "check the dataset's name, subset and revision on the Hub"
	case errors.As(err, &se):
		return "try again later, or set HF_ENDPOINT to a Hub mirror"
	case otherwise != "":
		return otherwise
	}
	return "check the network, or set HF_ENDPOINT to a Hub mirror (HF_HUB_OFFLINE=1 reads the cache only)"
}
