package profile

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/telemetry"
)

// TestExecuteCleansUpOnEarlyError: a run that fails after its exports were
// opened (here: the engine refuses an empty dataset) ends the inputs.json
// writer and every other goroutine it started. Not parallel: parallel tests
// wait until it is done, so the goroutines it counts are its own.
func TestExecuteCleansUpOnEarlyError(t *testing.T) {
	s := specFor(t, apptest.RunConfig("http://127.0.0.1:1", t.TempDir()))
	empty := &datasets.Dataset{Name: "empty"}
	pl, err := buildPlan(s, &datasets.Dataset{Name: "x", Conversations: []datasets.Conversation{{ID: "a", Turns: []datasets.Turn{{Text: "x"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	p := &prepared{s: s, ds: empty, plan: pl}
	if _, err := p.execute(context.Background(), io.Discard); err == nil {
		t.Fatal("execute accepted an empty dataset")
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "(*Inputs).write") && !strings.Contains(stacks, "metrics.(*shard)") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left behind after an early error:\n%s", stacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLiveTelemetryFrame: the dashboard's frame carries the latest readings
// of each kind; a round without a kind keeps its last ones.
func TestLiveTelemetryFrame(t *testing.T) {
	t.Parallel()
	var l liveTelemetry
	l.record([]telemetry.GPUSample{{Index: 0, PowerW: 300}}, []telemetry.ServerSample{{URL: "u", Running: 3}})
	l.record([]telemetry.GPUSample{{Index: 0, PowerW: 310}}, nil)
	f := l.frame(metrics.Snapshot{Finished: 7})
	if f.Finished != 7 || len(f.GPUs) != 1 || f.GPUs[0].PowerW != 310 || len(f.Server) != 1 || f.Server[0].Running != 3 {
		t.Errorf("frame %+v", f)
	}
}
