package results

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/profile"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/metrics/fingerprint"
	"github.com/surgebench/surge/metrics/merge"
)

// MergeCommand wires `surge merge DIR... -o OUT` to metrics/merge.
func MergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge the exports of one plan's shards (--shard i/N) into one",
		ArgsUsage: "DIR... -o OUT",
		Description: "Counts and sums add exactly; percentiles come from the shards' per-request records (exact), or from\n" +
			"their merged t-digests when a shard has no profile_export.jsonl; durations and throughputs cover the\n" +
			"union of the shards' windows; a sweep's run folders merge value by value. Shards of different plans\n" +
			"(seed, flags, version) are refused, and so are shards that did not run at once (their windows, start to\n" +
			"end, lie apart: run them with one --start-at), unless --force.",
		OnUsageError: cmdline.OnUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "folder to write the merged export to (required)"},
			&cli.BoolFlag{Name: "force", Usage: "merge shards that did not run at once (a warning says how low the throughputs then read)"},
		},
		Action: func(cc *cli.Context) error {
			dirs, out, err := mergeArgs(cc.Args().Slice(), cc.String("output"))
			if err != nil {
				return err
			}
			if err := Merge(dirs, out, os.Stdout, cc.Bool("force")); err != nil {
				return err
			}
			rememberMerged(cc.Context, out, os.Stderr)
			return nil
		},
	}
}

// mergeArgs takes the shard folders and -o/--output from the arguments:
// urfave/cli stops reading flags at the first folder, and `surge merge
// DIR... -o OUT` puts the flag last.
func mergeArgs(args []string, out string) (dirs []string, outDir string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "-" {
			dirs = append(dirs, a)
			continue
		}
		if name != "o" && name != "output" {
			return nil, "", cmdline.Usagef("surge merge: unknown flag %s (merge takes shard folders and -o OUT)", a)
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, "", cmdline.Usagef("surge merge: %s needs a folder", a)
			}
			i++
			value = args[i]
		}
		out = value
	}
	switch {
	case len(dirs) == 0:
		return nil, "", cmdline.Usagef("surge merge: name the shards' export folders (surge merge DIR... -o OUT)")
	case out == "":
		return nil, "", cmdline.Usagef("surge merge: -o/--output names the folder to write the merged export to")
	}
	for _, d := range dirs {
		if filepath.Clean(d) == filepath.Clean(out) {
			return nil, "", cmdline.Usagef("surge merge: -o %s is one of the shard folders: write the merged export elsewhere", out)
		}
	}
	return dirs, out, nil
}

// Merge combines the shard exports in dirs into one export in outDir, in
// the same files and shapes as a single run's, and prints its summary to
// w. Folders that are not the N shards of one plan are a usage error naming
// the difference; so are shards that did not run at once, unless force
// (merge.Windows), and a merge of shards that ran apart warns by how much.
// A sweep's run folders are merged one by one, and its sweep_aggregate
// written from them, as a single run lays them out.
func Merge(dirs []string, outDir string, w io.Writer, force bool) error {
	shards, err := loadShards(dirs)
	if err != nil {
		return err
	}
	apart, err := merge.Windows(shards, force)
	if err != nil {
		return &cmdline.UsageError{Err: err}
	}
	res := merge.Merge(shards)
	if apart != "" {
		res.Summary.Warnings = append(res.Summary.Warnings, apart)
	}
	moved, err := profile.MoveAside(outDir, "-o", spec.ExportFiles(""))
	if err != nil {
		return err
	}
	if moved != "" {
		fmt.Fprintf(w, "%s held an earlier export: moved it to %s\n", outDir, moved)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	cfg := fingerprint.Flatten(res.Run.InputConfig.(map[string]any))
	model := cfg["endpoint.model_names"]
	if model == nil {
		model = cfg["model"] // an older export
	}
	info := res.Run.RunInfo.(map[string]any)
	title := fmt.Sprintf("surge merge: %d shards of %v @ %v (%v)", len(shards), model, info["target_url"], info["mode"])
	opts := []export.ConsoleOption{export.JudgedKnee(judgedKnee(info["mode"], res.Summary))}
	subs := shards[0].RunFolders
	if len(subs) == 0 {
		return errors.Join(
			profile.WriteFile(filepath.Join(outDir, spec.FileJSONL), func(w io.Writer) error { return merge.WriteRecords(w, shards) }),
			profile.WriteFile(filepath.Join(outDir, profile.FileInputs), func(w io.Writer) error { return merge.WriteInputs(w, shards) }),
			profile.Report(w, outDir, spec.ExportFiles(""), title, res.Summary, res.State, res.Run, nil, opts...),
		)
	}
	folders, err := mergeSweep(dirs, subs, outDir, res)
	return errors.Join(err, profile.Report(w, outDir, spec.ExportFiles(""), title, res.Summary, res.State, res.Run, folders, opts...))
}

// judgedKnee reports whether a merged run's stages have a knee to judge,
// as a one-host run of the plan judges it: stages of one load parameter
// (a grid's points carry labels).
func judgedKnee(mode any, s *metrics.Summary) bool {
	if mode != profile.ModeConcurrency && mode != profile.ModeRequestRate || len(s.Stages) < 2 {
		return false
	}
	for _, st := range s.Stages {
		if st.Label != "" {
			return false
		}
	}
	return true
}

// loadShards reads and checks the shard folders dirs; what is not the N
// shards of one plan is a usage error.
func loadShards(dirs []string) ([]*merge.Shard, error) {
	shards, err := merge.Load(dirs)
	if err != nil {
		return nil, &cmdline.UsageError{Err: err}
	}
	if shards, err = merge.Check(shards); err != nil {
		var pe *merge.PlanError
		if errors.As(err, &pe) && pe.Setting != "" {
			if f := cmdline.FlagAt(pe.Setting); f != "" {
				pe.Reason = strings.Replace(pe.Reason, "input_config "+pe.Setting, f, 1)
			}
		}
		return nil, &cmdline.UsageError{Err: err}
	}
	return shards, nil
}

// mergeSweep merges each run folder subs[i] of the shards in dirs into
// outDir/subs[i] (records, inputs, summary, state) and writes the sweep's
// aggregate from them; whole is the merged top level, whose run_info names
// the swept parameter and its values. It returns the folders written.
func mergeSweep(dirs, subs []string, outDir string, whole *merge.Result) ([]string, error) {
	info := whole.Run.RunInfo.(map[string]any)
	mode, _ := info["mode"].(string)
	values, _ := info["stage_values"].([]any)
	if len(values) != len(subs) {
		return nil, fmt.Errorf("surge merge: run_info lists %d stage values for %d run folders", len(values), len(subs))
	}
	sw := export.Sweep{Parameter: mode, Knee: -1, Operating: -1}
	var errs []error
	for i, sub := range subs {
		paths := make([]string, len(dirs))
		for j, d := range dirs {
			paths[j] = filepath.Join(d, sub)
		}
		shards, err := loadShards(paths)
		if err != nil {
			return nil, err
		}
		res := merge.Merge(shards)
		dir := filepath.Join(outDir, sub)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		errs = append(errs,
			profile.WriteFile(filepath.Join(dir, spec.FileJSONL), func(w io.Writer) error { return merge.WriteRecords(w, shards) }),
			profile.WriteFile(filepath.Join(dir, profile.FileInputs), func(w io.Writer) error { return merge.WriteInputs(w, shards) }),
			profile.WriteExports(dir, spec.ExportFiles(""), res.Summary, res.State, res.Run))
		v, _ := values[i].(float64)
		sw.Values = append(sw.Values, export.SweepValue{Label: sub, Value: v, Integer: mode == profile.ModeConcurrency, Summary: res.Summary})
	}
	errs = append(errs, profile.WriteSweepAggregate(outDir, sw, whole.Summary))
	return append(append([]string{}, subs...), profile.FolderSweepAggregate), errors.Join(errs...)
}

// rememberMerged records the merged run in outDir in the history, as its
// shards were told to (--history, --no-history, --history-label, kept in
// their input_config): a shard records nothing itself, so the merged run
// is the one row. What goes wrong is printed on log; the merge stands.
func rememberMerged(ctx context.Context, outDir string, log io.Writer) {
	if ctx == nil {
		ctx = context.Background()
	}
	run, err := artifact.Load(outDir)
	if err != nil || run.Summary == nil {
		fmt.Fprintf(log, "surge: the merged run is not in the history: %v\n", err)
		return
	}
	cfg := fingerprint.Flatten(run.Summary.InputConfig)
	var h spec.History
	h.Path, _ = cfg["output.history"].(string)
	h.Off, _ = cfg["output.no_history"].(bool)
	h.Label, _ = cfg["output.history_label"].(string)
	profile.Remember(ctx, h, outDir, log, func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) })
}
