package cmdline

import (
	"net/http"
	"time"

	"github.com/urfave/cli/v2"
)

// NetworkConfig is AIPerf's network latency adjustment.
type NetworkConfig struct {
	// NetworkAuto is --network-latency-automatic: probe the round trip
	// every NetworkInterval (--network-latency-ping-interval; 0: 1 s);
	// NetworkMean is --network-latency-mean as given (ms; "": none).
	NetworkAuto     bool
	NetworkMean     string
	NetworkInterval time.Duration
}

// networkOptions are the rows of those flags (flags.go's options holds
// them with the rest).
func networkOptions() []option {
	return []option{
		{flag: &cli.BoolFlag{Category: catTelemetry, Hidden: true, Name: "network-latency-automatic", Usage: "time a TCP handshake to each server every --network-latency-ping-interval during the profile and report network_adjusted_* latencies less its mean"}, path: "network_latency.automatic",
			field: func(c *Config) any { return &c.NetworkAuto }},
		{flag: &cli.StringFlag{Category: catTelemetry, Hidden: true, Name: "network-latency-mean", Usage: "the network round trip (ms) the network_adjusted_* latencies subtract, instead of probing"}, path: "network_latency.mean",
			field: func(c *Config) any { return &c.NetworkMean }, export: func(c *Config, _ http.Header) any { return optionalNumber(c.NetworkMean) }},
		{flag: &cli.Float64Flag{Category: catTelemetry, Hidden: true, Name: "network-latency-ping-interval", Usage: "seconds between the handshake probes (default 1)"}, path: "network_latency.ping_interval",
			field: func(c *Config) any { return Secs(&c.NetworkInterval) }},
	}
}
