package datasets

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/surgebench/surge/datasets/hf"
	"github.com/surgebench/surge/datasets/tokenizer/hub"
)

// Bounds on a Hub dataset read.
const (
	// DefaultHubRows is how many conversations a Hub dataset gives when
	// HFOptions.Rows does not say (the run's count is unknown).
	DefaultHubRows = 10_000
	// MaxHubRows bounds HFOptions.Rows.
	MaxHubRows = 1 << 20
	// maxFilters bounds the --dataset-filter values.
	maxFilters = 32
)

// TypeHF is the Dataset.Type of a --hf-dataset workload.
const TypeHF = "hf"

// HFOptions reads a Hugging Face Hub dataset (--hf-dataset, --hf-subset,
// --hf-split, --hf-column, --dataset-filter), or sets a public dataset's
// subset, split and filters.
type HFOptions struct {
	// Dataset is the repository, "ORG/NAME" (--hf-dataset); with the
	// public dataset weka_hf, the repository of its traces.
	Dataset string
	// Subset (config) and Split pick the rows ("": the dataset's default
	// subset, and "train"; a public dataset's own).
	Subset, Split string
	// Revision is a branch, tag or commit ("": main, or a public
	// dataset's pin).
	Revision string
	// Columns are --hf-column values (see ParseColumns); Dataset needs
	// them, a public dataset maps its own.
	Columns []string
	// Filters are --dataset-filter KEY=VALUE values: with Dataset, keep
	// the rows whose column KEY holds VALUE (every filter must hold);
	// with a public dataset, the keys it takes (exgentic: harness,
	// source_model).
	Filters []string
	// Rows is the most conversations to build, what the run will send
	// (0: DefaultHubRows). Reading stops there: later rows and files are
	// never fetched.
	Rows int
}

// set reports whether any field is given.
func (h HFOptions) set() bool {
	return h.Dataset != "" || h.Subset != "" || h.Split != "" || h.Revision != "" || len(h.Columns) > 0 || len(h.Filters) > 0
}

// hubStats counts what a Hub read kept and why it dropped the rest.
type hubStats struct {
	files, rows, kept, filtered int
	skipped                     map[string]int
	firstSkip                   string // the first skip's detail, for an error when all are skipped
}

func (s *hubStats) skip(why, detail string) {
	if s.skipped == nil {
		s.skipped = map[string]int{}
	}
	s.skipped[why]++
	if s.firstSkip == "" {
		s.firstSkip = why
		if detail != "" {
			s.firstSkip += ": " + detail
		}
	}
}

func (s *hubStats) String() string {
	line := fmt.Sprintf("kept %d of %d rows", s.kept, s.rows)
	var parts []string
	if s.filtered > 0 {
		parts = append(parts, fmt.Sprintf("filtered out %d", s.filtered))
	}
	whys := make([]string, 0, len(s.skipped))
	for w := range s.skipped {
		whys = append(whys, w)
	}
	sort.Strings(whys)
	for _, w := range whys {
		parts = append(parts, fmt.Sprintf("%s %d", w, s.skipped[w]))
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	return line
}

// loadHub builds the workload of a Hub dataset: --hf-dataset, or a
// public dataset read from the Hub.
func loadHub(ctx context.Context, o Options, rep *Report) (*Dataset, error) {
	h := o.HF
	var d PublicDataset
	switch {
	case o.PublicDataset != "":
		var ok bool
		if d, ok = publicDataset(o.PublicDataset); !ok {
			return nil, optionErrorf("PublicDataset", "%q: unknown (surge reads %s; docs/workloads.md lists AIPerf's every name)", o.PublicDataset, strings.Join(PublicNames(), ", "))
		}
		if d.Refused != "" {
			return nil, d.refusal()
		}
		if len(h.Columns) > 0 {
			return nil, optionErrorf("HF.Columns", "do not apply to --public-dataset %s, which maps its own columns (use --hf-dataset %s to map others)", d.Name, d.Repo)
		}
		if d.Repo == "" {
			if h.Dataset == "" {
				return nil, optionErrorf("HF.Dataset", "is needed: %s reads the traces of the Hub dataset it names (ORG/NAME)", d.Name)
			}
			d.Repo = h.Dataset
		} else if h.Dataset != "" {
			return nil, optionErrorf("HF.Dataset", "%q: %s reads %s; give one of them", h.Dataset, d.Name, d.Repo)
		}
	default:
		if h.Dataset == "" {
			return nil, optionErrorf("HF.Dataset", "is needed with the Hugging Face options (ORG/NAME)")
		}
		cols, err := ParseColumns(h.Columns)
		if err != nil {
			return nil, &OptionError{Option: "HF.Columns", Reason: err.Error(), Err: err}
		}
		d = PublicDataset{Name: TypeHF, Repo: h.Dataset, kind: hubColumns, columns: cols}
	}
	if !hub.IsRepoID(d.Repo) || !strings.Contains(d.Repo, "/") {
		return nil, optionErrorf("HF.Dataset", "%q: not a Hub dataset id (ORG/NAME)", d.Repo)
	}
	switch {
	case h.Rows < 0:
		return nil, optionErrorf("HF.Rows", "must not be negative, got %d", h.Rows)
	case h.Rows > MaxHubRows:
		return nil, optionErrorf("HF.Rows", "%d is over the limit of %d", h.Rows, MaxHubRows)
	}
	var err error
	want := h.Rows
	if want == 0 {
		want = DefaultHubRows
	}
	tok := o.Tokenizer
	if d.kind == hubColumns && d.columns.Messages != "" {
		// A chat's replies cap its turns: counted with the run's tokenizer.
		if tok, err = tokenizerOrDefault(tok); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
	}
	conv, err := newHubConv(d, h.Filters, tok)
	if err != nil {
		return nil, err
	}
	src := hf.Source{Repo: d.Repo, Subset: d.Subset, Split: d.Split, Revision: d.Revision}
	if h.Subset != "" {
		src.Subset = h.Subset
	}
	if h.Split != "" {
		src.Split = h.Split
	}
	if h.Revision != "" {
		src.Revision = h.Revision
	}
	ho := o.Hub
	if ho.Timeout == 0 {
		ho.Timeout = 30 * time.Minute // a large file on a slow link; a dead one fails at the client's 10 s timeouts
	}
	if ho.MaxBytes == 0 {
		ho.MaxBytes = hf.DefaultMaxFileBytes
	}
	if ho.Progress == nil {
		ho.Progress = o.Progress
	}
	plan, err := hf.Resolve(ctx, src, ho)
	if err != nil {
		return nil, gatedHint(err, d)
	}
	dset := &Dataset{Name: "hf://datasets/" + d.Repo}
	files := map[string]bool{}
	err = hf.Read(ctx, plan, ho, hf.ReadOptions{Columns: conv.columnsFor(plan)}, func(file string, n int, r hf.Row) error {
		files[file] = true
		conv.st.rows++
		cs, err := conv.row(file, n, r)
		if err != nil {
			var he *hf.Error
			if errors.As(err, &he) {
				he.Dataset = d.Repo
			}
			return err
		}
		dset.Conversations = append(dset.Conversations, cs...)
		if conv.done(len(dset.Conversations), want) {
			return hf.ErrStop
		}
		return nil
	})
	if err != nil {
		return nil, gatedHint(err, d)
	}
	if err := conv.finish(ctx, o, dset, d.Repo); err != nil {
		return nil, err
	}
	if len(dset.Conversations) == 0 {
		msg := "no row gave a conversation"
		if conv.st.rows == 0 {
			msg = "the split has no rows"
		}
		return nil, &hf.Error{Dataset: d.Repo, Msg: fmt.Sprintf("%s (%s)", msg, conv.st.String()), Fix: conv.emptyFix()}
	}
	if len(dset.Conversations) > want {
		dset.Conversations = dset.Conversations[:want]
	}
	conv.st.files = len(files)
	name := d.Name
	where := d.Repo
	if plan.Subset != "" {
		where += " (" + plan.Subset + ")"
	}
	where += ", " + splitNameOf(src.Split)
	rep.Source, rep.Type, dset.Type = dset.Name, name, name
	rep.Rows = conv.st.rows
	rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: %s: %s; read %d of them: %s", where, plan.How, conv.st.files, conv.st.String()))
	if h.Rows == 0 && conv.stopped {
		rep.Lines = append(rep.Lines, fmt.Sprintf("dataset: stopped at the first %d conversations (the default when the run's count is not known)", want))
	}
	rep.Lines = append(rep.Lines, conv.lines...)
	rep.Lines = append(rep.Lines, mediaLines(dset)...)
	rep.finish(dset, fmt.Sprintf("dataset: %s %s", name, d.Repo))
	return dset, nil
}

// splitName is the split read.
func splitNameOf(s string) string {
	if s == "" {
		return hf.DefaultSplit
	}
	return s
}

// gatedHint adds to a gated dataset's refusal that its terms must be
// accepted.
func gatedHint(err error, d PublicDataset) error {
	var he *hf.Error
	var se *hub.StatusError
	if d.Gated && errors.As(err, &he) && errors.As(err, &se) && (se.Code == 401 || se.Code == 403) {
		he.Fix = fmt.Sprintf("%s is gated: accept its terms at https://huggingface.co/datasets/%s and set HF_TOKEN", d.Name, d.Repo)
	}
	return err
}
