package schedule_test

import (
	"fmt"
	"time"

	"github.com/surgebench/surge/loadgen/schedule"
)

// Arrival builds the schedule for --arrival-pattern and --request-rate;
// Take cuts it at --request-count.
func ExampleArrival() {
	s, err := schedule.Arrival("constant", 4, 0, 42)
	if err != nil {
		fmt.Println(err)
		return
	}
	s = schedule.Take(s, 3)
	for at, ok := s.Next(); ok; at, ok = s.Next() {
		fmt.Println(at)
	}
	_, err = schedule.Arrival("gamma", 0, 1, 42)
	fmt.Println(err)
	// Output:
	// 0s
	// 250ms
	// 500ms
	// rate must be > 0, got 0
}

// Fixed replays trace timestamps; Row says which trace row each slot sends.
func ExampleFixed() {
	trace := []time.Duration{5 * time.Second, 5200 * time.Millisecond, 5100 * time.Millisecond}
	r, err := schedule.Fixed(trace, schedule.AutoOffset())
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; ; i++ {
		at, ok := r.Next()
		if !ok {
			break
		}
		fmt.Println(at, "row", r.Row(i))
	}
	// Output:
	// 0s row 0
	// 100ms row 2
	// 200ms row 1
}

// ConcurrencyRamp raises the cap from 1 to the target over the ramp.
func ExampleConcurrencyRamp() {
	l := schedule.ConcurrencyRamp(8, 7*time.Second)
	for _, e := range []time.Duration{0, 3 * time.Second, 7 * time.Second} {
		fmt.Println(e, l(e))
	}
	// Output:
	// 0s 1
	// 3s 4
	// 7s 8
}
