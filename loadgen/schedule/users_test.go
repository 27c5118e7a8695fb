package schedule

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestUsersPacing(t *testing.T) {
	t.Parallel()
	u, err := Users(10, 4, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.Gap(), 400*time.Millisecond; got != want {
		t.Errorf("Gap = %v, want %v", got, want)
	}
	for user, want := range ms(0, 100, 200, 300) {
		if got := u.Start(user); got != want {
			t.Errorf("Start(%d) = %v, want %v", user, got, want)
		}
	}
	if got, want := u.TurnAt(2, 3), 1400*time.Millisecond; got != want {
		t.Errorf("TurnAt(2, 3) = %v, want %v", got, want)
	}
	// The aggregate is q = 10 requests/s, slot k belonging to user k mod n.
	s := u.Schedule()
	for k := range 40 {
		at, _ := s.Next()
		user, turn := u.Slot(k)
		if want := u.TurnAt(user, turn); at != want {
			t.Fatalf("slot %d at %v, but user %d turn %d is at %v", k, at, user, turn, want)
		}
	}
	// A slow turn pushes the next one back; a fast one waits for its slot.
	if got, want := u.NextTurnAt(1, 1, 50*time.Millisecond), 500*time.Millisecond; got != want {
		t.Errorf("NextTurnAt fast = %v, want %v", got, want)
	}
	if got, want := u.NextTurnAt(1, 1, 900*time.Millisecond), 900*time.Millisecond; got != want {
		t.Errorf("NextTurnAt slow = %v, want %v", got, want)
	}
}

func TestUsersThinkTime(t *testing.T) {
	t.Parallel()
	const mean, std = 2 * time.Second, 500 * time.Millisecond
	u, err := Users(5, 8, 42, mean, std)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sum2 float64
	n := 0
	for user := range 100 {
		for turn := range 200 {
			d := u.Think(user, turn)
			if d < 0 {
				t.Fatalf("negative think time %v", d)
			}
			if d != u.Think(user, turn) {
				t.Fatal("Think is not deterministic")
			}
			x := d.Seconds()
			sum += x
			sum2 += x * x
			n++
		}
	}
	m := sum / float64(n)
	sd := math.Sqrt(sum2/float64(n) - m*m)
	if math.Abs(m-mean.Seconds()) > 0.02*mean.Seconds() || math.Abs(sd-std.Seconds()) > 0.05*std.Seconds() {
		t.Errorf("think mean %.4fs sd %.4fs, want %v and %v", m, sd, mean, std)
	}
	other, _ := Users(5, 8, 43, mean, std)
	if other.Think(0, 0) == u.Think(0, 0) && other.Think(1, 1) == u.Think(1, 1) {
		t.Error("different seeds gave the same think times")
	}
	// A stddev far above the mean clips at 0 rather than going negative.
	wide, _ := Users(5, 8, 1, time.Millisecond, time.Second)
	zeros := 0
	for turn := range 1000 {
		if wide.Think(0, turn) == 0 {
			zeros++
		}
	}
	if zeros < 400 {
		t.Errorf("%d of 1000 clipped think times, want about half", zeros)
	}
	fixed, _ := Users(5, 8, 1, time.Second, 0)
	if got := fixed.Think(3, 9); got != time.Second {
		t.Errorf("stddev 0: Think = %v, want 1s", got)
	}
}

func TestUsersErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q         float64
		n         int
		mean, std time.Duration
		want      string
	}{
		{0, 4, 0, 0, "rate must be > 0, got 0"},
		{-1, 4, 0, 0, "rate must be > 0, got -1"},
		{10, 0, 0, 0, "users must be ≥ 1, got 0"},
		{10, 2, -time.Millisecond, 0, "think mean must be ≥ 0, got -1ms"},
		{10, 2, 0, -time.Second, "think stddev must be ≥ 0, got -1000ms"},
	}
	for _, tt := range tests {
		_, err := Users(tt.q, tt.n, 1, tt.mean, tt.std)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Users(%v, %d, %v, %v) error = %v, want %q", tt.q, tt.n, tt.mean, tt.std, err, tt.want)
		}
	}
}
