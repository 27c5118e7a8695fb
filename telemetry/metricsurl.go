package telemetry

import (
	"fmt"
	"net/url"
	"strings"
)

// MetricsURL is the default --server-metrics endpoint for a target: its
// scheme and host with path /metrics ("localhost:8000/v1" →
// "http://localhost:8000/metrics"). vLLM, SGLang, TGI and llama.cpp all
// serve /metrics next to the OpenAI API.
func MetricsURL(target string) (string, error) {
	if !strings.Contains(target, "://") {
		target = "http://" + target
	}
	u, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("server metrics: target URL %q: %w", target, err)
	}
	if u.Host == "" {
		return "", fmt.Errorf("server metrics: target URL %q has no host", target)
	}
	return (&url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host, Path: "/metrics"}).String(), nil
}
