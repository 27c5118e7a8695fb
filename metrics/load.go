package metrics

import "fmt"

// MachineLoad is how busy the machine was over a run, in shares of its
// whole CPU capacity (cores × wall time, 0 to 1): the client's own CPU time
// (getrusage), and every other process's (the machine's busy time from
// /proc/stat less the client's).
type MachineLoad struct {
	Client, Others float64
	// Cores is how many CPUs the shares are of.
	Cores int
}

// WithMachineLoad reads the machine's CPU use over the run when the
// collector closes, so a client read delay warning says which side was
// busy (an error: the warning does not say).
func WithMachineLoad(f func() (MachineLoad, error)) Option {
	return func(c *Collector) { c.load = f }
}

// busyMachine is the share of the CPU in use (client and others together)
// below which the machine counts as mostly idle.
const busyMachine = 0.5

// Busy says which side kept the CPU busy: "the client was saturated" only
// when the client's own CPU use was the larger share of a busy machine;
// else that other processes were (the server sharing the cores, say), or
// that neither was.
func (l MachineLoad) Busy() string {
	switch {
	case l.Client+l.Others < busyMachine:
		return fmt.Sprintf("the client was late although the machine was mostly idle (the client used %.0f%% of its CPU, other processes %.0f%%)",
			100*l.Client, 100*l.Others)
	case l.Client >= l.Others:
		return fmt.Sprintf("the client was saturated (it used %.0f%% of the machine's CPU, other processes %.0f%%)", 100*l.Client, 100*l.Others)
	}
	return fmt.Sprintf("this machine was busy (other processes used %.0f%% of its CPU, the client %.0f%%): timings include that",
		100*l.Others, 100*l.Client)
}

// readDelayWarning is the caveat for a client read delay p99 over
// ReadDelayWarnMs: what it does to the timings (kernel stamps keep most of
// it out) and, when load is known, which side was busy.
func readDelayWarning(p99 float64, kernel bool, load *MachineLoad) string {
	who := "the client was saturated"
	if load != nil {
		who = load.Busy()
	}
	if kernel {
		return fmt.Sprintf(
			"client read delay p99 %.2f ms exceeds %d ms: %s; token times came from the kernel's receive stamps, so latencies do not include that delay, except for tokens read together with later ones, which carry the later arrival (send times may include it: see http_req_blocked)",
			p99, ReadDelayWarnMs, who)
	}
	return fmt.Sprintf(
		"client read delay p99 %.2f ms exceeds %d ms: %s, and with read timestamps its latencies are inflated by up to that much (use --timestamps kernel)",
		p99, ReadDelayWarnMs, who)
}
