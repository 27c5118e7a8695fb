// Command schedreport prints one row of bench/schedule.sh's table from a
// run's profile_export_aiperf.json: achieved rate against the target and
// the scheduler lag percentiles.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/surgebench/surge/internal/bounded"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: schedreport TARGET_RATE profile_export_aiperf.json")
		os.Exit(2)
	}
	target, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schedreport: bad target rate:", err)
		os.Exit(2)
	}
	b, err := bounded.ReadFile(context.Background(), os.Args[2], 256<<20)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schedreport:", err)
		os.Exit(1)
	}
	var doc struct {
		Achieved struct{ Avg float64 }      `json:"achieved_request_rate"`
		Intended struct{ Avg float64 }      `json:"intended_request_rate"`
		Lag      struct{ P50, P99 float64 } `json:"scheduler_lag"`
		Count    struct{ Avg float64 }      `json:"request_count"`
		Errors   struct{ Avg float64 }      `json:"error_request_count"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		fmt.Fprintln(os.Stderr, "schedreport:", err)
		os.Exit(1)
	}
	// The schedule's own rate over the requests sent: a Poisson sample of a
	// few seconds misses the nominal target by chance; the client is judged
	// by whether it kept the schedule it was given.
	ratio := doc.Achieved.Avg / doc.Intended.Avg
	verdict := ""
	if target == 1000 {
		verdict = "fail"
		if ratio >= 0.99 && doc.Lag.P99 <= 2 {
			verdict = "pass (target ≥ 99%, p99 ≤ 2 ms)"
		}
	}
	fmt.Printf("%8.0f  %9.1f  %9.1f  %7.1f%%  %8.3f  %8.3f  %6.0f  %5.0f  %s\n",
		target, doc.Intended.Avg, doc.Achieved.Avg, 100*ratio, doc.Lag.P50, doc.Lag.P99, doc.Count.Avg, doc.Errors.Avg, verdict)
}
