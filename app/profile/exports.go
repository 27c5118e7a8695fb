package profile

import (
	"fmt"
	"github.com/surgebench/surge/app/cmdline"
	"math"
	"strconv"
	"strings"
	"time"
)

// The levels of --export-level, AIPerf's.
const (
	levelSummary = "summary" // the summary files only
	levelRecords = "records" // and the per-request JSONL
	levelRaw     = "raw"     // and every request and response as sent and read
)

// exportFiles are the file names of a run's exports: AIPerf's defaults, or
// AIPerf's names under --profile-export-prefix.
type exportFiles struct {
	JSON, CSV, JSONL, Raw         string
	TimeslicesJSON, TimeslicesCSV string
}

// prefixSuffixes are the endings AIPerf drops from --profile-export-prefix
// (longest first), so "foo.json" and "foo_timeslices.csv" give the base foo.
var prefixSuffixes = []string{"_server_metrics.parquet", "_server_metrics.jsonl", "_server_metrics.json",
	"_server_metrics.csv", "_gpu_telemetry.jsonl", "_timeslices.csv", "_timeslices.json", "_raw.jsonl",
	".parquet", ".csv", ".json", ".jsonl"}

// ExportNames returns the export file names for prefix ("": AIPerf's
// default names).
func ExportNames(prefix string) exportFiles {
	base := prefix
	for _, s := range prefixSuffixes {
		if strings.HasSuffix(base, s) {
			base = strings.TrimSuffix(base, s)
			break
		}
	}
	if base == "" {
		return exportFiles{JSON: FileJSON, CSV: FileCSV, JSONL: FileJSONL, Raw: fileRaw,
			TimeslicesJSON: "profile_export_aiperf_timeslices.json", TimeslicesCSV: "profile_export_aiperf_timeslices.csv"}
	}
	return exportFiles{JSON: base + ".json", CSV: base + ".csv", JSONL: base + ".jsonl", Raw: base + "_raw.jsonl",
		TimeslicesJSON: base + "_timeslices.json", TimeslicesCSV: base + "_timeslices.csv"}
}

// exportSettings are the output flags, parsed.
type exportSettings struct {
	level string
	// slice is --slice-duration (0: no timeslices).
	slice time.Duration
	files exportFiles
}

// exports parses --export-level, --slice-duration and
// --profile-export-prefix.
func (c *config) exports() (exportSettings, error) {
	e := exportSettings{level: strings.ToLower(strings.TrimSpace(c.ExportLevel)), files: ExportNames(c.ExportPrefix)}
	switch e.level {
	case "":
		e.level = levelRecords
	case levelSummary, levelRecords, levelRaw:
	default:
		return e, cmdline.Usagef("--export-level %q: want summary, records or raw", c.ExportLevel)
	}
	if strings.ContainsAny(c.ExportPrefix, `/\`) {
		return e, cmdline.Usagef("--profile-export-prefix %q: a file name, not a path (the folder is --output-artifact-dir)", c.ExportPrefix)
	}
	if s := strings.TrimSpace(c.SliceDuration); s != "" {
		d, err := parseSliceDuration(s)
		if err != nil {
			return e, cmdline.Usagef("--slice-duration: %w", err)
		}
		e.slice = d
	}
	return e, nil
}

// parseSliceDuration reads seconds ("30", "0.5") or a duration with its
// unit ("30s", "5m", "2h", "1h30m"), as AIPerf's --slice-duration does.
func parseSliceDuration(s string) (time.Duration, error) {
	var d time.Duration
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(secs) || math.IsInf(secs, 0) || secs > math.MaxInt64/float64(time.Second) {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		d = time.Duration(secs * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%q is not seconds or a duration such as 30s, 5m, 2h", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: want a duration > 0", s)
	}
	return d, nil
}
