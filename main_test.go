package main

import "testing"

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
	}
	for _, args := range cases {
		if got := run(append([]string{"surge"}, args...)); got != exitUsage {
			t.Errorf("surge %v exited %d, want %d", args, got, exitUsage)
		}
	}
}
