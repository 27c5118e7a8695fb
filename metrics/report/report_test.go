package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/plot"

	"github.com/surgebench/surge/metrics/artifact"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func load(t *testing.T, dirs ...string) []*artifact.Run {
	t.Helper()
	var paths []string
	for _, d := range dirs {
		paths = append(paths, filepath.Join("testdata", d))
	}
	runs, err := artifact.LoadAll(paths)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestGoldenData pins the data the report embeds for each kind of input: a
// surge run with errors and GPU telemetry, a sweep with a knee, AIPerf's own
// JSONL, and all three together.
func TestGoldenData(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dirs []string
	}{
		{"run-a", []string{"run-a"}},
		{"sweep", []string{"sweep"}},
		{"aiperf", []string{"aiperf"}},
		{"all", []string{"run-a", "sweep", "aiperf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Build(load(t, tc.dirs...))
			got, err := json.MarshalIndent(d, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./metrics/report -update)", err)
			}
			if diff := cmp.Diff(string(bytes.TrimSpace(want)), string(got)); diff != "" {
				t.Errorf("report data differs from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestBuildContents checks what the goldens could hide if they were
// regenerated blindly: every chart the issue names is there, the knee and
// operating point are marked, the AIPerf run is charted from its JSONL.
func TestBuildContents(t *testing.T) {
	t.Parallel()
	d := Build(load(t, "run-a", "sweep", "aiperf"))
	ids := map[string]Chart{}
	for _, c := range d.Charts {
		ids[c.ID] = c
		for _, s := range c.Series {
			if len(s.X) != len(s.Y) || len(s.X) == 0 {
				t.Errorf("chart %s series %q: %d x, %d y", c.ID, s.Label, len(s.X), len(s.Y))
			}
		}
	}
	for _, id := range []string{"cdf-time_to_first_token", "cdf-inter_token_latency", "cdf-request_latency",
		"hist-time_to_first_token", "hist-inter_token_latency", "hist-request_latency",
		"throughput", "requests", "inflight", "errors", "ttft-scatter", "sweep-ttft", "sweep-latency",
		"gpu-gpu_utilization", "gpu-power_usage_w", "server-num_requests_running"} {
		if _, ok := ids[id]; !ok {
			t.Errorf("chart %s missing", id)
		}
	}
	var labels []string
	for _, s := range ids["sweep-ttft"].Series {
		labels = append(labels, s.Label)
	}
	want := []string{"sweep", "sweep knee (concurrency 4)", "sweep operating point (concurrency 2)"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("sweep series (-want +got):\n%s", diff)
	}
	if n := len(ids["cdf-time_to_first_token"].Series); n != 3 {
		t.Errorf("TTFT CDF has %d series, want one per run (3)", n)
	}
	if d.Runs[2].Source != "records only" || d.Runs[2].Records != 16 || d.Runs[2].Errors != 1 {
		t.Errorf("aiperf run info = %+v", d.Runs[2])
	}
	var errSeries float64
	for _, s := range ids["errors"].Series {
		if s.Label == "run-a" {
			for _, y := range s.Y {
				errSeries += float64(y)
			}
		}
	}
	if errSeries == 0 {
		t.Errorf("run-a's two errors are not on the errors timeline")
	}
	if len(d.Runs[1].Warnings) == 0 || !strings.Contains(d.Runs[1].Warnings[0], "knee") {
		t.Errorf("sweep warnings = %q, want the knee warning", d.Runs[1].Warnings)
	}
}

func TestSpread(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s, e, total float64
		want        []float64
	}{
		{0.5, 2.5, 4, []float64{1, 2, 1}},
		{1.2, 1.2, 3, []float64{0, 3, 0}},
		{0, 3, 3, []float64{1, 1, 1}},
		{2.5, 9, 6.5, []float64{0, 0, 0.5}},
	} {
		bins := make([]float64, 3)
		spread(bins, tc.s, tc.e, tc.total)
		if diff := cmp.Diff(tc.want, bins); diff != "" {
			t.Errorf("spread(%g, %g, %g) (-want +got):\n%s", tc.s, tc.e, tc.total, diff)
		}
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, Build(load(t, "run-a", "sweep"))); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{"<script src", "<link ", "http://", "https://cdn"} {
		if i := strings.Index(page, bad); i >= 0 && !strings.Contains(page[max(0, i-200):i], "surge-data") {
			// Data may hold the run's URL; markup must fetch nothing.
			if bad != "http://" {
				t.Errorf("page references %q: it must open without a network", bad)
			}
		}
	}
	if !strings.Contains(page, "uPlot") || !strings.Contains(page, "Leon Sorokin") {
		t.Errorf("page lacks the embedded uPlot or its licence")
	}
	if strings.Count(page, "</script>") != 3 {
		t.Errorf("page has %d </script>, want 3 (data, uPlot, page)", strings.Count(page, "</script>"))
	}
}

// TestBrowserDrawsEveryChart opens the report in a headless Chromium when
// one is installed, and checks from the DOM that every chart drew each of
// its series (the page marks data-series with the series uPlot built a
// path for).
func TestBrowserDrawsEveryChart(t *testing.T) {
	t.Parallel()
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium on this machine (install chromium to run the browser test)")
	}
	for _, dirs := range [][]string{{"run-a", "sweep", "aiperf"}, {"sweep"}} {
		t.Run(strings.Join(dirs, "+"), func(t *testing.T) { browserCheck(t, browser, Build(load(t, dirs...))) })
	}
}

// browserCheck renders d in a 1280 px wide window and checks every chart
// from the DOM: drawn, with its series, its axes labelled, and no
// horizontal scroll.
func browserCheck(t *testing.T, browser string, d Data) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, d); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1280,2000", "--virtual-time-budget=10000", "--dump-dom", "file://"+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, stderr.String())
	}
	if !strings.Contains(string(dom), `data-charts-done="`) {
		t.Fatalf("the page's script did not finish (no data-charts-done); stderr:\n%s", stderr.String())
	}
	re := regexp.MustCompile(`<div class="chart" id="chart-([^"]+)"[^>]*>`)
	attr := func(tag, name string) string {
		m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(tag)
		if m == nil {
			return ""
		}
		return m[1]
	}
	seen := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(dom), -1) {
		seen[m[1]] = m[0]
	}
	for _, c := range d.Charts {
		tag, ok := seen[c.ID]
		if !ok {
			t.Errorf("chart %s: no element in the DOM", c.ID)
			continue
		}
		if e := attr(tag, "data-error"); e != "" {
			t.Errorf("chart %s failed: %s", c.ID, e)
		}
		if attr(tag, "data-drawn") != "1" {
			t.Errorf("chart %s never drew", c.ID)
		}
		if got, want := attr(tag, "data-series"), strconvI(len(c.Series)); got != want {
			t.Errorf("chart %s drew %s series, want %s", c.ID, got, want)
		}
		if attr(tag, "data-x-label") == "" || attr(tag, "data-y-label") == "" {
			t.Errorf("chart %s: axis without a label (x %q, y %q)", c.ID, attr(tag, "data-x-label"), attr(tag, "data-y-label"))
		}
	}
	m := regexp.MustCompile(`data-scroll-width="(\d+)"`).FindStringSubmatch(string(dom))
	if m == nil {
		t.Fatalf("the page did not report its scroll width")
	}
	if w, _ := strconv.Atoi(m[1]); w > 1280 {
		t.Errorf("the page is %d px wide in a 1280 px window: it scrolls sideways", w)
	}
	if len(seen) != len(d.Charts) {
		t.Errorf("DOM has %d charts, data %d", len(seen), len(d.Charts))
	}
	if d.Sweep {
		// The sweep leads: its stage table and curves come before the
		// pooled numbers, which say they are pooled.
		sw, pooled := strings.Index(string(dom), `id="chart-sweep-ttft"`), strings.Index(string(dom), "All stages pooled")
		if sw < 0 || pooled < 0 || sw > pooled || strings.Index(string(dom), "Sweep stages:") > sw {
			t.Errorf("sweep page order: stage table, curves, then pooled summary (curves at %d, pooled at %d)", sw, pooled)
		}
	}
}

func strconvI(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestPNGs writes every chart as a PNG, decodes each, and checks its size
// and that each run with a series in the chart left pixels of its colour.
func TestPNGs(t *testing.T) {
	t.Parallel()
	d := Build(load(t, "run-a", "sweep", "aiperf"))
	dir := filepath.Join(t.TempDir(), "png")
	paths, err := WritePNGs(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(d.Charts) {
		t.Fatalf("%d files for %d charts", len(paths), len(d.Charts))
	}
	for i, c := range d.Charts {
		if want := filepath.Join(dir, c.ID+".png"); paths[i] != want {
			t.Errorf("chart %s written to %s, want %s", c.ID, paths[i], want)
		}
		f, err := os.Open(paths[i])
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", paths[i], err)
		}
		if b := img.Bounds(); b.Dx() != 1152 || b.Dy() != 648 {
			t.Errorf("%s is %dx%d, want 1152x648", paths[i], b.Dx(), b.Dy())
		}
	}
	// Each series alone, without the legend, adds pixels of its colour to
	// the chart drawn without it (axes and grid are there in both).
	count := func(c Chart, want color.RGBA) int {
		t.Helper()
		canvas, err := render(c, false)
		if err != nil {
			t.Fatal(err)
		}
		img, ok := canvas.Image().(*image.RGBA)
		if !ok {
			t.Fatalf("canvas image is %T", canvas.Image())
		}
		n := 0
		for i := 0; i+3 < len(img.Pix); i += 4 {
			switch {
			case img.Pix[i] == want.R && img.Pix[i+1] == want.G && img.Pix[i+2] == want.B && img.Pix[i+3] == want.A:
				n++
			case want == (color.RGBA{0, 0, 0, 0xff}) && img.Pix[i] < 80 && img.Pix[i+1] < 80 && img.Pix[i+2] < 80:
				n++ // a mark's black, smoothed at its edges
			}
		}
		return n
	}
	for _, c := range d.Charts {
		for _, s := range c.Series {
			want := Palette[s.Run]
			if s.Marker != "" {
				want = color.RGBA{0, 0, 0, 0xff}
			}
			with, without := c, c
			with.Series = []Series{s}
			base := 0
			if s.Marker != "" {
				// Black: the axes are drawn in it too. The same point
				// unmarked keeps the axes as they are.
				plain := s
				plain.Marker = ""
				without.Series = []Series{plain}
				base = count(without, want)
			}
			if n := count(with, want); n-base < 20 {
				t.Errorf("chart %s series %q: %d pixels of its colour, %d without it: want it drawn", c.ID, s.Label, n, base)
			}
		}
	}
	// A folder that cannot be made is an error, not a panic.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := WritePNGs(filepath.Join(file, "sub"), d); err == nil {
		t.Errorf("WritePNGs under a file: no error")
	}
}

// TestMergedRun: a `surge merge` export (metrics/compare/testdata/merged:
// two shards of one plan) reports like a run, its shards named in the run
// info.
func TestMergedRun(t *testing.T) {
	t.Parallel()
	runs, err := artifact.LoadAll([]string{"../compare/testdata/merged"})
	if err != nil {
		t.Fatal(err)
	}
	d := Build(runs)
	if r := d.Runs[0]; r.Records != 120 || r.Errors != 0 || !strings.HasPrefix(r.Source, "surge ") {
		t.Errorf("merged run info %+v", r)
	}
	info := map[string]string{}
	for _, kv := range d.Runs[0].RunInfo {
		info[kv.Key] = kv.Value
	}
	if info["shards"] != "2" || !strings.Contains(info["merged_from"], "s1") {
		t.Errorf("run info shards %q merged_from %q", info["shards"], info["merged_from"])
	}
	charts := map[string]int{}
	for _, c := range d.Charts {
		charts[c.ID] = len(c.Series)
	}
	for _, id := range []string{"cdf-time_to_first_token", "hist-request_latency", "throughput", "inflight", "ttft-scatter"} {
		if charts[id] != 1 {
			t.Errorf("chart %s has %d series, want the merged run's", id, charts[id])
		}
	}
}

// TestEveryAxisLabelled: every chart names both axes, with a unit where
// it has one.
func TestEveryAxisLabelled(t *testing.T) {
	t.Parallel()
	for _, c := range Build(load(t, "run-a", "sweep", "aiperf")).Charts {
		if c.XLabel == "" || c.YLabel == "" {
			t.Errorf("chart %s: x label %q, y label %q", c.ID, c.XLabel, c.YLabel)
		}
	}
}

// TestSweepReport: a sweep alone leads with its curve, labels each point
// with its swept value, carries the stages' intervals, draws the
// distributions per stage and gives each stage the same width of the
// time axis.
func TestSweepReport(t *testing.T) {
	t.Parallel()
	runs := load(t, "sweep")
	for i := range runs[0].Summary.Stages {
		st := &runs[0].Summary.Stages[i]
		st.TTFTP95CI = &artifact.Range{Lo: st.TTFT.P95 * 0.9, Hi: st.TTFT.P95 * 1.2}
	}
	d := Build(runs)
	if !d.Sweep || len(d.Charts) < 2 || d.Charts[0].ID != "sweep-ttft" {
		t.Fatalf("sweep %v, first chart %q", d.Sweep, d.Charts[0].ID)
	}
	line := d.Charts[0].Series[0]
	if diff := cmp.Diff([]string{"1", "2", "4", "8"}, line.Labels); diff != "" {
		t.Errorf("point labels (-want +got):\n%s", diff)
	}
	if len(line.YLo) != 4 || float64(line.YLo[0]) >= float64(line.Y[0]) || float64(line.YHi[0]) <= float64(line.Y[0]) {
		t.Errorf("TTFT intervals %v–%v around %v", line.YLo, line.YHi, line.Y)
	}
	if line.XLo != nil && len(line.XLo) != 4 {
		t.Errorf("throughput intervals %v", line.XLo)
	}
	charts := map[string]Chart{}
	for _, c := range d.Charts {
		charts[c.ID] = c
	}
	var labels []string
	for _, s := range charts["cdf-time_to_first_token"].Series {
		labels = append(labels, s.Label)
	}
	if diff := cmp.Diff([]string{"concurrency 1", "concurrency 2", "concurrency 4", "concurrency 8"}, labels); diff != "" {
		t.Errorf("TTFT CDF series (-want +got):\n%s", diff)
	}
	tput := charts["throughput"]
	if len(tput.XStages) != 4 || !strings.HasPrefix(tput.XStages[0], "concurrency 1 (") {
		t.Fatalf("throughput x stages %q", tput.XStages)
	}
	// Stage i's bins lie in [i, i+1): each stage gets the same width.
	per := make([]int, 4)
	for _, x := range tput.Series[0].X {
		per[min(3, int(x))]++
	}
	for i, n := range per {
		if n < 20 {
			t.Errorf("stage %d has %d bins on the time axis, want at least 20", i+1, n)
		}
	}
}

func TestDisplay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   float64
		want string
	}{{25.6133, "25.6"}, {5.001823, "5.00"}, {0.41234, "0.412"}, {160, "160"}, {1234.56, "1235"}, {413.303, "413"}, {0.000123, "0.000123"}, {math.NaN(), "–"}, {-3.14159, "-3.14"}} {
		if got := display(Num(tc.in)); got != tc.want {
			t.Errorf("display(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPlotReadable: a PNG's linear axes start at zero, are marked every
// round step (whole steps on an axis of runs), and a sweep's points carry
// their values' names; surge's own scrape time is no chart; the note on
// intervals is left out of a summary without any.
func TestPlotReadable(t *testing.T) {
	c := Chart{ID: "sweep-ttft", XLabel: "tokens/s", YLabel: "ms", Series: []Series{{Label: "r", Style: Line,
		X: []Num{190, 380, 760}, Y: []Num{668, 669, 672}, Labels: []string{"1", "2", "4"}}}}
	p, err := plotChart(c, true)
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Min != 0 || p.Y.Min != 0 || p.X.Max < 760 || p.Y.Max < 672 {
		t.Errorf("axes %v–%v × %v–%v, want both from zero over the data", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	labelled := func(ticks []plot.Tick) (n int) {
		for _, tk := range ticks {
			if tk.Label != "" {
				n++
			}
		}
		return n
	}
	if n := labelled(p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max)); n < 6 || n > 12 {
		t.Errorf("%d labelled ticks on the y axis, want about ten", n)
	}
	for _, tk := range (roundTicks{whole: true}).Ticks(0.5, 6.5) {
		if tk.Value != math.Trunc(tk.Value) || strings.Contains(tk.Label, ".") {
			t.Errorf("a run axis ticked at %v (%q)", tk.Value, tk.Label)
		}
	}
	if l, err := pointLabels(c.Series[0], false); err != nil || l == nil || len(l.Labels) != 3 {
		t.Errorf("point names %v %v, want the 3 stages'", l, err)
	}
	run := &artifact.Run{Name: "r", Server: []artifact.Sample{{AtSec: 1, Source: "s", Values: map[string]float64{"scrape_ns": 2e6, "num_requests_running": 4}}, {AtSec: 2, Source: "s", Values: map[string]float64{"scrape_ns": 3e6, "num_requests_running": 5}}}}
	for _, ch := range telemetryCharts([]*artifact.Run{run}, "server", "server", func(r *artifact.Run) []artifact.Sample { return r.Server }) {
		if strings.Contains(ch.ID, "scrape") {
			t.Errorf("a chart of surge's own scrape time: %s", ch.ID)
		}
	}
	if (Data{Summary: []Row{{Metric: "x", Values: []Num{1}}}}).HasIntervals() || !(Data{Summary: []Row{{Metric: "x", CI: []string{"1–2 ±5%"}}}}).HasIntervals() {
		t.Error("HasIntervals")
	}
}
