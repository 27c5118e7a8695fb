// Package merge combines the exports of the shards of one sharded run
// (`surge profile --shard i/N` on N load hosts) into one export of the same
// shape, as if one host had sent every request.
//
// Counts, sums and moments add exactly, from each shard's state sidecar
// (metrics.State: every distribution's digest with its exact moments).
// Percentiles come from the union of the shards' per-request records when
// every shard has its profile_export.jsonl, which is exact, and from the
// merged digests otherwise. Times are put on one clock by each shard's
// start, so durations and throughputs cover the union of the shards'
// windows. Shards of different plans (another seed, flag or version) are
// refused, naming the difference.
package merge

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/metrics/fingerprint"
)

// Shard is one shard's export folder, read back.
type Shard struct {
	Dir string
	// Index and Count are the shard's place in the plan (run_info.shard).
	Index, Count int
	// Run is the folder's summary and (when present) records.
	Run *artifact.Run
	// HasRecords is set when the folder has its per-request JSONL.
	HasRecords bool
	// RunFolders are a sweep's run folders, one per value in stage order
	// (run_info.stage_folders): its records are there, not at the top.
	RunFolders []string
	// State is the shard's metrics state (the export's sidecar).
	State *metrics.State
	// Start and End bound the shard's run (wall clock).
	Start, End time.Time
	// LateMs is how late the shard started for --start-at (0: on time).
	LateMs float64
}

// ShardInfo is the run_info.shard object a shard's export carries.
type ShardInfo struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is --start-at, when given (RFC 3339).
	StartAt string `json:"start_at,omitempty"`
	// LateMs is how much after StartAt the shard started issuing.
	LateMs float64 `json:"late_ms,omitempty"`
}

// ShardKeys are the input_config keys that tell shards of one plan apart:
// they are not part of the plan.
var ShardKeys = []string{"shard", "shards", "start_at"}

// Load reads the shard export folders dirs.
func Load(dirs []string) ([]*Shard, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no shard folder given")
	}
	out := make([]*Shard, 0, len(dirs))
	for _, d := range dirs {
		s, err := loadShard(d)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func loadShard(dir string) (*Shard, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a folder (name each shard's export folder)", dir)
	}
	run, err := artifact.Load(dir)
	if err != nil {
		return nil, err
	}
	if run.Summary == nil {
		return nil, fmt.Errorf("%s: no %s: not a finished run's export", dir, artifact.SummaryFile)
	}
	s := &Shard{Dir: dir, Run: run}
	_, err = os.Stat(filepath.Join(dir, artifact.RecordsFile))
	s.HasRecords = err == nil
	if folders, ok := run.Summary.RunInfo["stage_folders"].([]any); ok {
		for _, f := range folders {
			name, _ := f.(string)
			if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
				return nil, fmt.Errorf("%s: run_info.stage_folders has %v, not a folder name", dir, f)
			}
			s.RunFolders = append(s.RunFolders, name)
		}
	}
	var info ShardInfo
	raw, ok := run.Summary.RunInfo["shard"]
	if !ok {
		return nil, fmt.Errorf("%s: not a shard's export (run_info has no shard: was it run with --shard?)", dir)
	}
	if b, err := json.Marshal(raw); err != nil || json.Unmarshal(b, &info) != nil || info.Count < 1 {
		return nil, fmt.Errorf("%s: run_info.shard %v is not {index, count}", dir, raw)
	}
	s.Index, s.Count, s.LateMs = info.Index, info.Count, info.LateMs
	if s.Start, err = time.Parse(time.RFC3339Nano, run.Summary.StartTime); err != nil {
		return nil, fmt.Errorf("%s: start_time: %w", dir, err)
	}
	if s.End, err = time.Parse(time.RFC3339Nano, run.Summary.EndTime); err != nil {
		return nil, fmt.Errorf("%s: end_time: %w", dir, err)
	}
	b, err := artifact.ReadSummaryFile(filepath.Join(dir, export.StateFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (the metrics state every shard export carries; was it written by an older surge?)", dir, err)
	}
	s.State = &metrics.State{}
	if err := json.Unmarshal(b, s.State); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, export.StateFile), err)
	}
	return s, nil
}

// PlanError says why shards cannot be merged: they are not the N shards of
// one plan.
type PlanError struct {
	Reason string
	// Setting is the input_config setting the shards differ in (a dotted
	// path, or an older export's flat name), when that is the reason.
	Setting string
}

func (e *PlanError) Error() string { return e.Reason }

func planErrorf(format string, args ...any) error {
	return &PlanError{Reason: fmt.Sprintf(format, args...)}
}

// Check verifies that shards are the N shards of one plan, each once, and
// returns them in index order. A difference is a *PlanError naming it: the
// flag (input_config key) whose values differ, the surge version or the
// dataset, and the shard missing or given twice.
func Check(shards []*Shard) ([]*Shard, error) {
	sorted := slices.Clone(shards)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].Index < sorted[b].Index })
	first := sorted[0]
	n := first.Count
	seen := map[int]*Shard{}
	for _, s := range sorted {
		if s.Count != n {
			return nil, planErrorf("%s is shard %d of %d, but %s is shard %d of %d: not one plan", s.Dir, s.Index, s.Count, first.Dir, first.Index, n)
		}
		if s.Index < 0 || s.Index >= n {
			return nil, planErrorf("%s: shard index %d is outside 0..%d", s.Dir, s.Index, n-1)
		}
		if o, ok := seen[s.Index]; ok {
			return nil, planErrorf("shard %d of %d given twice: %s and %s", s.Index, n, o.Dir, s.Dir)
		}
		seen[s.Index] = s
	}
	var missing []string
	for i := range n {
		if seen[i] == nil {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return nil, planErrorf("shard %s of %d missing: a merge needs all %d shards' exports", strings.Join(missing, ", "), n, n)
	}
	for _, s := range sorted[1:] {
		if err := samePlan(first, s); err != nil {
			return nil, err
		}
	}
	return sorted, nil
}

// Apart bounds how far apart shards may have run: a plan's shards run at
// once, so the union of their windows (first start to last end) is about
// the longest shard's. Past ApartWarn × the longest, Windows warns, with
// the numbers; past ApartRefuse × (or windows that do not meet at all),
// it refuses: the merged throughputs, over the union, would read a third
// low or worse (shards run one after another read 1/N).
const (
	ApartWarn   = 1.05
	ApartRefuse = 1.5
	// ApartSlack is how far apart windows may lie whatever their length:
	// shards started at one instant still start a process's start-up
	// apart, which would otherwise refuse every short run.
	ApartSlack = 500 * time.Millisecond
)

// Windows checks that shards ran at once, as one plan's shards do: it
// returns a *PlanError when their windows lie too far apart (see Apart;
// with force, a warning instead), and a warning (one for the merged
// summary) when they overlap less than they should. Each shard's window
// is its start_time to end_time.
func Windows(shards []*Shard, force bool) (warning string, err error) {
	if len(shards) < 2 {
		return "", nil
	}
	first, lastStart, firstEnd, last := shards[0].Start, shards[0].Start, shards[0].End, shards[0].End
	var longest time.Duration
	for _, s := range shards {
		if s.Start.Before(first) {
			first = s.Start
		}
		if s.Start.After(lastStart) {
			lastStart = s.Start
		}
		if s.End.Before(firstEnd) {
			firstEnd = s.End
		}
		if s.End.After(last) {
			last = s.End
		}
		longest = max(longest, s.End.Sub(s.Start))
	}
	union, together := last.Sub(first), firstEnd.Sub(lastStart)
	if longest <= 0 || float64(union) <= ApartWarn*float64(longest) || union-longest <= ApartSlack {
		return "", nil
	}
	var spans []string
	for _, s := range shards {
		spans = append(spans, fmt.Sprintf("shard %d %.1f–%.1f s", s.Index, s.Start.Sub(first).Seconds(), s.End.Sub(first).Seconds()))
	}
	low := 100 * (1 - float64(longest)/float64(union))
	if (together <= 0 || float64(union) > ApartRefuse*float64(longest)) && !force {
		return "", planErrorf("the shards did not run at once, as one plan's shards do: %s (from the first start); merged over those %.1f s, "+
			"the throughputs would read %.0f%% low. Start every shard at one instant (--start-at, docs/sharding.md), or merge anyway with --force",
			strings.Join(spans, ", "), union.Seconds(), low)
	}
	ran := "they did not run together"
	if together > 0 {
		ran = fmt.Sprintf("they ran %.1f s together of %.1f s", together.Seconds(), union.Seconds())
	}
	return fmt.Sprintf("the shards' windows do not overlap as one plan's: %s (%s); the throughputs, over the %.1f s, read up to %.0f%% low",
		ran, strings.Join(spans, ", "), union.Seconds(), low), nil
}

// samePlan compares what decides the requests a shard sends: every
// workload flag but the shard's own, surge's version and the dataset.
func samePlan(a, b *Shard) error {
	differ := func(what, x, y string) error {
		return planErrorf("%s (shard %d) and %s (shard %d) ran different plans: %s %s vs %s", a.Dir, a.Index, b.Dir, b.Index, what, x, y)
	}
	sa, sb := a.Run.Summary, b.Run.Summary
	if sa.Version != sb.Version {
		return differ("surge version", sa.Version, sb.Version)
	}
	ca, cb := fingerprint.Flatten(sa.InputConfig), fingerprint.Flatten(sb.InputConfig)
	keys := slices.Sorted(maps.Keys(ca))
	for k := range cb {
		if _, ok := ca[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if slices.Contains(ShardKeys, k[strings.LastIndexByte(k, '.')+1:]) || !fingerprint.InWorkload(k) {
			continue
		}
		x, y := jsonText(ca[k]), jsonText(cb[k])
		if x != y {
			// An older export's flat keys are flag names; a dotted path
			// is named as it is (the app names its flag).
			what := "input_config " + k
			if !strings.Contains(k, ".") {
				what = "--" + strings.ReplaceAll(k, "_", "-")
			}
			err := differ(what, x, y).(*PlanError)
			err.Setting = k
			return err
		}
	}
	for _, k := range []string{"dataset", "tokenizer"} {
		x, y := jsonText(sa.Fingerprint[k]), jsonText(sb.Fingerprint[k])
		if x != y {
			return differ(k+" fingerprint", x, y)
		}
	}
	return nil
}

func jsonText(v any) string {
	if v == nil {
		return "(unset)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Result is the merged export, ready to write.
type Result struct {
	Summary *metrics.Summary
	State   *metrics.State
	Run     export.Run
	// Exact is set when the percentiles came from every shard's records;
	// otherwise they come from the merged digests.
	Exact bool
}

// Merge combines shards, which Check has verified and ordered.
func Merge(shards []*Shard) *Result {
	state := &metrics.State{}
	for _, s := range shards {
		state.Merge(s.State)
	}
	sum := state.Summary()
	res := &Result{Summary: sum, State: state, Exact: true}
	for _, s := range shards {
		res.Exact = res.Exact && s.HasRecords
	}
	if res.Exact {
		exactPercentiles(sum, shards)
	}
	first := shards[0].Run.Summary
	flat := fingerprint.Flatten(first.InputConfig)
	kneeFactor, _ := flat["loadgen.knee_factor"].(float64)
	if kneeFactor == 0 {
		kneeFactor, _ = flat["knee_factor"].(float64) // an older export
	}
	sum.MarkKnee(kneeFactor)
	n := len(shards)
	var late []string
	for _, s := range shards {
		for _, w := range s.Run.Summary.Warnings {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("shard %d/%d: %s", s.Index, n, w))
		}
		if s.LateMs > 0 {
			late = append(late, fmt.Sprintf("shard %d by %.0f ms", s.Index, s.LateMs))
		}
	}
	if len(late) > 0 {
		sum.Warnings = append(sum.Warnings, "shards started late for --start-at: "+strings.Join(late, ", "))
	}
	if !res.Exact && len(shards[0].RunFolders) == 0 {
		// (A sweep's records are in its run folders, each merged exactly:
		// its pooled summary comes from digests as a single run's does.)
		sum.Warnings = append(sum.Warnings, "percentiles from the shards' merged t-digests (not every shard has its profile_export.jsonl)")
	}

	run := export.Run{SurgeVersion: first.Version, Start: shards[0].Start, End: shards[0].End}
	// The merged run is the whole plan: its configuration says so (and so
	// hashes as a whole run of the plan does).
	cfg := wholePlan(first.InputConfig)
	info := maps.Clone(first.RunInfo)
	delete(info, "shard")
	sections := make([]any, 0, n)
	dirs := make([]string, 0, n)
	for _, s := range shards {
		if s.Start.Before(run.Start) {
			run.Start = s.Start
		}
		if s.End.After(run.End) {
			run.End = s.End
		}
		run.WasCancelled = run.WasCancelled || s.Run.Summary.WasCancelled
		sections = append(sections, section(s))
		dirs = append(dirs, s.Dir)
	}
	info["shards"] = n
	info["merged_from"] = dirs
	info["percentiles_from"] = map[bool]string{true: "records", false: "digests"}[res.Exact]
	run.InputConfig, run.RunInfo, run.Shards = cfg, info, sections
	run.Fingerprint = wholeFingerprint(first.Fingerprint, cfg)
	res.Run = run
	return res
}

// wholePlan is a shard's input_config as the whole plan's: a copy with
// its shard settings (at any depth) cleared.
func wholePlan(cfg map[string]any) map[string]any {
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		switch sub, ok := v.(map[string]any); {
		case ok:
			out[k] = wholePlan(sub)
		case k == "shard":
			out[k] = ""
		case k == "shards":
			out[k] = 0
		default:
			out[k] = v
		}
	}
	return out
}

// section is a shard's own summary, as it wrote it, under its index; the
// configuration every shard shares is left to the merged input_config.
func section(s *Shard) map[string]any {
	out := map[string]any{"shard": s.Index, "dir": s.Dir}
	for k, v := range s.Run.Summary.Raw {
		if k != "input_config" {
			out[k] = v
		}
	}
	return out
}

// exactPercentiles replaces the digests' percentiles with exact ones from
// the shards' records (numpy's linear interpolation, as AIPerf computes
// them), wherever the records hold every value the state counted; counts,
// means and deviations are exact already.
func exactPercentiles(sum *metrics.Summary, shards []*Shard) {
	values := func(phase string, stage int, tag string) []float64 {
		var out []float64
		for _, s := range shards {
			for _, r := range s.Run.Records {
				if r.Failed() || (phase == "warmup") != strings.HasPrefix(r.Phase, "warmup") || (stage >= 0 && r.Stage != stage) {
					continue
				}
				if v, ok := r.Metrics[tag]; ok {
					out = append(out, v)
				}
			}
		}
		return out
	}
	fill := func(d *metrics.Distribution, xs []float64) {
		if d.Count == 0 || int64(len(xs)) != d.Count {
			return
		}
		e := artifact.StatOf(xs)
		d.P1, d.P5, d.P10, d.P25, d.P50, d.P75, d.P90, d.P95, d.P99 = e.P1, e.P5, e.P10, e.P25, e.P50, e.P75, e.P90, e.P95, e.P99
	}
	phases := []struct {
		name string
		s    *metrics.Summary
	}{{"profile", sum}, {"warmup", sum.Warmup}}
	for _, p := range phases {
		if p.s == nil {
			continue
		}
		for tag, d := range p.s.Metrics {
			fill(&d, values(p.name, -1, string(tag)))
			p.s.Metrics[tag] = d
		}
	}
	for i := range sum.Stages {
		st := &sum.Stages[i]
		fill(&st.TTFT, values("profile", st.Index, string(metrics.TTFT)))
		fill(&st.ITL, values("profile", st.Index, string(metrics.ITL)))
		fill(&st.Latency, values("profile", st.Index, string(metrics.RequestLatency)))
	}
}

// WriteRecords writes the shards' per-request JSONL, one shard after
// another, each line as the shard wrote it (times are wall-clock, so the
// lines of all shards share one clock).
func WriteRecords(w io.Writer, shards []*Shard) error {
	for _, s := range shards {
		if !s.HasRecords {
			continue
		}
		f, err := artifact.OpenExport(filepath.Join(s.Dir, artifact.RecordsFile))
		if err != nil {
			return err
		}
		err = copyLines(w, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(s.Dir, artifact.RecordsFile), err)
		}
	}
	return nil
}

// copyLines copies r to w, ending the last line with a newline if the
// writer (a shard killed mid-line) left it open.
func copyLines(w io.Writer, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var last byte = '\n'
	buf := make([]byte, 1<<16)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			last = buf[n-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if last != '\n' {
		_, err := io.WriteString(w, "\n")
		return err
	}
	return nil
}

// InputsFile is the request bodies' file name (AIPerf's).
const InputsFile = "inputs.json"

// WriteInputs writes one inputs.json holding every shard's sessions, in
// shard order.
func WriteInputs(w io.Writer, shards []*Shard) error {
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString("{\"data\":[\n"); err != nil {
		return err
	}
	n := 0
	for _, s := range shards {
		path := filepath.Join(s.Dir, InputsFile)
		f, err := artifact.OpenExport(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		err = fingerprint.EachSession(f, func(raw json.RawMessage) error {
			if n > 0 {
				bw.WriteString(",\n")
			}
			n++
			_, err := bw.Write(raw)
			return err
		})
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// wholeFingerprint is the merged run's fingerprint: shard 0's (the
// shards' datasets, tokenizer and version were checked alike) with the
// configuration hash of the whole plan. nil when the shards had none.
func wholeFingerprint(shard0 map[string]any, cfg map[string]any) *fingerprint.Fingerprint {
	if shard0 == nil {
		return nil
	}
	var f fingerprint.Fingerprint
	b, _ := json.Marshal(shard0)
	if json.Unmarshal(b, &f) != nil {
		return nil
	}
	f.Config = fingerprint.Config(cfg)
	f.Seal()
	return &f
}
