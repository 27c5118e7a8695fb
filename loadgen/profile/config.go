// Package profile is the `surge profile` command's engine: it turns a
// validated configuration into a dataset, a load plan, a metrics collector
// and the exports, and runs them.
package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Config is everything `surge profile` was asked to do.
type Config struct {
	Model        string
	URL          string // "" or "mock": start the embedded mock server
	EndpointType string
	Streaming    bool

	Concurrency    int
	RequestRate    float64
	ArrivalPattern string
	Smoothness     float64
	RequestCount   int
	Duration       time.Duration
	Grace          time.Duration
	WarmupCount    int

	ISL, ISLStddev, OSL, OSLStddev int
	Tokenizer                      string
	Seed                           uint64

	ExtraInputs []string
	Headers     []string
	APIKey      string
	Timeout     time.Duration
	Goodput     string

	UI          string
	ArtifactDir string

	// Version is surge's version for the exports.
	Version string
}

// UsageError is bad usage or bad input: the CLI exits 2 with its message.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ParseExtraInputs reads --extra-inputs values: "key:value" where value is
// JSON when it parses as JSON (numbers, booleans, objects) and a string
// otherwise, or a whole JSON object.
func ParseExtraInputs(items []string) (map[string]any, error) {
	out := map[string]any{}
	for _, it := range items {
		it = strings.TrimSpace(it)
		if strings.HasPrefix(it, "{") {
			var obj map[string]any
			if err := json.Unmarshal([]byte(it), &obj); err != nil {
				return nil, fmt.Errorf("--extra-inputs %q: not a JSON object: %w", it, err)
			}
			for k, v := range obj {
				out[k] = v
			}
			continue
		}
		k, v, ok := strings.Cut(it, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("--extra-inputs %q: want key:value (e.g. ignore_eos:true) or a JSON object", it)
		}
		v = strings.TrimSpace(v)
		var parsed any
		if err := json.Unmarshal([]byte(v), &parsed); err == nil {
			out[k] = parsed
		} else {
			out[k] = v
		}
	}
	return out, nil
}

// ParseHeaders reads --header "Name: value" items.
func ParseHeaders(items []string) (http.Header, error) {
	h := http.Header{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") {
			return nil, fmt.Errorf("--header %q: want \"Name: value\"", redactHeaderItem(it))
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("--header %s: value contains a line break", k)
		}
		h.Add(k, strings.TrimSpace(v))
	}
	return h, nil
}

// secretHeaders are redacted wherever headers are shown.
var secretHeaders = []string{"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie"}

// IsSecretHeader reports whether a header's value must never be shown.
func IsSecretHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range secretHeaders {
		if n == s {
			return true
		}
	}
	return strings.Contains(n, "token") || strings.Contains(n, "secret") || strings.Contains(n, "key")
}

// redactHeaderItem shows a malformed --header item without its value.
func redactHeaderItem(it string) string {
	if k, _, ok := strings.Cut(it, ":"); ok {
		return k + ": <redacted>"
	}
	if len(it) > 8 {
		return it[:4] + "…"
	}
	return it
}

// Redacted is the marker that replaces secrets in exports.
const Redacted = "<redacted>"

// inputConfig is the configuration as exports show it: secrets redacted.
func (c *Config) inputConfig(headers http.Header) map[string]any {
	hs := map[string]string{}
	for k, vs := range headers {
		v := strings.Join(vs, ", ")
		if IsSecretHeader(k) {
			v = Redacted
		}
		hs[k] = v
	}
	key := ""
	if c.APIKey != "" {
		key = Redacted
	}
	return map[string]any{
		"model": c.Model, "url": c.URL, "endpoint_type": c.EndpointType, "streaming": c.Streaming,
		"concurrency": c.Concurrency, "request_rate": c.RequestRate, "arrival_pattern": c.ArrivalPattern,
		"arrival_smoothness": c.Smoothness, "request_count": c.RequestCount,
		"benchmark_duration": c.Duration.Seconds(), "benchmark_grace_period": c.Grace.Seconds(),
		"warmup_request_count": c.WarmupCount,
		"isl":                  c.ISL, "isl_stddev": c.ISLStddev, "osl": c.OSL, "osl_stddev": c.OSLStddev,
		"tokenizer": c.Tokenizer, "random_seed": c.Seed, "extra_inputs": c.ExtraInputs,
		"headers": hs, "api_key": key, "request_timeout_seconds": c.Timeout.Seconds(),
		"goodput": c.Goodput, "ui": c.UI, "output_artifact_dir": c.ArtifactDir,
	}
}

var errNoRequests = errors.New("no requests to send")
