//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
)

// wireLine is one line of the mock's --wire-log.
type wireLine struct {
	ID      string `json:"x_request_id"`
	Arrival int64  `json:"arrival_ns"`
	Handler int64  `json:"handler_ns"`
	First   int64  `json:"first_token_ns"`
}

// clientLine is what ttfterr reads of a profile_export.jsonl line.
type clientLine struct {
	Metadata struct {
		ID    string `json:"x_request_id"`
		Phase string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value any `json:"value"`
	} `json:"metrics"`
}

// ttfterr joins a client's profile_export.jsonl with the mock's wire log
// by request id and prints, as one JSON object, the client's TTFT error
// against the wire truth (first token flushed − kernel arrival of the
// request) and against the mock's handler clock, p50/p99 in ms, and the
// mock's own queue (handler entry − kernel arrival).
//
// The client's TTFT is taken from the request's last byte written
// (time_to_first_token_from_send), as the truth is from its arrival: the
// error is the client's stamping of the first token alone. surge's
// time_to_first_token starts earlier, when the request is handed to the
// transport (AIPerf's start point): a cold connection's dial, and the wait
// for it behind the other streams' dials, are inside it. Its error against
// the truth is printed apart (issue_p50_ms, issue_p99_ms) and is that wait
// wherever connections are cold. A record without the from-send value
// (benchtool bare's, whose TTFT is from its last write) uses its
// time_to_first_token for both.
func ttfterr(clientFile, wireFile string) error {
	truth := map[string]wireLine{}
	if err := eachLine(wireFile, func(b []byte) error {
		var w wireLine
		if err := json.Unmarshal(b, &w); err != nil {
			return err
		}
		truth[w.ID] = w
		return nil
	}); err != nil {
		return err
	}
	var wireErr, issueErr, handlerErr, queue []float64
	if err := eachLine(clientFile, func(b []byte) error {
		var c clientLine
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		issued, ok := c.Metrics["time_to_first_token"].Value.(float64)
		sent, fromSend := c.Metrics["time_to_first_token_from_send"].Value.(float64)
		if !fromSend {
			sent = issued
		}
		w, found := truth[c.Metadata.ID]
		if !ok || !found || (c.Metadata.Phase != "profiling" && c.Metadata.Phase != "profile") {
			return nil
		}
		handlerErr = append(handlerErr, sent-float64(w.First-w.Handler)/1e6)
		if w.Arrival > 0 {
			wireErr = append(wireErr, sent-float64(w.First-w.Arrival)/1e6)
			issueErr = append(issueErr, issued-float64(w.First-w.Arrival)/1e6)
			queue = append(queue, float64(w.Handler-w.Arrival)/1e6)
		}
		return nil
	}); err != nil {
		return err
	}
	if len(handlerErr) == 0 {
		return fmt.Errorf("no request of %s is in %s", clientFile, wireFile)
	}
	out := map[string]any{"n": len(handlerErr), "n_wire": len(wireErr),
		"wire_p50_ms": q(wireErr, 0.5), "wire_p99_ms": q(wireErr, 0.99),
		"issue_p50_ms": q(issueErr, 0.5), "issue_p99_ms": q(issueErr, 0.99),
		"handler_p50_ms": q(handlerErr, 0.5), "handler_p99_ms": q(handlerErr, 0.99),
		"mock_queue_p50_ms": q(queue, 0.5), "mock_queue_p99_ms": q(queue, 0.99)}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return nil
}

// q is the nearest-rank quantile (NaN-free: 0 for no values).
func q(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := max(int(math.Ceil(p*float64(len(s))))-1, 0)
	return math.Round(s[i]*1e4) / 1e4
}

func eachLine(file string, f func([]byte) error) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := f(sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", file, n, err)
		}
	}
	return sc.Err()
}
