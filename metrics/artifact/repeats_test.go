package artifact

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRepeatLabels: the run folders of a repeated-runs folder in run
// order; none for a run's own folder or a folder without profile_runs/,
// and the aggregate's level, 0.95 when it says none.
func TestRepeatLabels(t *testing.T) {
	mk := func(t *testing.T, files map[string]string) string {
		t.Helper()
		dir := t.TempDir()
		for name, body := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		labels []string
		level  float64
	}{
		{"repeats", map[string]string{
			"profile_runs/run_0002/" + SummaryFile: "{}", "profile_runs/run_0001/" + SummaryFile: "{}",
			"aggregate/" + AggregateFile: `{"metadata":{"confidence_level":0.9}}`}, []string{"run_0001", "run_0002"}, 0.9},
		{"no aggregate", map[string]string{"profile_runs/run_0001/" + SummaryFile: "{}"}, []string{"run_0001"}, 0.95},
		{"a run", map[string]string{SummaryFile: "{}", "profile_runs/run_0001/" + SummaryFile: "{}"}, nil, 0.95},
		{"no runs", map[string]string{"aggregate/" + AggregateFile: `{"metadata":{"confidence_level":2}}`}, nil, 0.95},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := mk(t, tc.files)
			if got := RepeatLabels(dir); !slices.Equal(got, tc.labels) {
				t.Errorf("labels %q, want %q", got, tc.labels)
			}
			if got := RepeatLevel(dir); got != tc.level {
				t.Errorf("level %g, want %g", got, tc.level)
			}
			runs, err := LoadRepeats(dir, nil)
			if (err == nil) != (tc.labels != nil) || len(runs) != len(tc.labels) {
				t.Errorf("LoadRepeats: %d runs, %v", len(runs), err)
			}
		})
	}
}
