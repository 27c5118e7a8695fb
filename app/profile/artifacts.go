package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
)

// serviceKind is the service part of AIPerf's artifact folder names: every
// endpoint type surge drives is named as AIPerf names its plugins by
// default.
const serviceKind = "openai"

// FolderSweepAggregate is the sweep's cross-value folder (AIPerf's name).
const FolderSweepAggregate = "sweep_aggregate"

// artifactName is AIPerf's default artifact folder name:
// <model>-openai-<endpoint type>-<stimulus>, the model's "/" turned to "_"
// (and "_multi" after the first of several models), the stimulus
// "concurrency8", "concurrency_sweep_1_2_4", "concurrency4-request_rate10.0",
// "fixed_schedule" or "user_centric-users8-qps2.0".
func (p *prepared) artifactName() string {
	t := &p.s.Target
	model := t.Model()
	if len(t.Models) > 1 {
		model += "_multi"
	}
	model = strings.NewReplacer("/", "_", `\`, "_").Replace(model)
	stimulus := p.plan.stimulus()
	if s := p.s.Live.Search; s != nil && s.AutoStart {
		stimulus = "request_rate_search" // the start is the pilot's, unknown here
	}
	return fmt.Sprintf("%s-%s-%s-%s", model, serviceKind, p.s.Endpoint.Kind, stimulus)
}

// stimulus is the load part of the artifact folder name (see artifactName).
func (p *plan) stimulus() string {
	if sw := p.sweep; sw != nil {
		if sw.SweepsLoad() {
			return sw.Stimulus()
		}
		return p.loadStimulus + "-" + sw.Stimulus()
	}
	join := func(vs []float64, format func(float64) string) string {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = format(v)
		}
		return strings.Join(parts, "_")
	}
	switch p.mode {
	case ModeConcurrency:
		if len(p.values) > 1 {
			return "concurrency_sweep_" + join(p.values, spec.IntText)
		}
		return "concurrency" + join(p.values, spec.IntText)
	case ModeRequestRate:
		var parts []string
		if p.rateCap > 0 {
			parts = append(parts, "concurrency"+strconv.Itoa(p.rateCap))
		}
		if len(p.values) > 1 {
			parts = append(parts, "request_rate_sweep_"+join(p.values, spec.PyFloat))
		} else {
			parts = append(parts, "request_rate"+join(p.values, spec.PyFloat))
		}
		return strings.Join(parts, "-")
	case ModeFixedSchedule:
		return "fixed_schedule"
	case ModeUserCentric:
		return fmt.Sprintf("user_centric-users%d-qps%s", p.users, join(p.values, spec.PyFloat))
	}
	return p.dirMode()
}

// stageFolder is the run folder of one value of a sweep, as AIPerf names
// it: the parameter and its value, "concurrency_10" or "request_rate_5.0".
func (p *plan) stageFolder(i int) string {
	if p.sweep != nil {
		return p.sweep.Folder(i)
	}
	if p.mode == ModeConcurrency {
		return "concurrency_" + spec.IntText(p.values[i])
	}
	return p.mode + "_" + spec.PyFloat(p.values[i])
}

// stageFolders are the sweep's run folders, one per value; nil when the
// run is not a planned sweep (one value, or a live session whose stages
// follow a controller).
func (p *prepared) stageFolders() []string {
	if len(p.plan.values) < 2 || p.s.Live.Search != nil || p.s.Live.ControlAddr != "" {
		return nil
	}
	out := make([]string, len(p.plan.values))
	for i := range out {
		out[i] = p.plan.stageFolder(i)
	}
	return out
}

// runFolders hold a run's per-request files: profile_export.jsonl,
// inputs.json and, at --export-level raw, profile_export_raw.jsonl in the
// artifact folder, or, for a sweep, in one run folder per value (records
// and sessions go to their stage's folder; the warmup goes with the first
// stage, which it preceded).
type runFolders struct {
	dirs   []string
	files  []*os.File
	jsonl  []*export.JSONL
	raw    []*export.RawJSONL
	inputs []*export.Inputs
	// secrets are replaced in the bodies inputs.json keeps (a credential
	// given as an --extra-inputs value travels in every body).
	secrets [][]byte
	// inputFiles are the inputs.json files, named when whole (finish).
	inputFiles []*export.AtomicFile
}

// openRunFolders creates base/sub for every sub (base itself without
// subs) and the per-request files in each: the records named jsonl and
// the raw dump named raw (none when a name is ""), inputs.json (written
// with inputsOpts). fault,
// when set, gives each file's callback for its first failed write.
// inputs.json is written as inputs.json.partial and named by finish, so a
// killed run leaves no empty one.
func openRunFolders(base string, subs []string, jsonl, raw string, inputsOpts []export.InputsOption, start time.Time, fault func(path string) export.WriteFault, opts ...export.JSONLOption) (*runFolders, error) {
	f := &runFolders{}
	with := func(path string) []export.JSONLOption {
		if fault == nil {
			return opts
		}
		return append(slices.Clip(opts), export.WithWriteFault(fault(path)))
	}
	dirs := []string{base}
	if len(subs) > 0 {
		dirs = dirs[:0]
		for _, s := range subs {
			dirs = append(dirs, filepath.Join(base, s))
		}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.close()
			return nil, fmt.Errorf("--output-artifact-dir: %w", err)
		}
		var records *export.JSONL // nil: no per-request records
		if jsonl != "" {
			path := filepath.Join(d, jsonl)
			jf, err := os.Create(path)
			if err != nil {
				f.close()
				return nil, err
			}
			f.files = append(f.files, jf)
			records = export.NewJSONL(jf, start, with(path)...)
		}
		var dump *export.RawJSONL // nil: no raw dump
		if raw != "" {
			path := filepath.Join(d, raw)
			rf, err := os.Create(path)
			if err != nil {
				f.close()
				return nil, err
			}
			f.files = append(f.files, rf)
			dump = export.NewRawJSONL(rf, start, with(path)...)
		}
		path := filepath.Join(d, FileInputs)
		inf, err := export.CreateAtomic(path)
		if err != nil {
			f.close()
			return nil, err
		}
		var inOpts []export.InputsOption
		if fault != nil {
			inOpts = append(inOpts, export.InputsWriteFault(fault(path)))
		}
		f.inputFiles = append(f.inputFiles, inf)
		f.dirs = append(f.dirs, d)
		f.jsonl = append(f.jsonl, records)
		f.raw = append(f.raw, dump)
		f.inputs = append(f.inputs, export.NewInputs(inf, append(inOpts, inputsOpts...)...))
	}
	return f, nil
}

// at is the folder of stage (stages past the plan go to the last).
func (f *runFolders) at(stage int) int { return max(0, min(stage, len(f.dirs)-1)) }

// WriteRecord implements metrics.RecordSink.
func (f *runFolders) WriteRecord(r *metrics.Record, v *metrics.Values, good bool) {
	i := f.at(r.Stage)
	if j := f.jsonl[i]; j != nil {
		j.WriteRecord(r, v, good)
	}
	if d := f.raw[i]; d != nil {
		d.WriteRecord(r, v, good)
	}
}

// WriteHeld implements metrics.RecordFlusher: the JSONL files write what
// they hold now.
func (f *runFolders) WriteHeld() {
	for _, j := range f.jsonl {
		if j != nil {
			j.WriteHeld()
		}
	}
}

// Body implements loadgen.BodySink.
func (f *runFolders) Body(session int64, stage int, conversation string, turn int, body []byte) {
	for _, s := range f.secrets {
		if bytes.Contains(body, s) {
			body = bytes.ReplaceAll(body, s, []byte(cmdline.Redacted))
		}
	}
	f.inputs[f.at(stage)].Body(session, conversation, turn, body)
}

// EndSession implements loadgen.BodySink.
func (f *runFolders) EndSession(session int64, stage int) {
	f.inputs[f.at(stage)].EndSession(session)
}

// finish ends every inputs.json and reports the files' write errors.
func (f *runFolders) finish() error {
	var errs []error
	for i := range f.dirs {
		if f.jsonl[i] != nil {
			errs = append(errs, f.jsonl[i].Err())
		}
		if f.raw[i] != nil {
			errs = append(errs, f.raw[i].Err())
		}
		err := f.inputs[i].Close()
		if err == nil {
			err = f.inputFiles[i].Commit()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// close ends the inputs writers' goroutines and closes the files, on every
// path.
func (f *runFolders) close() {
	for _, in := range f.inputs {
		_ = in.Close()
	}
	for _, j := range f.jsonl {
		if j != nil {
			_ = j.Err() // lines still held (finish was not reached)
		}
	}
	for _, file := range f.files {
		file.Close()
	}
	for _, file := range f.inputFiles {
		_ = file.Close() // left as inputs.json.partial unless finish named it
	}
}

// addRunInfo adds AIPerf's run_info keys (its RunInfo model) to info:
// benchmark_id, random_seed, trial, variation_label ("base" outside a
// sweep), variation_index, variation_values and the redacted cli_command.
func (p *prepared) addRunInfo(info map[string]any, benchmarkID string) {
	info["benchmark_id"] = benchmarkID
	info["random_seed"] = p.s.Seed()
	info["trial"] = 0
	info["variation_label"] = "base"
	info["variation_index"] = 0
	info["variation_values"] = map[string]any{}
	info["cli_command"] = cliCommand(os.Args, p.s.Secrets)
}

// cliCommand is the command line as run_info shows it: each argument
// quoted where a shell would need it, secrets redacted.
func cliCommand(args, secrets []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, s := range secrets {
			if len(s) >= 4 {
				a = strings.ReplaceAll(a, s, cmdline.Redacted)
			}
		}
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>(){}*?![]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// stageValue is stage i's value as AIPerf's files carry it.
func (p *plan) stageValue(i int) export.SweepValue {
	if p.sweep != nil {
		return p.sweep.Value(i)
	}
	return export.SweepValue{Label: p.stageFolder(i), Value: p.values[i], Integer: p.mode == ModeConcurrency}
}

// reportSweep writes a sweep's per-value run folders (each value's summary
// as a run of its own: JSON, CSV and state beside the records and inputs
// already there) and sweep_aggregate/, and returns the folders written.
func (p *prepared) reportSweep(o *outcome, base export.Run, subs []string) ([]string, error) {
	sweepID := base.BenchmarkID
	sw := export.Sweep{Parameter: p.plan.mode, Knee: -1, Operating: -1}
	var errs []error
	for i, sub := range subs {
		st := o.state.Stage(i)
		s := st.Summary()
		run := base
		run.BenchmarkID = newBenchmarkID()
		info := map[string]any{}
		for k, v := range base.RunInfo.(map[string]any) {
			info[k] = v
		}
		v := p.plan.stageValue(i)
		p.addRunInfo(info, run.BenchmarkID)
		info["sweep_id"] = sweepID
		info["run_label"], info["variation_label"], info["variation_index"] = sub, sub, i
		info["variation_values"] = map[string]any{p.plan.mode: spec.ValueOf(v)}
		if sw := p.plan.sweep; sw != nil {
			info["variation_values"], info["variation_label"] = sw.Variation(i), sw.Label(i)
			run.InputConfig = sw.InputConfig(i, run.InputConfig, p.s.ValueSeed(i))
		}
		delete(info, "stage_values")
		delete(info, "stage_folders")
		info["stage"] = map[string]any{"index": i, "mode": p.plan.mode, "value": v.Value}
		run.RunInfo = info
		// Telemetry over the stage's window (the samples while its requests
		// were out); energy per token stays the whole sweep's.
		run.Telemetry, run.Extra = nil, nil
		if o.telemetryBetween != nil && s.EndNs > 0 {
			if d := o.telemetryBetween(time.Duration(s.StartNs), time.Duration(s.EndNs)); d != nil {
				run.Telemetry = d
			}
		}
		dir := filepath.Join(o.dir, sub)
		errs = append(errs, WriteExports(dir, p.s.Exports.Files, s, st, run))
		v.Summary = s
		sw.Values = append(sw.Values, v)
	}
	errs = append(errs, WriteSweepAggregate(o.dir, sw, o.summary))
	return append(append([]string{}, subs...), FolderSweepAggregate), errors.Join(errs...)
}

// WriteSweepAggregate writes dir/sweep_aggregate/ for sw, its knee and
// operating point taken from the sweep's pooled summary s.
func WriteSweepAggregate(dir string, sw export.Sweep, s *metrics.Summary) error {
	if s.Knee >= 0 && s.Operating >= 0 {
		sw.Knee, sw.Operating = s.Stages[s.Knee].Index, s.Stages[s.Operating].Index
	}
	agg := filepath.Join(dir, FolderSweepAggregate)
	if err := os.MkdirAll(agg, 0o755); err != nil {
		return err
	}
	return errors.Join(
		WriteFile(filepath.Join(agg, export.SweepJSONFile), func(w io.Writer) error { return export.SweepJSON(w, sw) }),
		WriteFile(filepath.Join(agg, export.SweepCSVFile), func(w io.Writer) error { return export.SweepCSV(w, sw) }))
}

// runMarkers are the names that make a folder an earlier run's: surge's
// and AIPerf's files, a sweep's aggregate, the report written into it.
var runMarkers = []string{FileInputs, FileInputs + ".partial", FileState, FileGPUTelemetry, FileServerMetrics,
	FolderSweepAggregate, spec.FileReport, spec.DirPlots}

// MoveAside moves an earlier run out of dir before a run writes there: to
// dir-1, or the first of dir-2, dir-3, … that is free, which it returns
// ("" when dir is new, empty or holds no run's files: nothing to keep).
// A rerun of the same command (in CI, say) then never fails, leaves the
// newest run where the command names it, keeps every earlier one, and
// leaves no stale file of the old run (a report.html) beside the new.
// flag names the folder's flag in errors.
func MoveAside(dir, flag string, files spec.Files) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	// The per-request files are no sign of their own: a run opens
	// inputs.json.partial beside them, which a killed run leaves.
	markers := append(slices.Clip(runMarkers), files.JSON, files.CSV, files.TimeslicesJSON, files.TimeslicesCSV)
	earlier := slices.ContainsFunc(entries, func(e os.DirEntry) bool {
		return slices.Contains(markers, e.Name()) ||
			e.IsDir() && fileExists(filepath.Join(dir, e.Name(), files.JSON)) // a sweep's stage folder
	})
	if !earlier {
		return "", nil
	}
	clean := filepath.Clean(dir)
	for n := 1; n < 10000; n++ {
		to := fmt.Sprintf("%s-%d", clean, n)
		if _, err := os.Lstat(to); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := os.Rename(clean, to); err != nil {
			return "", fmt.Errorf("%s %s holds an earlier run, which could not be moved aside to %s: %w (move or remove it, or give another folder)", flag, dir, to, err)
		}
		return to, nil
	}
	return "", fmt.Errorf("%s %s holds an earlier run and %s-1 … -9999 are taken: remove some", flag, dir, clean)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
