package telemetry

import "net/url"

// MetricsURL is the default --server-metrics endpoint for a target: its
// scheme and host with path /metrics ("http://localhost:8000/v1" →
// "http://localhost:8000/metrics"). vLLM, SGLang, TGI and llama.cpp all
// serve /metrics next to the OpenAI API. target is already parsed and
// checked (loadgen.BaseURL).
func MetricsURL(target *url.URL) string {
	return (&url.URL{Scheme: target.Scheme, User: target.User, Host: target.Host, Path: "/metrics"}).String()
}
