package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/preflight"
	"github.com/surgebench/surge/metrics"
)

// probeClient is the client of the requests surge makes of a server
// before its run (the preflight, the server's facts), under the outbound
// policy: the run's transport, one request per connection (no connection
// left open to hold one of a small server's few HTTP threads) and no
// redirect followed (a probe measures the server it was pointed at).
func probeClient() *http.Client {
	tr := loadgen.NewTransport(1)
	tr.DisableKeepAlives = true
	return outbound.NewClient(outbound.WithTransport(tr), outbound.NoRedirects())
}

// checkTarget checks the first server before anything of the run is
// loaded or written (a run whose bodies are the dataset's own, rankings
// passages or raw bodies, after its dataset: first is its first turn,
// the probe): it must accept a connection and answer one small
// request of the run's endpoint as that endpoint type does, within a few
// seconds. What the answer shows of the server's dialect is applied where
// no flag said otherwise: a chat server that ignores
// max_completion_tokens and honours max_tokens gets max_tokens. One line
// says what it found.
func (p *prepared) checkTarget(ctx context.Context, log io.Writer, first *datasets.Turn) error {
	s := p.s
	if !s.Target.Preflight {
		return nil
	}
	u, err := loadgen.RequestURL(s.Target.URL, s.Endpoint.Path())
	if err != nil {
		return &cmdline.UsageError{Err: fmt.Errorf("--url: %w", err)}
	}
	headers := s.Request.Headers.Clone()
	s.Endpoint.SetHeaders(headers)
	client := probeClient()
	defer client.CloseIdleConnections()
	t := preflight.Target{URL: u, Endpoint: s.Endpoint, Header: headers, Turn: first, Hosted: s.Cloud.Cloud()}
	if p.auth != nil {
		t.Authorize = p.auth.Authorize
	}
	res, err := preflight.Check(ctx, t, preflight.Client(client))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while checking %s (%w)", cmdline.RedactURL(s.Target.URL), ctx.Err())
		}
		var pe *preflight.Error
		if !errors.As(err, &pe) {
			return err
		}
		msg := pe.Error()
		for _, secret := range s.Secrets {
			msg = strings.ReplaceAll(msg, secret, cmdline.Redacted)
		}
		msg = sanitize.Line(msg) // the server's message, shown escaped
		switch {
		case pe.Op == preflight.OpAnswer:
			// A page, a 404: every request of the run would fail alike.
			return cmdline.Usagef("%s: check --url / --endpoint-type", msg)
		case pe.Op == preflight.OpConnect || pe.Status >= 400 && pe.Status < 500 && pe.Status != http.StatusTooManyRequests:
			// No connection, or a request the server refuses as made (a
			// wrong model or key): every request of the run would fail
			// alike.
			return cmdline.Usagef("%s (--skip-preflight runs anyway)", msg)
		}
		// A server error, or one still busy, may pass; the run's records
		// will say.
		fmt.Fprintf(log, "warning: preflight: %s: running anyway, the server's dialect unlearnt\n", msg)
		return nil
	}
	p.preflight = res
	line := "preflight: " + res.String()
	if legacy, known := res.LegacyMaxTokens(); known && legacy != s.Endpoint.LegacyMaxTokens && !s.Target.LegacyMaxTokensGiven {
		p.s = s.WithLegacyMaxTokens(legacy)
		if legacy {
			line += ": sending the output cap as max_tokens (--use-legacy-max-tokens=false keeps max_completion_tokens)"
		} else {
			line += ": sending the output cap as max_completion_tokens"
		}
	}
	fmt.Fprintln(log, sanitize.Line(line))
	for _, n := range res.Notes {
		p.log.Debugf("preflight: %s", n)
	}
	return nil
}

// firstTurn is the dataset's first turn (nil: none), the probe of a type
// whose bodies are the dataset's own.
func (p *prepared) firstTurn() *datasets.Turn {
	if p.ds == nil || p.ds.Len() == 0 {
		return nil
	}
	c := p.ds.Conversation(0)
	if len(c.Turns) == 0 {
		return nil
	}
	return &c.Turns[0]
}

// goneWarning is the caveat for a run whose server answered the
// preflight and then refused the run's connections: it went away in
// between (nothing when it did not answer the preflight, or the run met
// no refusal).
func goneWarning(pf *preflight.Result, sum *metrics.Summary, start time.Time) string {
	if pf == nil || pf.At.IsZero() {
		return ""
	}
	var refused int64
	for _, e := range sum.Errors {
		if e.Details.Type == loadgen.ErrConnection && strings.HasPrefix(e.Details.Message, "connection refused") {
			refused += e.Count
		}
	}
	if refused == 0 {
		return ""
	}
	return fmt.Sprintf("the server at %s answered the preflight %.1f s before the run, then refused %d connections: it went away after the preflight (stopped or crashed)",
		pf.Addr, start.Sub(pf.At).Seconds(), refused)
}

// preflightInfo is run_info.preflight: what the check learnt of the
// server (nil when it did not run).
func preflightInfo(r *preflight.Result) map[string]any {
	if r == nil {
		return nil
	}
	return map[string]any{"family": string(r.Family), "family_from": r.FamilyFrom, "version": r.Version,
		"cap_field": r.CapField, "ignored_cap_fields": r.Ignored, "stream_usage": r.StreamUsage.String(),
		"busy_answers": r.Busy, "took_ms": float64(r.Took.Microseconds()) / 1e3}
}
