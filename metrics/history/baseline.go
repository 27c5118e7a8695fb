package history

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SelectorPrefix starts a baseline named in the history instead of a
// folder: history:last-matching, history:label=NAME, history:id=N.
const SelectorPrefix = "history:"

// Selector names a baseline run in the history.
type Selector struct {
	// LastMatching is the newest earlier run of the same workload, model,
	// endpoint type and load.
	LastMatching bool
	// Label is the newest run of that label.
	Label string
	// ID is the row with that id.
	ID int64
}

func (s Selector) String() string {
	switch {
	case s.LastMatching:
		return SelectorPrefix + "last-matching"
	case s.Label != "":
		return SelectorPrefix + "label=" + s.Label
	}
	return SelectorPrefix + "id=" + strconv.FormatInt(s.ID, 10)
}

// ParseSelector reads a baseline argument: ok is false when arg does not
// start with "history:" (it names a folder); an unknown selector after it
// is an error that lists the ones there are.
func ParseSelector(arg string) (sel Selector, ok bool, err error) {
	rest, ok := strings.CutPrefix(arg, SelectorPrefix)
	if !ok {
		return Selector{}, false, nil
	}
	bad := fmt.Errorf("%q: want history:last-matching, history:label=NAME or history:id=N", arg)
	switch key, value, hasValue := strings.Cut(rest, "="); {
	case rest == "last-matching":
		return Selector{LastMatching: true}, true, nil
	case key == "label" && hasValue && value != "":
		return Selector{Label: value}, true, nil
	case key == "id" && hasValue:
		id, err := strconv.ParseInt(value, 10, 64)
		if err != nil || id <= 0 {
			return Selector{}, true, bad
		}
		return Selector{ID: id}, true, nil
	}
	return Selector{}, true, bad
}

// ErrNoBaseline is wrapped by Baseline's error when the history holds no
// run the selector picks: on a first run there is nothing to judge yet
// (history:last-matching), or the run named is not there (history:id=N,
// history:label=NAME).
var ErrNoBaseline = errors.New("no baseline in the history")

// ErrBaselineGone is wrapped by Baseline's error when the history holds
// the runs the selector picks but their artifact folders are gone (a
// baseline there was, which cannot be read).
var ErrBaselineGone = errors.New("the baseline's artifact folder is gone")

// Baseline resolves sel to a row whose artifact folder is still there.
// current are the rows of the run being judged (FromArtifacts): it is
// never its own baseline, and last-matching looks for the newest run
// before it with its workload fingerprint, model, endpoint type and load.
func (s *Store) Baseline(ctx context.Context, sel Selector, current []Row) (Row, error) {
	if !sel.LastMatching && sel.Label == "" && sel.ID <= 0 {
		return Row{}, errors.New("history: an empty baseline selector")
	}
	if sel.ID > 0 {
		r, err := s.Get(ctx, sel.ID)
		switch {
		case errors.Is(err, ErrNoRun):
			return Row{}, fmt.Errorf("%s: %w: it holds no run with id %d", sel, ErrNoBaseline, sel.ID)
		case err != nil:
			return Row{}, err
		case !exists(r.Dir):
			return Row{}, fmt.Errorf("%s: %w: %s", sel, ErrBaselineGone, r.Dir)
		}
		return r, nil
	}
	if len(current) == 0 {
		return Row{}, fmt.Errorf("%s: no run to find a baseline for", sel)
	}
	cur := current[0]
	conds := []string{"kind = 'run'", "run_uid != ?"}
	args := []any{cur.RunUID}
	if sel.LastMatching {
		if cur.Workload == "" {
			return Row{}, fmt.Errorf("%s: %s has no workload fingerprint (an AIPerf export or an older surge) to match: name a baseline by label or id", sel, cur.Dir)
		}
		conds = append(conds, "workload_hash = ?", "model IS ?", "endpoint_type IS ?", "load_mode IS ?", "load_value IS ?")
		args = append(args, cur.Workload, text(cur.Model), text(cur.EndpointType), text(cur.LoadMode), num(cur.LoadValue))
		if t := formatTime(cur.StartedAt); t != nil {
			conds = append(conds, startOf+" < ?")
			args = append(args, t)
		}
	} else {
		conds = append(conds, "label = ?")
		args = append(args, sel.Label)
	}
	rows, err := s.query(ctx, selectRuns+" WHERE "+strings.Join(conds, " AND ")+" ORDER BY "+startOf+" DESC, runs.id DESC LIMIT 50", args...)
	if err != nil {
		return Row{}, err
	}
	var gone []string
	for _, r := range rows {
		if exists(r.Dir) {
			return r, nil
		}
		gone = append(gone, r.Dir)
	}
	what := "run of the same workload, model, endpoint type and load before " + cur.Dir
	if !sel.LastMatching {
		what = "run labelled " + strconv.Quote(sel.Label)
	}
	if len(gone) > 0 {
		return Row{}, fmt.Errorf("%s: %w: the artifact folders of every match are gone (%s)", sel, ErrBaselineGone, strings.Join(gone, ", "))
	}
	return Row{}, fmt.Errorf("%s: %w: it holds no %s", sel, ErrNoBaseline, what)
}

// ResolveBaseline is `surge compare --baseline SPEC RUN`'s baseline
// folder: SPEC itself when it is a folder, else the run the history at
// path picks for RUN (its folder read as FromArtifacts reads it), with
// the row. A history that has none wraps ErrNoBaseline; the whole
// database is checked first (Check), so damage never passes for an
// absent baseline.
func ResolveBaseline(ctx context.Context, path, spec, runDir string) (string, *Row, error) {
	sel, ok, err := ParseSelector(spec)
	if err != nil || !ok {
		return spec, nil, err
	}
	current, err := FromArtifacts(runDir)
	if err != nil {
		return "", nil, err
	}
	s, err := Open(ctx, path)
	if err != nil {
		return "", nil, err
	}
	defer s.Close()
	if err := s.Check(ctx); err != nil {
		return "", nil, err
	}
	r, err := s.Baseline(ctx, sel, current)
	if err != nil {
		return "", nil, err
	}
	return r.Dir, &r, nil
}
