package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/profile"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/metrics/history"
)

// TestMergeShardedSweep: two shards of a concurrency sweep merge into the
// sweep's layout — one run folder per value holding that value's merged
// records, inputs and summary (every request of both shards, exactly once),
// and sweep_aggregate/ — with the whole plan's request bodies per value,
// as one process running the sweep whole writes them.
func TestMergeShardedSweep(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&apptest.Server{Tokens: 3})
	defer srv.Close()
	root := t.TempDir()
	run := func(dir, shard, startAt string) error {
		c := apptest.RunConfig(srv.URL, filepath.Join(root, dir))
		c.Concurrency, c.RequestCount, c.Seed = "2,4", 8, 3
		c.Shard, c.StartAt = shard, startAt
		s, err := spec.Parse(c)
		if err != nil {
			return err
		}
		_, err = profile.Run(t.Context(), s, io.Discard, io.Discard)
		return err
	}
	if err := run("whole", "", ""); err != nil {
		t.Fatal(err)
	}
	// The shards run at once, from one instant, as on two hosts.
	startAt := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = run(fmt.Sprintf("s%d", i), fmt.Sprintf("%d/2", i), startAt) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "merged")
	var console bytes.Buffer
	if err := Merge([]string{filepath.Join(root, "s0"), filepath.Join(root, "s1")}, out, &console, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(console.String(), "apart") {
		t.Errorf("shards run at once are said to have run apart:\n%s", console.String())
	}
	for _, sub := range []string{"concurrency_2", "concurrency_4"} {
		got, whole := filepath.Join(out, sub), filepath.Join(root, "whole", sub)
		if n := apptest.RunAvg(t, apptest.ReadExport(t, got), "request_count"); n != 8 {
			t.Errorf("%s: request_count %v, want the value's 8", sub, n)
		}
		ids := map[string]bool{}
		for _, l := range apptest.RecordLines(t, got) {
			id := l["metadata"].(map[string]any)["x_request_id"].(string)
			if ids[id] {
				t.Errorf("%s: request %s twice", sub, id)
			}
			ids[id] = true
		}
		if len(ids) != 8 {
			t.Errorf("%s: %d records, want 8", sub, len(ids))
		}
		gotSum, gotN := apptest.InputsFingerprint(t, got)
		wantSum, wantN := apptest.InputsFingerprint(t, whole)
		if gotSum != wantSum || gotN != wantN {
			t.Errorf("%s: merged inputs %s (%d bodies), the whole run's %s (%d)", sub, gotSum, gotN, wantSum, wantN)
		}
	}
	for _, f := range []string{export.SweepJSONFile, export.SweepCSVFile} {
		if _, err := os.Stat(filepath.Join(out, profile.FolderSweepAggregate, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, spec.FileJSONL)); err == nil {
		t.Error("the merged sweep has records at its top (want them in the run folders only)")
	}
	top := apptest.ReadExport(t, out)
	if n := apptest.RunAvg(t, top, "request_count"); n != 16 {
		t.Errorf("top-level request_count %v, want 16", n)
	}
	if w := fmt.Sprint(top["warnings"]); strings.Contains(w, "t-digests") {
		t.Errorf("a sweep's top level warns of digests: %s", w)
	}
	if !strings.Contains(console.String(), filepath.Join(out, "concurrency_4")+string(filepath.Separator)) {
		t.Errorf("the console does not list the run folders:\n%s", console.String())
	}

	// Merging again into the same -o keeps the first merge: it moves
	// aside to OUT-1, whole, and the console says so.
	console.Reset()
	if err := Merge([]string{filepath.Join(root, "s0"), filepath.Join(root, "s1")}, out, &console, false); err != nil {
		t.Fatal(err)
	}
	if want := out + " held an earlier export: moved it to " + out + "-1"; !strings.Contains(console.String(), want) {
		t.Errorf("a second merge into -o does not say it moved the first:\n%s", console.String())
	}
	if n := apptest.RunAvg(t, apptest.ReadExport(t, out+"-1"), "request_count"); n != 16 {
		t.Errorf("the moved first merge: request_count %v, want 16", n)
	}
}

func TestMain(m *testing.M) { apptest.Main(m) }

// TestMergeRefusesShardsRunApart: a shard run ten minutes after the other
// (its export's window moved so) is refused, exit 2, naming both windows;
// --force merges them and the summary warns, once, by how much the
// throughputs read low.
func TestMergeRefusesShardsRunApart(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&apptest.Server{Tokens: 3})
	defer srv.Close()
	root := t.TempDir()
	startAt := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			c := apptest.RunConfig(srv.URL, filepath.Join(root, fmt.Sprint("s", i)))
			c.RequestCount, c.Seed, c.Shard, c.StartAt = 8, 3, fmt.Sprintf("%d/2", i), startAt
			_, errs[i] = profile.Run(t.Context(), apptest.Spec(t, c), io.Discard, io.Discard)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// Move shard 1's window ten minutes on, as if run after shard 0.
	file := filepath.Join(root, "s1", spec.FileJSON)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"start_time", "end_time"} {
		at, err := time.Parse(time.RFC3339Nano, m[k].(string))
		if err != nil {
			t.Fatal(err)
		}
		m[k] = at.Add(10 * time.Minute).Format(time.RFC3339Nano)
	}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(root, "s0"), filepath.Join(root, "s1")}
	var console bytes.Buffer
	err = Merge(dirs, filepath.Join(root, "refused"), &console, false)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "the shards did not run at once") || !strings.Contains(err.Error(), "shard 1 600.") ||
		!strings.Contains(err.Error(), "--force") {
		t.Errorf("shards run apart: %v, want a usage error naming their windows", err)
	}
	if _, err := os.Stat(filepath.Join(root, "refused")); err == nil {
		t.Error("a refused merge wrote its folder")
	}
	if err := Merge(dirs, filepath.Join(root, "forced"), &console, true); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(strings.Fields(console.String()), " "), "warning [shard-windows]: the shards ran apart: they did not run together; the throughputs read up to"); n != 1 {
		t.Errorf("--force: the warning %d times, want once:\n%s", n, console.String())
	}
}

// TestMergeRemembersTheRun: shards record nothing in the history; surge
// merge records the merged run once, where and as the shards were told
// (--history, --history-label in their input_config).
func TestMergeRemembersTheRun(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&apptest.Server{Tokens: 3})
	defer srv.Close()
	root := t.TempDir()
	db := filepath.Join(root, "runs.db")
	for _, shard := range []string{"0/2", "1/2"} {
		c := apptest.RunConfig(srv.URL, filepath.Join(root, "s"+shard[:1]))
		c.RequestCount, c.Seed, c.Shard = 8, 3, shard
		c.History, c.NoHistory, c.HistoryLabel = db, false, "sharded"
		if _, err := profile.Run(t.Context(), apptest.Spec(t, c), io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("a shard wrote the history")
	}
	out := filepath.Join(root, "merged")
	app := &cli.App{Name: "surge", Writer: io.Discard, Commands: []*cli.Command{MergeCommand()}}
	if err := app.Run([]string{"surge", "merge", filepath.Join(root, "s0"), filepath.Join(root, "s1"), "-o", out}); err != nil {
		t.Fatal(err)
	}
	s, err := history.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.List(t.Context(), history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Label != "sharded" || rows[0].Dir != out || rows[0].Requests != 8 {
		t.Errorf("the history holds %+v, want the merged run of 8 requests, labelled sharded", rows)
	}
}
