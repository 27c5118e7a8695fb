package spec

import (
	"net"
	"slices"
	"time"

	"github.com/surgebench/surge/app/cmdline"
)

// Breakdown is where the time breakdown's server parts come from besides
// the responses themselves (docs/time-breakdown.md).
type Breakdown struct {
	// OTLPReceiver is the address the embedded OTLP/HTTP trace receiver
	// listens at ("": none); OTLPWait how long a record waits for its
	// span.
	OTLPReceiver string
	OTLPWait     time.Duration
	// KoboldPerf asks koboldcpp's /api/extra/perf after each request.
	KoboldPerf bool
	// MockTimings is how the embedded mock reports its own times: "" (not
	// at all), "llamacpp", "mock", or "otlp" (spans to OTLPReceiver).
	MockTimings string
}

// mockTimings are --mock-server-timings' values.
var mockTimings = []string{"none", "llamacpp", "mock", "otlp"}

// maxOTLPWait bounds --otlp-wait: the run's end waits that long at most.
const maxOTLPWait = 10 * time.Minute

// parseBreakdown reads the breakdown's flags: an address to listen at,
// a bounded wait, koboldcpp's perf one request at a time, the embedded
// mock's account only for the embedded mock.
func parseBreakdown(s *Spec, c *cmdline.Config) error {
	b := Breakdown{OTLPReceiver: c.OTLPReceiver, OTLPWait: c.OTLPWait, KoboldPerf: c.KoboldPerf, MockTimings: c.MockTimings}
	if b.OTLPReceiver != "" {
		if _, _, err := net.SplitHostPort(b.OTLPReceiver); err != nil {
			return cmdline.Usagef("--otlp-receiver %q: want HOST:PORT (127.0.0.1:4318; port 0 picks a free one): %v", b.OTLPReceiver, err)
		}
	}
	if b.OTLPWait < 0 || b.OTLPWait > maxOTLPWait {
		return cmdline.Usagef("--otlp-wait %v: want 0 to %v", b.OTLPWait, maxOTLPWait)
	}
	if b.KoboldPerf && s.Load.MaxConcurrency() != 1 {
		return cmdline.Usagef("--koboldcpp-perf needs --concurrency 1: koboldcpp's /api/extra/perf tells of its last request, which is another's when two run at once")
	}
	switch {
	case b.MockTimings == "" && s.Target.Mock && b.OTLPReceiver != "":
		// The embedded mock sends its spans to the receiver asked for:
		// nothing else would, and the run would wait --otlp-wait for them.
		b.MockTimings = "otlp"
	case b.MockTimings == "":
		b.MockTimings = "none"
	case !slices.Contains(mockTimings, b.MockTimings):
		return cmdline.Usagef("--mock-server-timings %q: want one of none, llamacpp, mock, otlp", b.MockTimings)
	}
	if b.MockTimings != "none" && !s.Target.Mock {
		return cmdline.Usagef("--mock-server-timings is the embedded mock's (no --url); give the mock you started its --server-timings")
	}
	if b.MockTimings == "otlp" && b.OTLPReceiver == "" {
		return cmdline.Usagef("--mock-server-timings otlp sends the embedded mock's spans to surge's receiver: give --otlp-receiver too (127.0.0.1:0)")
	}
	if b.MockTimings == "none" {
		b.MockTimings = ""
	}
	s.Breakdown = b
	return nil
}
