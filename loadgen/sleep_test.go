package loadgen

import (
	"context"
	"testing"
	"time"
)

// A sleep never ends before its time (the kernel's promise for a timerfd,
// Go's for a timer), and an ended context cuts one short.
func TestSleepers(t *testing.T) {
	t.Parallel()
	for name, mk := range map[string]func(context.Context) sleeper{
		"default": newSleeper,
		"timer":   func(ctx context.Context) sleeper { return newTimerSleeper(ctx) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			s := mk(ctx)
			defer s.close()
			for _, d := range []time.Duration{0, time.Microsecond, 300 * time.Microsecond, 3 * time.Millisecond} {
				start := time.Now()
				if !s.sleep(d) {
					t.Fatalf("sleep(%v) reported a cancellation", d)
				}
				if got := time.Since(start); got < d {
					t.Errorf("sleep(%v) returned after %v", d, got)
				}
			}
			done := make(chan bool)
			go func() { done <- s.sleep(time.Hour) }()
			time.Sleep(10 * time.Millisecond)
			cancel()
			select {
			case ok := <-done:
				if ok {
					t.Error("a cancelled sleep reported it slept")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("cancelling the context did not end the sleep")
			}
			if s.sleep(time.Millisecond) {
				t.Error("a sleeper whose context ended still sleeps")
			}
		})
	}
}

// The dispatcher sleeps once a request: a sleep allocates nothing.
func TestSleepAllocatesNothing(t *testing.T) {
	s := newSleeper(context.Background())
	defer s.close()
	if n := testing.AllocsPerRun(50, func() { s.sleep(time.Microsecond) }); n != 0 {
		t.Errorf("a sleep allocates %v times", n)
	}
}
