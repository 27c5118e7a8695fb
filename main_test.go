package main

import (
	"github.com/surgebench/surge/app/cmdline"
	"testing"
)

func TestExitCodesForBadUsage(t *testing.T) {
	cases := [][]string{
		{"profile", "--endpoint-type", "embeddingz"},
		{"profile", "--request-count", "abc"},
		{"profile", "--nosuchflag"},
		{"profile", "--concurrency", "1,x"},
		{"profile", "--goodput", "ttft:1"},
		{"profile", "--ui", "fancy"},
		{"profile", "--ui", "none", "stray", "--concurrency", "4"}, // flags after a word would go unread
		{"mock-server", "--error-rate", "2"},
		// Refused AIPerf flag: the run does not start, whatever else was given.
		{"profile", "--audio-length-mean", "2", "--request-count", "1", "--ui", "none"},
		// A stray argument is exit 2, not a run of the rest.
		{"profile", "--request-count", "1", "oops", "--ui", "none"},
	}
	for _, args := range cases {
		if got := run(append([]string{"surge"}, args...)); got != cmdline.ExitUsage {
			t.Errorf("surge %v exited %d, want %d", args, got, cmdline.ExitUsage)
		}
	}
}

func TestBadFlagValueIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"profile", "--benchmark-duration", "soon"}, {"profile", "--isl"}, {"mock-server", "--ttft", "x"}} {
		if got := run(append([]string{"surge"}, args...)); got != cmdline.ExitUsage {
			t.Errorf("surge %v exited %d, want %d", args, got, cmdline.ExitUsage)
		}
	}
}
