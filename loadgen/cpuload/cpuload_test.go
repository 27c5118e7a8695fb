package cpuload

import (
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// stat is a /proc/stat of two CPUs whose aggregate line has these ticks.
func stat(user, system, idle, iowait uint64) string {
	return "cpu  " + u(user) + " 0 " + u(system) + " " + u(idle) + " " + u(iowait) + " 0 0 0 0 0\n" +
		"cpu0 1 0 1 1 0 0 0 0 0 0\ncpu1 1 0 1 1 0 0 0 0 0 0\nintr 1 2 3\nctxt 99\nbtime 1\n"
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

func TestParseStat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name               string
		in                 string
		busy, total, cores uint64
		err                string
	}{
		{"two CPUs", stat(300, 100, 500, 100), 400, 1000, 2, ""},
		{"old kernel: 4 fields", "cpu 10 0 10 80\ncpu0 10 0 10 80\n", 20, 100, 1, ""},
		{"guest time not counted twice", "cpu 10 0 10 70 10 0 0 0 5 5\ncpu0 0 0 0 0 0 0 0 0 0 0\n", 20, 100, 1, ""},
		{"no cpu line", "intr 1\n", 0, 0, 0, "no cpu line"},
		{"short cpu line", "cpu 1 2 3\n", 0, 0, 0, "3 cpu fields"},
		{"not a number", "cpu 1 x 3 4\n", 0, 0, 0, "/proc/stat:1: field 2"},
		{"two aggregate lines", "cpu 1 2 3 4\ncpu 1 2 3 4\n", 0, 0, 0, "/proc/stat:2: a second cpu line"},
		{"overflow", "cpu 18446744073709551615 1 0 0\n", 0, 0, 0, "overflow"},
	}
	for _, tc := range cases {
		busy, total, cores, err := parseStat([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || busy != tc.busy || total != tc.total || uint64(cores) != tc.cores {
			t.Errorf("%s: %d %d %d %v, want %d %d %d", tc.name, busy, total, cores, err, tc.busy, tc.total, tc.cores)
		}
	}
}

// TestLoadSaysWhoWasBusy feeds readings of a 2-CPU machine over 10 s
// (2,000 ticks of capacity): the machine's busy share, the client's own
// CPU, and the others' as the difference.
func TestLoadSaysWhoWasBusy(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name       string
		busyTicks  uint64        // of 2,000
		self       time.Duration // client CPU over the 10 s
		want       metrics.MachineLoad
		saturation string
	}{
		// The run: the server used the cores, surge 3% of one.
		{"server busy", 1800, 600 * time.Millisecond, metrics.MachineLoad{Client: 0.03, Others: 0.87, Cores: 2}, "this machine was busy (other processes used 87% of its CPU"},
		{"client busy", 1800, 16 * time.Second, metrics.MachineLoad{Client: 0.8, Others: 0.1, Cores: 2}, "the client was saturated (it used 80%"},
		{"idle", 200, time.Second, metrics.MachineLoad{Client: 0.05, Others: 0.05, Cores: 2}, "mostly idle"},
	}
	for _, tc := range cases {
		readings := []reading{
			{at: t0, self: time.Second, busy: 5000, total: 10000, cores: 2},
			{at: t0.Add(10 * time.Second), self: time.Second + tc.self, busy: 5000 + tc.busyTicks, total: 12000, cores: 2},
		}
		m := &Meter{start: readings[0], read: func() (reading, error) { return readings[1], nil }}
		got, err := m.Load()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Client-tc.want.Client) > 1e-9 || math.Abs(got.Others-tc.want.Others) > 1e-9 || got.Cores != 2 {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if b := got.Busy(); !strings.Contains(b, tc.saturation) {
			t.Errorf("%s: %q, want %q", tc.name, b, tc.saturation)
		}
	}
	if _, err := between(reading{at: t0, total: 5, cores: 1}, reading{at: t0, total: 5, cores: 1}); err == nil {
		t.Error("no time between the readings: no error")
	}
	m := &Meter{read: func() (reading, error) { return reading{}, errors.New("gone") }}
	if _, err := m.Load(); err == nil {
		t.Error("a failed reading: no error")
	}
}

// TestThisMachine measures this process burning CPU: its own share is
// above zero and the shares stay within the machine (no timing bound).
func TestThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat")
	}
	m, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	x := 0.0
	for begin := time.Now(); time.Since(begin) < 100*time.Millisecond; {
		x += math.Sqrt(x + 1)
	}
	time.Sleep(20 * time.Millisecond) // let /proc/stat's ticks move on
	l, err := m.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !(l.Client > 0) || l.Client > 1 || l.Others < 0 || l.Client+l.Others > 1.2 || l.Cores < 1 {
		t.Errorf("load %+v after 100 ms of this process's CPU (x %v)", l, x)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte(stat(1, 2, 3, 4)))
	f.Add([]byte("cpu 1 2 3 4\n"))
	f.Add([]byte("cpu0 1\ncpu 9 9 9 9 9 9 9 9 9 9 9\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		busy, total, cores, err := parseStat(b)
		if err == nil && (busy > total || cores < 1) {
			t.Errorf("busy %d of %d ticks, %d cores", busy, total, cores)
		}
	})
}
