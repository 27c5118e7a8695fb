package history

import (
	"context"
	"errors"
)

// Recorded is what AppendRun did.
type Recorded struct {
	// Path is the database written.
	Path string
	// Rows are the run's rows as stored (IDs set); Added how many were
	// new.
	Rows  []Row
	Added int
	// Warning is Stats.Warning after the append: the history has grown
	// past its limits ("" otherwise).
	Warning string
}

// AppendRun records the run in the artifact folder dir in the history at
// path: what a run does as it ends, after its exports are written (an
// error here, a damaged or newer database, is the caller's to print; the
// run's artifacts stand) and what `surge history import` does for older
// runs.
func AppendRun(ctx context.Context, path, dir string, opts ...ImportOption) (Recorded, error) {
	rows, err := FromArtifacts(dir, opts...)
	if err != nil {
		return Recorded{}, err
	}
	s, err := Open(ctx, path)
	if err != nil {
		return Recorded{}, err
	}
	out := Recorded{Path: s.Path(), Rows: rows}
	out.Added, err = s.Append(ctx, out.Rows)
	if err == nil {
		var st Stats
		if st, err = s.Stats(ctx); err == nil {
			out.Warning = st.Warning()
		}
	}
	return out, errors.Join(err, s.Close())
}
