package loadgen

import (
	"errors"
	"testing"
)

func TestControllerChanges(t *testing.T) {
	t.Parallel()
	type op func(c *Controller) (ControlState, error)
	set := func(v float64) op { return func(c *Controller) (ControlState, error) { return c.Set(v) } }
	step := func(n int) op { return func(c *Controller) (ControlState, error) { return c.Step(n) } }
	double := func(c *Controller) (ControlState, error) { return c.Double() }
	halve := func(c *Controller) (ControlState, error) { return c.Halve() }
	pause := func(c *Controller) (ControlState, error) { return c.Pause() }
	resume := func(c *Controller) (ControlState, error) { return c.Resume() }
	tests := []struct {
		name        string
		mode        string
		start, step float64
		ops         []op
		want        float64
		paused      bool
		changes     int
		wantErr     bool
	}{
		{name: "step up and down", mode: ControlConcurrency, start: 4, step: 2, ops: []op{step(1), step(1), step(-1)}, want: 6, changes: 3},
		{name: "double then halve", mode: ControlConcurrency, start: 5, step: 1, ops: []op{double, halve, halve}, want: 3, changes: 3},
		{name: "halve at the floor changes nothing", mode: ControlConcurrency, start: 1, step: 1, ops: []op{halve, step(-3)}, want: 1, changes: 0},
		{name: "rate halves continuously", mode: ControlRequestRate, start: 5, step: 0.5, ops: []op{halve, step(1)}, want: 3, changes: 2},
		{name: "pause twice is one change", mode: ControlRequestRate, start: 5, step: 1, ops: []op{pause, pause}, want: 5, paused: true, changes: 1},
		{name: "pause resume", mode: ControlConcurrency, start: 2, step: 1, ops: []op{pause, step(1), resume}, want: 3, changes: 3},
		{name: "set same value is no change", mode: ControlConcurrency, start: 8, step: 1, ops: []op{set(8)}, want: 8, changes: 0},
		{name: "set fractional concurrency", mode: ControlConcurrency, start: 8, step: 1, ops: []op{set(2.5)}, want: 8, wantErr: true},
		{name: "set zero rate", mode: ControlRequestRate, start: 8, step: 1, ops: []op{set(0)}, want: 8, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := NewController(tt.mode, tt.start, WithControlStep(tt.step))
			if err != nil {
				t.Fatal(err)
			}
			var lastErr error
			for _, o := range tt.ops {
				if _, err := o(c); err != nil {
					lastErr = err
				}
			}
			st := c.State()
			if (lastErr != nil) != tt.wantErr {
				t.Errorf("error %v, want error %v", lastErr, tt.wantErr)
			}
			if st.Value != tt.want || st.Paused != tt.paused || st.Changes != tt.changes {
				t.Errorf("state %+v, want value %v paused %v changes %d", st, tt.want, tt.paused, tt.changes)
			}
		})
	}
}

func TestControllerChangedWakes(t *testing.T) {
	t.Parallel()
	c, err := NewController(ControlConcurrency, 2)
	if err != nil {
		t.Fatal(err)
	}
	ch := c.Changed()
	if _, err := c.Set(2); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("a no-op change woke the watcher")
	default:
	}
	if _, err := c.Double(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("a change did not wake the watcher")
	}
	ch = c.Changed()
	c.Finish()
	<-ch
	if _, err := c.Step(1); !errors.Is(err, ErrControlClosed) {
		t.Errorf("change after Finish: %v, want ErrControlClosed", err)
	}
	c.Finish() // twice is fine
}

func TestNewControllerRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode  string
		value float64
		opts  []ControlOption
	}{
		{"tokens", 1, nil},
		{ControlConcurrency, 0, nil},
		{ControlConcurrency, 1.5, nil},
		{ControlRequestRate, -1, nil},
		{ControlRequestRate, 1, []ControlOption{WithControlStep(0)}},
		{ControlRequestRate, 1, []ControlOption{WithControlBounds(2, 1)}},
	} {
		if _, err := NewController(tc.mode, tc.value, tc.opts...); err == nil {
			t.Errorf("NewController(%q, %v) accepted", tc.mode, tc.value)
		}
	}
}
