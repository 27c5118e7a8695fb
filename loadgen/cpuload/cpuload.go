// Package cpuload measures how busy the machine was over a run and how
// much of that was this process: the client's own CPU time (getrusage)
// against the machine's busy time (/proc/stat). A client read delay then
// says which side kept the CPU: the client itself, or other processes (an
// inference server sharing the cores).
package cpuload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/metrics"
)

// Meter measures the CPU use from its Start to each Load.
type Meter struct {
	start reading
	// read takes a reading (tests replace it).
	read func() (reading, error)
}

// reading is one look at the clocks.
type reading struct {
	at time.Time
	// self is this process's user + system CPU time.
	self time.Duration
	// busy and total are the machine's CPU time in /proc/stat's ticks,
	// all CPUs together; cores counts its CPUs.
	busy, total uint64
	cores       int
}

// Start takes the first reading. It fails where /proc/stat or getrusage
// is not available (not Linux).
func Start() (*Meter, error) {
	m := &Meter{read: readNow}
	r, err := m.read()
	if err != nil {
		return nil, err
	}
	m.start = r
	return m, nil
}

// Load is the CPU use since Start, in shares of the machine's capacity
// (its CPUs × the wall time). The client's share is its own CPU time; the
// others' is the machine's busy share less the client's. In a container
// /proc/stat is the host's: the others then include other containers.
func (m *Meter) Load() (metrics.MachineLoad, error) {
	end, err := m.read()
	if err != nil {
		return metrics.MachineLoad{}, err
	}
	return between(m.start, end)
}

// between is the load between two readings.
func between(a, b reading) (metrics.MachineLoad, error) {
	wall := b.at.Sub(a.at)
	if wall <= 0 || b.total <= a.total || b.cores <= 0 || b.busy < a.busy {
		return metrics.MachineLoad{}, errors.New("cpuload: no time passed between the readings")
	}
	busy := float64(b.busy-a.busy) / float64(b.total-a.total)
	client := min(1, (b.self-a.self).Seconds()/(wall.Seconds()*float64(b.cores)))
	return metrics.MachineLoad{Client: client, Others: max(0, busy-client), Cores: b.cores}, nil
}

// readNow takes a reading of this machine.
func readNow() (reading, error) {
	r := reading{at: time.Now()}
	b, err := bounded.ReadFile(context.Background(), "/proc/stat", 4<<20)
	if err != nil {
		return r, fmt.Errorf("cpuload: %w", err)
	}
	if r.busy, r.total, r.cores, err = parseStat(b); err != nil {
		return r, err
	}
	r.self, err = selfCPU()
	return r, err
}

// maxStat bounds the /proc/stat text read (a machine of thousands of CPUs
// writes about 100 bytes per CPU).
const maxStat = 4 << 20

// parseStat reads /proc/stat: the aggregate "cpu" line's ticks (busy: all
// but idle and iowait; total: all of them, guest time aside, which user
// time already counts) and the number of "cpuN" lines.
func parseStat(b []byte) (busy, total uint64, cores int, err error) {
	if len(b) > maxStat {
		return 0, 0, 0, fmt.Errorf("cpuload: /proc/stat is over %d bytes", maxStat)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxStat)
	seen := false
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		if fields[0] != "cpu" {
			if _, err := strconv.Atoi(fields[0][3:]); err == nil {
				cores++
			}
			continue
		}
		if seen {
			return 0, 0, 0, fmt.Errorf("cpuload: /proc/stat:%d: a second cpu line", line)
		}
		seen = true
		// user nice system idle iowait irq softirq steal [guest guest_nice]
		if len(fields) < 5 {
			return 0, 0, 0, fmt.Errorf("cpuload: /proc/stat:%d: %d cpu fields, want at least 4", line, len(fields)-1)
		}
		for i, f := range fields[1:min(len(fields), 9)] {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return 0, 0, 0, fmt.Errorf("cpuload: /proc/stat:%d: field %d: %w", line, i+1, err)
			}
			if total+v < total {
				return 0, 0, 0, fmt.Errorf("cpuload: /proc/stat:%d: ticks overflow", line)
			}
			total += v
			if i != 3 && i != 4 { // idle, iowait
				busy += v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, 0, fmt.Errorf("cpuload: /proc/stat: %w", err)
	}
	if !seen {
		return 0, 0, 0, errors.New("cpuload: /proc/stat has no cpu line")
	}
	return busy, total, max(cores, 1), nil
}
