package profile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/loadgen"
)

// AIPerf's retry of a KV-cache reset the server could not take yet: a
// timeout, a refused connection, or 409, 423, 429 or 503 (busy) is tried
// again after 1 s, then twice as long each time up to 8 s, for at most
// 60 s; any other answer is final.
const (
	resetRetryFor     = 60 * time.Second
	resetBackoff      = time.Second
	resetBackoffCap   = 8 * time.Second
	hookResponseBytes = 64 << 10
)

// serverHooks are the control calls of s.Hooks to every server of the
// run (each origin once, as AIPerf posts them), as loadgen stage hooks:
// before each profile stage the sweep's cooldown (from the second stage
// on), the KV-cache reset, then the profiler's start; after it the
// profiler's stop. Calls are logged at DEBUG.
func serverHooks(h spec.Hooks, cooldown time.Duration, servers []string, headers http.Header, log cmdline.Logger) (loadgen.StageHooks, error) {
	var origins []string
	for _, srv := range servers {
		u, err := loadgen.BaseURL(srv)
		if err != nil {
			return loadgen.StageHooks{}, err
		}
		if o := u.Scheme + "://" + u.Host; !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
	}
	c := &hookClient{client: outbound.NewClient(outbound.NoRedirects()), headers: headers, log: log}
	var hooks loadgen.StageHooks
	if !h.Reset && !h.Profiler {
		if cooldown > 0 {
			// --parameter-sweep-cooldown-seconds alone.
			hooks.Before = func(ctx context.Context, stage int) error {
				if stage > 0 {
					log.Debugf("cooling down %s before stage %d", cooldown, stage)
					loadgen.Sleep(ctx, cooldown)
				}
				return nil
			}
		}
		return hooks, nil
	}
	hooks.DrainWarmup = true // the reset and the profiler see no warmup request
	hooks.Before = func(ctx context.Context, stage int) error {
		if stage > 0 && !loadgen.Sleep(ctx, cooldown) {
			return nil // interrupted: the run ends
		}
		if h.Reset {
			for _, o := range origins {
				if err := c.postRetry(ctx, o+h.ResetPath, h.ResetTimeout); err != nil {
					return fmt.Errorf("--reset-kv-cache before stage %d: %w", stage, err)
				}
			}
		}
		if !h.Profiler {
			return nil
		}
		for i, o := range origins {
			if err := c.post(ctx, o+h.StartPath, h.ProfilerTimeout); err != nil {
				// Stop the ones started, newest first, as AIPerf does.
				for j := i - 1; j >= 0; j-- {
					_ = c.post(context.WithoutCancel(ctx), origins[j]+h.StopPath, h.ProfilerTimeout)
				}
				return fmt.Errorf("--server-profiler start before stage %d: %w", stage, err)
			}
		}
		return nil
	}
	if h.Profiler {
		hooks.After = func(ctx context.Context, stage int) error {
			var errs []error
			for _, o := range origins {
				if err := c.post(ctx, o+h.StopPath, h.ProfilerTimeout); err != nil {
					errs = append(errs, err)
				}
			}
			if len(errs) > 0 {
				return fmt.Errorf("--server-profiler stop after stage %d: %w", stage, errors.Join(errs...))
			}
			return nil
		}
	}
	return hooks, nil
}

// hookClient posts control calls with the run's headers.
type hookClient struct {
	client  *http.Client
	headers http.Header
	log     cmdline.Logger
}

// hookError is a control call that failed; retry says whether AIPerf
// tries a reset again after it.
type hookError struct {
	msg   string
	retry bool
}

func (e *hookError) Error() string { return e.msg }

// post sends one control call: an empty POST answered 2xx within timeout.
func (c *hookClient) post(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return err
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	shown := cmdline.RedactURL(url)
	start := time.Now()
	resp, err := c.client.Do(req)
	if err != nil {
		// No answer (a timeout, a refused or reset connection): the
		// server may be busy, and a reset is tried again.
		return &hookError{msg: fmt.Sprintf("POST %s: %v", shown, errors.Unwrap(err)), retry: true}
	}
	// A 2xx answer's body says nothing a control call needs: it is not
	// read. An error's start is shown.
	defer resp.Body.Close()
	c.log.Debugf("POST %s: %s in %s", shown, resp.Status, time.Since(start).Round(time.Millisecond))
	if resp.StatusCode/100 != 2 {
		switch resp.StatusCode {
		case http.StatusConflict, http.StatusLocked, http.StatusTooManyRequests, http.StatusServiceUnavailable:
			return &hookError{msg: fmt.Sprintf("POST %s: %s", shown, resp.Status), retry: true}
		}
		body := bounded.Head(resp.Body, hookResponseBytes)
		return &hookError{msg: fmt.Sprintf("POST %s: %s %s", shown, resp.Status, strings.TrimSpace(string(body[:min(len(body), 200)])))}
	}
	return nil
}

// postRetry is post, tried again after a failure that may pass (AIPerf's
// reset retry: backoff from 1 s, doubling to 8 s, within 60 s).
func (c *hookClient) postRetry(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(resetRetryFor)
	backoff := resetBackoff
	for {
		err := c.post(ctx, url, timeout)
		var he *hookError
		if err == nil || !errors.As(err, &he) || !he.retry || time.Now().Add(backoff).After(deadline) {
			return err
		}
		c.log.Debugf("%v: trying again in %s", err, backoff)
		if !loadgen.Sleep(ctx, backoff) {
			return err
		}
		backoff = min(2*backoff, resetBackoffCap)
	}
}
