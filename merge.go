package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/metrics/fingerprint"
	"github.com/surgebench/surge/metrics/merge"
)

// mergeCommand wires `surge merge DIR... -o OUT` to metrics/merge.
func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "combine the exports of the N shards of one plan (surge profile --shard i/N) into one export",
		ArgsUsage: "DIR... -o OUT",
		Description: "Counts and sums add exactly; percentiles come from the shards' per-request records (exact), or from\n" +
			"their merged t-digests when a shard has no profile_export.jsonl; durations and throughputs cover the\n" +
			"union of the shards' windows. Shards of different plans (seed, flags, version) are refused.",
		OnUsageError: onUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "folder to write the merged export to (required)"},
		},
		Action: func(cc *cli.Context) error {
			dirs, out, err := mergeArgs(cc.Args().Slice(), cc.String("output"))
			if err != nil {
				return err
			}
			return Merge(dirs, out, os.Stdout)
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
			return nil, "", usagef("surge merge: unknown flag %s (merge takes shard folders and -o OUT)", a)
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, "", usagef("surge merge: %s needs a folder", a)
			}
			i++
			value = args[i]
		}
		out = value
	}
	switch {
	case len(dirs) == 0:
		return nil, "", usagef("surge merge: name the shards' export folders (surge merge DIR... -o OUT)")
	case out == "":
		return nil, "", usagef("surge merge: -o/--output names the folder to write the merged export to")
	}
	for _, d := range dirs {
		if filepath.Clean(d) == filepath.Clean(out) {
			return nil, "", usagef("surge merge: -o %s is one of the shard folders: write the merged export elsewhere", out)
		}
	}
	return dirs, out, nil
}

// Merge combines the shard exports in dirs into one export in outDir, in
// the same files and shapes as a single run's, and prints its summary to
// w. Folders that are not the N shards of one plan are a usage error naming
// the difference.
func Merge(dirs []string, outDir string, w io.Writer) error {
	shards, err := merge.Load(dirs)
	if err != nil {
		return &UsageError{Err: err}
	}
	if shards, err = merge.Check(shards); err != nil {
		var pe *merge.PlanError
		if errors.As(err, &pe) && pe.Setting != "" {
			if f := flagAt(pe.Setting); f != "" {
				pe.Reason = strings.Replace(pe.Reason, "input_config "+pe.Setting, f, 1)
			}
		}
		return &UsageError{Err: err}
	}
	res := merge.Merge(shards)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	cfg := fingerprint.Flatten(res.Run.InputConfig.(map[string]any))
	model := cfg["endpoint.model_names"]
	if model == nil {
		model = cfg["model"] // an older export
	}
	title := fmt.Sprintf("surge merge: %d shards of %v @ %v (%v)", len(shards), model, res.Run.RunInfo.(map[string]any)["target_url"], res.Run.RunInfo.(map[string]any)["mode"])
	return errors.Join(
		writeFile(filepath.Join(outDir, FileJSONL), func(w io.Writer) error { return merge.WriteRecords(w, shards) }),
		writeFile(filepath.Join(outDir, FileInputs), func(w io.Writer) error { return merge.WriteInputs(w, shards) }),
		report(w, outDir, exportNames(""), title, res.Summary, res.State, res.Run, nil),
	)
}
