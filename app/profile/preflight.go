package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/preflight"
)

// checkTarget checks the first server before anything of the run is
// loaded or written: it must accept a connection and answer one small
// request of the run's endpoint, within a few seconds. What the answer
// shows of the server's dialect is applied where no flag said otherwise:
// a server that ignores max_completion_tokens and honours max_tokens gets
// max_tokens. One line says what it found.
func (p *prepared) checkTarget(ctx context.Context, log io.Writer) error {
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
	// The run's transport and redirect rule: what the probe meets is what
	// the run's requests will.
	opts := []outbound.Option{outbound.WithTransport(loadgen.NewTransport(1))}
	if !s.Request.FollowRedirects {
		opts = append(opts, outbound.NoRedirects())
	}
	client := outbound.NewClient(opts...)
	defer client.CloseIdleConnections()
	res, err := preflight.Check(ctx, preflight.Target{URL: u, Endpoint: s.Endpoint, Header: headers}, preflight.Client(client))
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
		if pe.Op == "connect" || pe.Status >= 400 && pe.Status < 500 {
			// No connection, or a request the server refuses as made (a
			// wrong path, model or key): every request of the run would
			// fail alike.
			return cmdline.Usagef("%s (--skip-preflight runs anyway)", msg)
		}
		// A server error may pass; the run's records will say.
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

// preflightInfo is run_info.preflight: what the check learnt of the
// server (nil when it did not run).
func preflightInfo(r *preflight.Result) map[string]any {
	if r == nil {
		return nil
	}
	return map[string]any{"family": string(r.Family), "family_from": r.FamilyFrom, "version": r.Version,
		"cap_field": r.CapField, "ignored_cap_fields": r.Ignored, "stream_usage": r.StreamUsage.String(),
		"took_ms": float64(r.Took.Microseconds()) / 1e3}
}
