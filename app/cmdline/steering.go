package cmdline

import "time"

// LiveConfig is the configuration of live control, stop conditions and
// `surge search`.
type LiveConfig struct {
	ControlAddr string // --control-addr ("": no control port)
	StopOn      string // --stop-on ("": none)
	// Search, when set, makes the run a capacity search (`surge search`).
	Search *SearchConfig

	// ControlToken is --control-token: the token the control port asks
	// for ("": a random one, printed at start).
	ControlToken string
}

// SearchConfig is the flags of `surge search`.
type SearchConfig struct {
	SLO        string        // --slo
	Max        float64       // --search-max (0: 1024 × the start)
	Resolution float64       // --search-resolution
	MinProbe   time.Duration // --probe-duration
	MaxProbe   time.Duration // --probe-max-duration
	MaxProbes  int           // --max-probes
	// Settle ends a probe as soon as its requests settle its verdict
	// (--settle; default on).
	Settle bool
	// AutoStart is set when neither --concurrency nor --request-rate was
	// given: a short pilot picks the start rate of a request-rate search.
	AutoStart bool
	// SLA, when set, replaces SLO: AIPerf's filters, METRIC:STAT:OP:VALUE
	// (a search recipe's); Recipe and Style name the recipe it came from.
	SLA           []string
	Recipe, Style string
	// Min is the lowest value a recipe probes (--concurrency-min).
	Min float64
}
