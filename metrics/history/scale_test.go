package history

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/surgebench/surge/metrics/artifact"
)

// TestImportReadsRecordsOnlyWithoutSurgesSummary: a run whose summary is
// surge's own (with its intervals) is recorded from the summary alone, so
// recording a run costs the same whatever its request count; a folder
// without one (AIPerf's, an older surge's) is still read from its records.
func TestImportReadsRecordsOnlyWithoutSurgesSummary(t *testing.T) {
	t.Parallel()
	copyRun := func(t *testing.T, precision bool) string {
		t.Helper()
		dir := t.TempDir()
		b, err := os.ReadFile(filepath.Join(compareData, "fast", artifact.SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		if precision {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			raw["precision"] = json.RawMessage(`{"level": 0.95, "time_to_first_token": {"p95": {"value": 17, "lo": 16.5, "hi": 17.5, "n": 120, "tail": 6}}}`)
			if b, err = json.Marshal(raw); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, artifact.SummaryFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// Records that cannot be parsed: reading them is an error.
		if err := os.WriteFile(filepath.Join(dir, artifact.RecordsFile), []byte("not json\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	rows, err := FromArtifacts(copyRun(t, true))
	if err != nil {
		t.Fatalf("surge's summary: the records were read: %v", err)
	}
	if len(rows) != 1 || rows[0].TTFTP95CI == nil || rows[0].TTFTP95CI.Lo != 16.5 || rows[0].Requests == 0 {
		t.Errorf("rows = %+v, want the summary's numbers and interval", rows)
	}
	if _, err := FromArtifacts(copyRun(t, false)); err == nil {
		t.Error("a summary without surge's intervals: the records were not read")
	}
}
