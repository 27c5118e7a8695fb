package calibrate

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeProbe's read delay grows with the token rate: 1 ms at 3,200 tokens/s.
func fakeProbe(_ context.Context, streams int, itl time.Duration) (float64, error) {
	return float64(streams) / itl.Seconds() / 3200, nil
}

func TestSearchKeepsTheFastestPassingLoad(t *testing.T) {
	var logged int
	r, err := Search(context.Background(), fakeProbe, Options{
		ITLs: []time.Duration{10 * time.Millisecond, 2 * time.Millisecond}, MinStreams: 4, MaxStreams: 64,
		Log: func(Step) { logged++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	// ITL 10 ms: 4, 8, 16 pass (400..1,600 tok/s), 32 (3,200) fails.
	// ITL 2 ms: 4 passes (2,000 tok/s), 8 (4,000) fails.
	if r.Streams != 4 || r.ITLms != 2 || r.TokensPerSec != 2000 {
		t.Errorf("best %d streams at %v ms (%v tok/s), want 4 at 2 ms (2000)", r.Streams, r.ITLms, r.TokensPerSec)
	}
	if len(r.Steps) != 6 || logged != 6 {
		t.Errorf("%d steps, %d logged; want 6", len(r.Steps), logged)
	}
}

func TestSearchReportsProbeErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := Search(context.Background(), func(context.Context, int, time.Duration) (float64, error) { return 0, boom }, Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

func TestSaveLoad(t *testing.T) {
	t.Setenv(EnvFile, filepath.Join(t.TempDir(), "sub", "cal.json"))
	if r, err := Load(); r != nil || err != nil {
		t.Fatalf("Load before Save = %v, %v; want nil, nil", r, err)
	}
	want := &Result{Streams: 64, ITLms: 5, TokensPerSec: 12800, LimitMs: LimitMs, CPUs: 2,
		MeasuredAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), Steps: []Step{{Streams: 64, ITLms: 5, OK: true}}}
	if _, err := Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}
