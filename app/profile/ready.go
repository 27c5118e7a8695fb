package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// waitReady probes each of targets until it answers or r.Timeout passes
// (an error naming the server and its last answer); nothing when no
// --wait-for-model-timeout was given. models are the models the models
// probe looks for.
func waitReady(ctx context.Context, r spec.Readiness, targets []string, ep *endpoint.Endpoint, models []string, headers http.Header, l cmdline.Logger) error {
	if r.Timeout <= 0 {
		return nil
	}
	client := outbound.NewClient(outbound.WithTimeout(min(r.Timeout, 30*time.Second)))
	for _, t := range targets {
		ctx, cancel := context.WithTimeout(ctx, r.Timeout)
		err := readiness(r).waitOne(ctx, client, t, ep, models, headers, l)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// readiness is --wait-for-model-*: probe a server until it serves the
// model.
type readiness spec.Readiness

// notReadyEvery is how often the same "not ready" answer is logged again.
const notReadyEvery = 10 * time.Second

func (r readiness) waitOne(ctx context.Context, client *http.Client, target string, ep *endpoint.Endpoint, models []string, headers http.Header, l cmdline.Logger) error {
	start := time.Now()
	last := "" // the server's last answer (not the deadline cutting a probe short)
	// A short --wait-for-model-interval would print a debug line a probe:
	// each new answer is printed, the same answer again once every 10 s.
	logged, again := "", rate.Sometimes{Interval: notReadyEvery}
	for {
		why := r.probe(ctx, client, target, ep, models, headers)
		if why == "" {
			l.Notef("%s is ready (%s probe, after %.1f s)", cmdline.RedactURL(target), r.Mode, time.Since(start).Seconds())
			return nil
		}
		if ctx.Err() == nil || last == "" {
			last = why
		}
		if ctx.Err() == nil { // a probe the deadline cut short says nothing new
			if why != logged {
				logged, again = why, rate.Sometimes{Interval: notReadyEvery}
			}
			again.Do(func() { l.Debugf("%s not ready: %s", cmdline.RedactURL(target), why) })
		}
		select {
		case <-ctx.Done():
			if err := ctx.Err(); errors.Is(err, context.Canceled) {
				// Interrupted, not timed out: the command exits 130.
				return fmt.Errorf("interrupted while waiting for %s (%w)", cmdline.RedactURL(target), err)
			}
			return fmt.Errorf("--wait-for-model-timeout: %s was not ready within %s (%s probe): %s", cmdline.RedactURL(target), r.Timeout, r.Mode, last)
		case <-time.After(r.Interval):
		}
	}
}

// probe returns "" when the server is ready, else what it answered.
func (r readiness) probe(ctx context.Context, client *http.Client, target string, ep *endpoint.Endpoint, models []string, headers http.Header) string {
	if r.Mode == cmdline.ProbeModels || r.Mode == cmdline.ProbeBoth {
		if why := probeModelList(ctx, client, target, models, headers); why != "" {
			return why
		}
	}
	if r.Mode == cmdline.ProbeModels {
		return ""
	}
	u, err := loadgen.RequestURL(target, ep.Path())
	if err != nil {
		return err.Error()
	}
	body, err := ep.Body("", nil, &datasets.Turn{Text: "Hello", MaxTokens: 1, Passages: []string{"Hello"}})
	if err != nil {
		return err.Error()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err.Error()
	}
	req.Header = headers.Clone()
	ep.SetHeaders(req.Header)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return unwrapErr(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 500 {
		return fmt.Sprintf("HTTP %d to a one-token request", resp.StatusCode)
	}
	return ""
}

// maxReadyModelList bounds the models probe's answer: a server's list of
// models, with their settings, is a few KiB.
const maxReadyModelList = 16 << 20

// probeModelList is the models probe: /v1/models lists every model (a
// server without that route is asked for its base URL instead).
func probeModelList(ctx context.Context, client *http.Client, target string, models []string, headers http.Header) string {
	u, err := loadgen.RequestURL(target, "/v1/models")
	if err != nil {
		return err.Error()
	}
	get := func(u string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header = headers.Clone()
		return client.Do(req)
	}
	resp, err := get(u)
	if err != nil {
		return unwrapErr(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		base, _ := loadgen.BaseURL(target)
		if resp, err = get(base.String()); err != nil {
			return unwrapErr(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Sprintf("HTTP %d from %s (and no /v1/models)", resp.StatusCode, base)
		}
		return ""
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("HTTP %d from /v1/models", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	b, err := outbound.ReadBody(ctx, resp, maxReadyModelList, "its answer")
	if err != nil {
		return "/v1/models: " + err.Error()
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return "/v1/models is not a model list: " + err.Error()
	}
	for _, model := range models {
		if !slices.ContainsFunc(list.Data, func(m struct {
			ID string `json:"id"`
		}) bool {
			return m.ID == model
		}) {
			return fmt.Sprintf("/v1/models does not list %q yet", model)
		}
	}
	return ""
}

// unwrapErr drops net/http's `Post "url": ` prefix.
func unwrapErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
