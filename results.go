package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/metrics/artifact"
	runreport "github.com/surgebench/surge/metrics/report"
)

// reportCommand wires `surge report DIR...` to metrics/report.
func reportCommand() *cli.Command {
	return &cli.Command{
		Name:         "report",
		Usage:        "write an HTML report (or PNG charts) of one or more runs' artifact folders",
		ArgsUsage:    "DIR...",
		OnUsageError: onUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "file (html) or folder (png) to write (default: report.html, or report-png/, in the first DIR)"},
			&cli.StringFlag{Name: "format", Value: runreport.FormatHTML, Usage: "html (one self-contained page) or png (one file per chart)"},
		},
		Action: func(cc *cli.Context) error {
			format := cc.String("format")
			if format != runreport.FormatHTML && format != runreport.FormatPNG {
				return &UsageError{Err: fmt.Errorf("--format: want html or png, got %q", format)}
			}
			dirs, err := positional(cc)
			if err != nil {
				return err
			}
			runs, err := artifact.LoadAll(dirs)
			if err != nil {
				return &UsageError{Err: err}
			}
			out := cc.String("output")
			if out == "" {
				out = runs[0].Dir + "/report.html"
				if format == runreport.FormatPNG {
					out = runs[0].Dir + "/report-png"
				}
			}
			paths, err := runreport.Write(out, format, runs)
			if err != nil {
				return err
			}
			for _, p := range paths {
				fmt.Fprintln(os.Stdout, p)
			}
			return nil
		},
	}
}

// writeRunReport writes report.html into a finished run's folder (surge
// profile --report), read back from its exports as surge report reads it.
func writeRunReport(out io.Writer, dir string) error {
	run, err := artifact.Load(dir)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	paths, err := runreport.Write(filepath.Join(dir, "report.html"), runreport.FormatHTML, []*artifact.Run{run})
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	fmt.Fprintf(out, "  %s\n", paths[0])
	return nil
}

// positional returns the command's folder arguments; a flag after them is a
// usage error that says so (urfave/cli stops reading flags at the first
// argument, and would otherwise take "-o" for a folder).
func positional(cc *cli.Context) ([]string, error) {
	args := cc.Args().Slice()
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' {
			return nil, &UsageError{Err: fmt.Errorf("%s: flags go before the run folders (surge %s [flags] DIR...)", a, cc.Command.Name)}
		}
	}
	if len(args) == 0 {
		return nil, &UsageError{Err: fmt.Errorf("surge %s: name at least one run folder", cc.Command.Name)}
	}
	return args, nil
}
