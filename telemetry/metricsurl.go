package telemetry

import "net/url"

// MetricsURL is the default --server-metrics endpoint for a target: its
// scheme and host with path /metrics ("http://localhost:8000/v1" →
// "http://localhost:8000/metrics"). vLLM, SGLang, TGI and llama.cpp all
// serve /metrics next to the OpenAI API. target is already parsed and
// checked (loadgen.BaseURL). The user information is left out: the URL
// names the samples in the exports, where no credential may go.
func MetricsURL(target *url.URL) string {
	return (&url.URL{Scheme: target.Scheme, Host: target.Host, Path: "/metrics"}).String()
}
