package calibrate

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/loadgen/calibrate"
	"github.com/surgebench/surge/loadgen/wire"
)

func TestCalibrateAgainstTheMock(t *testing.T) {
	if !wire.Supported {
		t.Skip("no kernel receive stamps on this system")
	}
	t.Setenv(calibrate.EnvFile, filepath.Join(t.TempDir(), "cal.json"))
	var out bytes.Buffer
	// At a 2 ms ITL a probe's 2,000 tokens take half a second (2.5 s at
	// 10 ms, three probes a step).
	r, err := Calibrate(context.Background(), CalibrateConfig{ITLs: []time.Duration{2 * time.Millisecond},
		MaxStreams: 8, Tokens: 5, Save: true}, &out)
	if err != nil {
		t.Fatal(err)
	}
	// One step (8 streams); whether it passes depends on the machine's load.
	if len(r.Steps) != 1 || r.Steps[0].Streams != 8 || r.Steps[0].ReadDelayP99ms < 0 {
		t.Fatalf("steps %+v, want one of 8 streams with a measured delay", r.Steps)
	}
	cores := calibrate.CurrentCores()
	for _, want := range []string{"kept in", "measuring with " + cores.String(), "measured with " + cores.String()} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	kept, err := calibrate.Load()
	if err != nil || kept == nil || kept.Steps[0].Streams != 8 {
		t.Fatalf("kept %+v, %v", kept, err)
	}
	if kept.Cores != cores {
		t.Errorf("kept cores %+v, want this process's %+v", kept.Cores, cores)
	}
	if _, err := Calibrate(context.Background(), CalibrateConfig{Tokens: 1}, &out); err == nil {
		t.Error("--tokens 1 accepted")
	}
}
