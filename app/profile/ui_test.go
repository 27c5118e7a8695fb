package profile

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
)

// TestProgressOffATerminal: with no --ui and stdout no terminal (a pipe,
// CI), a run prints its progress on the log (stderr) at the interval, the
// requests done of those planned, the errors, the rate and the time left;
// --ui none prints none.
func TestProgressOffATerminal(t *testing.T) {
	t.Parallel()
	url := startMockOf(t, mockserver.Config{TTFT: 100 * time.Millisecond, ITL: 20 * time.Millisecond})
	for _, ui := range []string{"", "none"} {
		c := apptest.RunConfig(url, t.TempDir())
		c.UI, c.StdoutTTY, c.Concurrency, c.RequestCount = ui, false, "2", 10
		c.ProgressEvery = 150 * time.Millisecond
		var log strings.Builder
		if _, err := runConfig(context.Background(), c, io.Discard, &log); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(log.String(), "\n") {
			if strings.HasPrefix(l, "[") {
				lines = append(lines, l)
			}
		}
		if ui == "none" {
			if len(lines) > 0 {
				t.Errorf("--ui none printed progress:\n%s", log.String())
			}
			continue
		}
		// The run takes about 1.3 s: lines every 150 ms, at least a few.
		if len(lines) < 3 {
			t.Fatalf("no --ui off a terminal: %d progress lines, want several:\n%s", len(lines), log.String())
		}
		last := lines[len(lines)-1]
		for _, want := range []string{"/10 requests (", " errors, ", " req/s"} {
			if !strings.Contains(last, want) {
				t.Errorf("progress line %q lacks %q", last, want)
			}
		}
		if !strings.Contains(log.String(), ", ETA ") {
			t.Errorf("no line gives the time left:\n%s", log.String())
		}
	}
}
