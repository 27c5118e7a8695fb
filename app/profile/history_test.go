package profile

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/history"
	"github.com/surgebench/surge/telemetry/serverinfo"
)

// historyRows lists every row (runs and stages) of the history at db.
func historyRows(t *testing.T, db string) []history.Row {
	t.Helper()
	s, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.List(context.Background(), history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestRunsRememberThemselves: a run appends itself to --history once,
// after its exports, under --history-label: a plain run as one row, a
// sweep as its run and its stages, repeated runs as each run (the top
// folder read once); a shard records nothing (surge merge records the
// merged run); --no-history writes no database at all.
func TestRunsRememberThemselves(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&apptest.Server{Tokens: 3})
	defer srv.Close()
	for _, tc := range []struct {
		name  string
		set   func(c *cmdline.Config)
		kinds string // the rows' kinds, in order
	}{
		{"run", func(c *cmdline.Config) {}, "run"},
		{"sweep", func(c *cmdline.Config) { c.Concurrency = "2,4" }, "run stage stage"},
		{"repeats", func(c *cmdline.Config) { c.NumProfileRuns, c.Seed = 2, 3 }, "run run"},
		{"shard", func(c *cmdline.Config) { c.Shard = "0/2" }, ""},
		{"off", func(c *cmdline.Config) { c.NoHistory, c.History, c.HistoryLabel = true, "", "" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "runs.db")
			c := apptest.RunConfig(srv.URL, filepath.Join(dir, "out"))
			c.History, c.NoHistory, c.HistoryLabel = db, false, "nightly"
			tc.set(&c)
			var log bytes.Buffer
			res, err := runConfig(context.Background(), c, io.Discard, &log)
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			if tc.kinds == "" {
				if _, err := os.Stat(db); err == nil || strings.Contains(log.String(), "history") {
					t.Errorf("a database was written (%v), or the log speaks of one:\n%s", err, log.String())
				}
				return
			}
			rows := historyRows(t, db)
			var kinds []string
			for _, r := range rows {
				kinds = append(kinds, r.Kind)
				if r.Label != "nightly" || r.RunUID != rows[0].RunUID {
					t.Errorf("row %d: label %q, run %s (want nightly, one run %s)", r.ID, r.Label, r.RunUID, rows[0].RunUID)
				}
			}
			if got := strings.Join(kinds, " "); got != tc.kinds {
				t.Errorf("rows %q, want %q", got, tc.kinds)
			}
			abs, _ := filepath.Abs(res.Dir)
			if rows[0].Dir != abs && rows[0].Dir != filepath.Join(abs, FolderProfileRuns, "run_0001") {
				t.Errorf("the run's folder %s, want %s", rows[0].Dir, abs)
			}
			// The note wraps at 80 columns: read as words.
			if want := "recorded as run 1 in " + db; !strings.Contains(strings.Join(strings.Fields(log.String()), " "), want) {
				t.Errorf("the log does not say %q:\n%s", want, log.String())
			}
			if info := apptest.ReadExport(t, filepath.Join(dir, "out", exportOf(tc.name)))["run_info"].(map[string]any); info["history_label"] != "nightly" {
				t.Errorf("run_info.history_label %v, want nightly (for a later import)", info["history_label"])
			}
		})
	}
}

// exportOf is where a case's summary export is, under its folder.
func exportOf(name string) string {
	if name == "repeats" {
		return filepath.Join(FolderProfileRuns, "run_0001")
	}
	return ""
}

// TestServerFactsAndPrice: what the server says of itself (vLLM's
// /version, its model card) reaches run_info.server and the history's row;
// --cost-per-hour prices every export, and the row.
func TestServerFactsAndPrice(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/v1/chat/completions", &apptest.Server{Tokens: 3})
	mux.HandleFunc("/version", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"version":"0.8.5.post1"}`) })
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"e2e-model","object":"model","max_model_len":8192}]}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "runs.db")
	c := apptest.RunConfig(srv.URL, filepath.Join(dir, "out"))
	c.History, c.NoHistory, c.CostPerHour = db, false, 3.6
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	exp := apptest.ReadExport(t, filepath.Join(dir, "out"))
	server, _ := exp["run_info"].(map[string]any)["server"].(map[string]any)
	flags, _ := server["flags"].(map[string]any)
	if server["engine"] != "vllm" || server["version"] != "0.8.5.post1" || server["model"] != "e2e-model" || flags["max_model_len"] != "8192" {
		t.Errorf("run_info.server = %v, want vLLM 0.8.5.post1 serving e2e-model, max_model_len 8192", server)
	}
	perM := apptest.RunAvg(t, exp, string(metrics.CostPerMOutputTokens))
	if thr := apptest.RunAvg(t, exp, string(metrics.OutputTokenThroughput)); math.Abs(perM-3.6/(thr*3600)*1e6) > 1e-3*perM {
		t.Errorf("cost_per_1m_output_tokens %v at %v tokens/s and $3.6 an hour", perM, thr)
	}
	rows := historyRows(t, db)
	if len(rows) != 1 || rows[0].Engine != "vllm" || rows[0].ServerVersion != "0.8.5.post1" || !(rows[0].CostPerMOutputTokens > 0) || rows[0].CostPerHour != 3.6 {
		t.Errorf("the history's rows %+v, want one with the engine, its version and the cost", rows)
	}
}

// TestSearchPricesItsCapacity: with --cost-per-hour a search says what a
// million output tokens cost at the capacity it found, with the interval
// the passing probe's throughput gives, and keeps it in run_info.
func TestSearchPricesItsCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("a search of three probes takes seconds")
	}
	t.Parallel()
	c, dir := searchConfig(t, "time_to_first_token:p95:2000")
	c.CostPerHour = 2.5
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), log.String())
	}
	if !strings.Contains(out.String(), "cost at the capacity: $") || !strings.Contains(out.String(), "at $2.50 an hour (--cost-per-hour)") {
		t.Errorf("the search does not price its capacity:\n%s", out.String())
	}
	cost, _ := apptest.ReadExport(t, dir)["run_info"].(map[string]any)["search_cost"].(map[string]any)
	if v, _ := cost["usd_per_1m_output_tokens"].(float64); !(v > 0) || cost["usd_per_hour"] != 2.5 {
		t.Errorf("run_info.search_cost = %v", cost)
	}
}

// TestWriteCost: the capacity's cost line, its interval's ends swapped
// from the throughput's, an unbounded end said so.
func TestWriteCost(t *testing.T) {
	for _, tc := range []struct {
		cost *metrics.Cost
		want string
	}{
		{nil, ""},
		{&metrics.Cost{USDPerHour: 2.5, PerMOutputTokens: 1.2345}, "cost at the capacity: $1.23 per 1M output tokens, at $2.50 an hour (--cost-per-hour)\n"},
		{&metrics.Cost{USDPerHour: 2.5, PerMOutputTokens: 0.004321, Level: 0.95, CI: &metrics.CostInterval{Lo: 0.004, Hi: 0.0051}},
			"cost at the capacity: $0.00432 per 1M output tokens (95% CI $0.004 to $0.0051), at $2.50 an hour (--cost-per-hour)\n"},
		{&metrics.Cost{USDPerHour: 1, PerMOutputTokens: 3, Level: 0.95, CI: &metrics.CostInterval{Lo: 2, Hi: metrics.JSONNum(math.Inf(1))}},
			"cost at the capacity: $3.00 per 1M output tokens (95% CI $2.00 to unbounded), at $1.00 an hour (--cost-per-hour)\n"},
	} {
		var b bytes.Buffer
		writeCost(&b, tc.cost)
		if b.String() != tc.want {
			t.Errorf("writeCost(%+v) = %q, want %q", tc.cost, b.String(), tc.want)
		}
	}
}

// TestWithGPUs: NVML's GPUs join what the server said, or stand alone
// when it said nothing; without NVML the facts are as the server gave them.
func TestWithGPUs(t *testing.T) {
	gpus := []serverinfo.GPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Driver: "550.54.15"}}
	if f := withGPUs(nil, nil); f != nil {
		t.Errorf("no facts, no GPUs: %+v, want nil", f)
	}
	if f := withGPUs(nil, gpus); f == nil || len(f.GPUs) != 1 || f.Engine != "" {
		t.Errorf("GPUs alone: %+v", f)
	}
	said := &serverinfo.Facts{Engine: serverinfo.VLLM, Version: "0.8.5"}
	if f := withGPUs(said, gpus); f != said || f.GPUs[0].Driver != "550.54.15" || f.Engine != serverinfo.VLLM {
		t.Errorf("the server's facts with GPUs: %+v", f)
	}
	if f := withGPUs(&serverinfo.Facts{Engine: serverinfo.TGI}, nil); f.GPUs != nil {
		t.Errorf("no NVML: %+v", f)
	}
}
