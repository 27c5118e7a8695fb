package otlp

import (
	"fmt"
	"net/url"
	"strings"
)

// Endpoints reads --otel-url as AIPerf does: a bare host[:port] gets
// http://, and the path is made to end in /v1/metrics (a path given
// before it is kept: a collector behind a prefix). Spans go beside the
// metrics, to the same prefix's /v1/traces. Only http and https: OTLP/gRPC
// is refused, as AIPerf refuses it.
func Endpoints(raw string) (metricsURL, tracesURL string, err error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", "", fmt.Errorf("is empty: want host[:port] or a URL of an OTLP/HTTP collector")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return "", "", fmt.Errorf("%q: want host[:port] or a URL of an OTLP/HTTP collector", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return "", "", fmt.Errorf("%q: only http and https collectors (OTLP/HTTP; OTLP/gRPC is not supported)", raw)
	}
	if u.User != nil {
		return "", "", fmt.Errorf("carries a user or password: give the collector's credentials in OTEL_EXPORTER_OTLP_HEADERS (\"authorization=Bearer …\")")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("%q: a collector URL has no query or fragment", raw)
	}
	u.ForceQuery = false // a bare "?"
	prefix := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1/metrics")
	u.Path, u.RawPath = prefix+"/v1/metrics", ""
	metricsURL = u.String()
	u.Path = prefix + "/v1/traces"
	return metricsURL, u.String(), nil
}
