package spec

import (
	"slices"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// Target is the servers and models a run measures.
type Target struct {
	// URLs are --url's servers, which take the requests round-robin; URL
	// is the first ("" or "mock": the embedded mock server, Mock).
	URLs []string
	URL  string
	Mock bool
	// Models are --model's names (several share the requests by
	// ModelSelection); ModelFromServer is set when none was given and the
	// run asks the server's /v1/models (Models then holds the fallback).
	Models          []string
	ModelSelection  string
	ModelFromServer bool
	// Weights are the models' shares of the requests, in Models' order
	// (--model-weights; nil unless ModelSelection is weighted); LoRA maps
	// a model name that is a LoRA adapter to its base model (models.go).
	Weights []float64
	LoRA    map[string]string
	// Wait is --wait-for-model-*: probe each server until it serves the
	// model (Wait.Timeout 0: do not).
	Wait Readiness
	// Preflight checks the first server before the run (not the embedded
	// mock, not with --skip-preflight); what it learns of the server's
	// dialect is applied unless a flag said it (LegacyMaxTokensGiven).
	Preflight, LegacyMaxTokensGiven bool
	// MockPrefillPerImage and MockPrefillPerAudioSecond price media in the
	// embedded mock's TTFT.
	MockPrefillPerImage, MockPrefillPerAudioSecond time.Duration
	// MockSpecAcceptance and MockSpecTokens give the embedded mock a
	// draft model (0 tokens: none).
	MockSpecAcceptance float64
	MockSpecTokens     int
}

// Readiness is --wait-for-model-*.
type Readiness struct {
	Timeout, Interval time.Duration
	Mode              string // cmdline.ProbeInference, ProbeModels or ProbeBoth
}

// Model is the first model, the one the endpoint names.
func (t *Target) Model() string {
	if len(t.Models) == 0 {
		return ""
	}
	return t.Models[0]
}

// Servers are the URLs requests go to, the first replaced by target (the
// embedded mock's address once it is started).
func (t *Target) Servers(target string) []string {
	return append([]string{target}, t.URLs[min(1, len(t.URLs)):]...)
}

// parseTarget reconciles the lists the flags fill with the single values a
// caller may set (Model, URL): each list holds at least its single value,
// and the single value is the list's first. Empty items (a bare flag,
// "a,,b") are dropped; several URLs must all be servers.
func parseTarget(s *Spec, c *cmdline.Config) error {
	c.Models = nonEmpty(c.Models)
	if len(c.Models) == 0 && c.Model != "" {
		c.Models = []string{c.Model}
	}
	if len(c.Models) > 0 {
		c.Model = c.Models[0]
	}
	if slices.ContainsFunc(c.URLs, func(u string) bool { return strings.TrimSpace(u) == "" }) {
		return cmdline.Usagef("--url needs a server URL (or mock; leave it out for the embedded mock server)")
	}
	c.URLs = nonEmpty(c.URLs)
	if len(c.URLs) == 0 && c.URL != "" {
		c.URLs = []string{c.URL}
	}
	if len(c.URLs) > 0 {
		c.URL = c.URLs[0]
	}
	for _, u := range c.URLs {
		if u == "mock" && len(c.URLs) > 1 {
			return cmdline.Usagef("--url mock starts the embedded mock server: it cannot share the requests with other --url servers")
		}
		if _, err := loadgen.RequestURL(u, endpoint.Chat.Path()); u != "mock" && err != nil {
			return cmdline.Usagef("--url: %w", err)
		}
	}
	switch c.ModelSelection {
	case "", "round_robin", "random", "weighted":
	default:
		return cmdline.Usagef("--model-selection-strategy %q: want round_robin, random or weighted", c.ModelSelection)
	}
	if c.Model == "" {
		return cmdline.Usagef("--model is required (the model name the server serves)")
	}
	s.Target = Target{URLs: c.URLs, URL: c.URL, Mock: c.URL == "" || c.URL == "mock",
		Models: c.Models, ModelSelection: c.ModelSelection, ModelFromServer: c.ModelFromServer,
		Preflight: !c.SkipPreflight && c.URL != "" && c.URL != "mock", LegacyMaxTokensGiven: c.LegacyMaxTokensSet,
		MockPrefillPerImage: c.MockPrefillPerImage, MockPrefillPerAudioSecond: c.MockPrefillPerAudioSecond}
	return parseReadiness(&s.Target.Wait, c)
}

// parseReadiness checks --wait-for-model-*, as AIPerf does: the mode and
// interval only with a timeout.
func parseReadiness(r *Readiness, c *cmdline.Config) error {
	*r = Readiness{Timeout: c.WaitTimeout, Interval: c.WaitInterval, Mode: c.WaitMode}
	modeSet := r.Mode != "" && r.Mode != cmdline.ProbeInference
	intervalSet := r.Interval != 0 && r.Interval != 5*time.Second
	if r.Mode == "" {
		r.Mode = cmdline.ProbeInference
	}
	switch {
	case r.Timeout < 0:
		return cmdline.Usagef("--wait-for-model-timeout must be ≥ 0, got %s", r.Timeout)
	case r.Timeout == 0 && (modeSet || intervalSet):
		return cmdline.Usagef("--wait-for-model-mode and --wait-for-model-interval need --wait-for-model-timeout (seconds to wait)")
	case r.Timeout > 0 && r.Interval <= 0:
		return cmdline.Usagef("--wait-for-model-interval must be > 0, got %s", r.Interval)
	case !slices.Contains([]string{cmdline.ProbeInference, cmdline.ProbeModels, cmdline.ProbeBoth}, r.Mode):
		return cmdline.Usagef("--wait-for-model-mode %q: want inference, models or both", r.Mode)
	}
	return nil
}

func nonEmpty(items []string) []string {
	out := items[:0:0]
	for _, it := range items {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}
