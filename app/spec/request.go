package spec

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// maxTemplateFile bounds an --endpoint-template @file: a request body's
// template is a few KiB.
const maxTemplateFile = 1 << 20

// Request is how every request is sent: its headers and extra fields, its
// connection, its bounds, and the network's edges (docs/network-edges.md).
type Request struct {
	// Headers are the headers as sent: -H's, and the API key's.
	Headers http.Header
	// Extra is --extra-inputs: fields merged into every body.
	Extra         map[string]any
	APIKey        string
	Reuse         loadgen.ConnectionReuse
	SessionHeader string
	// Timeout is --request-timeout-seconds; Grace how long in-flight
	// requests may finish once issuing stops.
	Timeout, Grace time.Duration
	Timestamps     loadgen.Timestamps
	// NoCapGuard lets a streamed response run past 4× its output cap.
	NoCapGuard bool
	// FollowRedirects, MaxResponseBytes (0: the library's 64 MiB) and
	// Retries (0 or 1) are the edges.
	FollowRedirects  bool
	MaxResponseBytes int64
	Retries          int
}

// maxResponseMiB bounds --max-response-mib (16 GiB: past any answer, and
// still a bound).
const maxResponseMiB = 16 << 10

// minControlToken is the shortest --control-token taken.
const minControlToken = 16

func parseEndpointKind(s *Spec, c *cmdline.Config) error {
	kind, err := endpoint.ParseKind(c.EndpointType)
	if err != nil {
		return &cmdline.UsageError{Err: err}
	}
	s.Endpoint = &endpoint.Endpoint{Kind: kind}
	return nil
}

// parseEdges checks the edges' flags.
func parseEdges(s *Spec, c *cmdline.Config) error {
	switch {
	case c.MaxResponseMiB < 0 || c.MaxResponseMiB > maxResponseMiB:
		return cmdline.Usagef("--max-response-mib must be between 1 and %d, got %d", maxResponseMiB, c.MaxResponseMiB)
	case c.Retries() < 0:
		return cmdline.Usagef("--connection-retries %q: want 0 or 1", c.ConnectionRetries)
	case c.ControlToken != "" && len(c.ControlToken) < minControlToken:
		return cmdline.Usagef("--control-token is %d characters: want at least %d (or leave it out for a random one)", len(c.ControlToken), minControlToken)
	case strings.ContainsFunc(c.ControlToken, func(r rune) bool { return r <= ' ' || r >= 0x7f }):
		return cmdline.Usagef("--control-token: printable ASCII only, no spaces")
	}
	s.Request.FollowRedirects = c.FollowRedirects
	s.Request.MaxResponseBytes = int64(c.MaxResponseMiB) << 20
	s.Request.Retries = c.Retries()
	return nil
}

// parseRequest reads the request's own flags: the timestamp source, the
// extra fields, the headers and the connection reuse.
func parseRequest(s *Spec, c *cmdline.Config) error {
	r := &s.Request
	var ok bool
	if r.Timestamps, ok = loadgen.ParseTimestamps(c.Timestamps); !ok {
		return cmdline.Usagef("--timestamps %q: want kernel or read", c.Timestamps)
	}
	var err error
	if r.Extra, err = cmdline.ParseExtraInputs(c.ExtraInputs); err != nil {
		return &cmdline.UsageError{Err: err}
	}
	if r.Headers, err = cmdline.ParseHeaders(c.Headers); err != nil {
		return &cmdline.UsageError{Err: err}
	}
	if r.Reuse, err = loadgen.ParseConnectionReuse(c.ConnectionReuse); err != nil {
		return cmdline.Usagef("--connection-reuse-strategy: %w", err)
	}
	r.APIKey, r.SessionHeader, r.NoCapGuard = c.APIKey, c.SessionHeader, c.NoCapGuard
	r.Timeout, r.Grace = c.Timeout, c.Grace
	return nil
}

// parseEndpoint resolves the endpoint flags into the endpoint every
// request is built and read with, and puts the API key in its header.
func parseEndpoint(s *Spec, c *cmdline.Config) error {
	kind := s.Endpoint.Kind
	ep := &endpoint.Endpoint{Kind: kind, Model: c.Model, Streaming: c.Streaming, Extra: s.Request.Extra,
		LegacyMaxTokens: c.UseLegacyMaxTokens, PerChunkUsage: c.PerChunkUsage, CustomPath: strings.TrimSpace(c.CustomEndpoint),
		ResponseField: strings.TrimSpace(c.ResponseField)}
	var err error
	if ep.Reasoning, err = endpoint.ParseReasoningFormat(c.ReasoningFormat); err != nil {
		return cmdline.Usagef("--reasoning-format: %w", err)
	}
	switch {
	case c.EndpointTemplate != "" && kind != endpoint.Template:
		return cmdline.Usagef("--endpoint-template is for --endpoint-type template (got %s)", kind)
	case c.EndpointTemplate != "":
		text, name := c.EndpointTemplate, "--endpoint-template"
		if path, ok := strings.CutPrefix(text, "@"); ok {
			b, err := bounded.ReadFile(context.Background(), path, maxTemplateFile)
			if err != nil {
				return cmdline.Usagef("--endpoint-template: %w", err)
			}
			text, name = string(b), path
		}
		if ep.Template, err = endpoint.ParseTemplate(name, text); err != nil {
			return cmdline.Usagef("--endpoint-template: %w", err)
		}
	case kind == endpoint.Template && strings.TrimSpace(c.CustomEndpoint) == "":
		return cmdline.Usagef("--endpoint-type template needs --endpoint-template (the request body as a Go template) and --endpoint (the URL path to post it to)")
	case kind == endpoint.Template:
		return cmdline.Usagef("--endpoint-type template needs --endpoint-template (the request body as a Go template)")
	}
	if kind == endpoint.Raw && strings.TrimSpace(c.InputFile) == "" {
		// Synthetic prompts are text, not request bodies.
		return cmdline.Usagef("--endpoint-type raw needs --input-file: a JSONL whose every line's text is one JSON request body")
	}
	if (kind == endpoint.Messages || kind == endpoint.BedrockInvoke) && s.Target.Mock {
		// The API requires max_tokens; 4096 against the mock would stream
		// 4096 tokens a request. Its own default length keeps a run short.
		ep.DefaultMaxTokens = mockserver.DefaultOutputTokens
	}
	if ep.Path() == "" {
		return cmdline.Usagef("--endpoint-type %s has no default path: give --endpoint", kind)
	}
	if err := ep.Validate(); err != nil {
		return cmdline.Usagef("--response-field: %w", err)
	}
	s.Endpoint, s.Streaming = ep, c.Streaming
	if c.Streaming && !ep.Info().Streams {
		// As AIPerf: the flag is dropped, not the run.
		s.Warnings = append(s.Warnings, fmt.Sprintf("--streaming: endpoint type %s does not stream; its requests are sent and read whole", kind))
	}
	if c.Search != nil {
		if err := needsStreaming(c.Search.SLO, c.Streaming && ep.Info().Streams, kind); err != nil {
			return err
		}
	}
	if name, value := apiKeyHeader(s, ep, c.APIKey); c.APIKey != "" && s.Request.Headers.Get(name) == "" {
		s.Request.Headers.Set(name, value)
	}
	return nil
}
