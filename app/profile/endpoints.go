package profile

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// endpointFor resolves the endpoint flags into the endpoint every request
// is built and read with.
func (c *config) endpointFor(kind endpoint.Kind, extra map[string]any) (*endpoint.Endpoint, error) {
	ep := &endpoint.Endpoint{Kind: kind, Model: c.Model, Streaming: c.Streaming, Extra: extra,
		LegacyMaxTokens: c.UseLegacyMaxTokens, PerChunkUsage: c.PerChunkUsage, CustomPath: strings.TrimSpace(c.CustomEndpoint),
		ResponseField: strings.TrimSpace(c.ResponseField)}
	var err error
	if ep.Reasoning, err = endpoint.ParseReasoningFormat(c.ReasoningFormat); err != nil {
		return nil, cmdline.Usagef("--reasoning-format: %w", err)
	}
	switch {
	case c.EndpointTemplate != "" && kind != endpoint.Template:
		return nil, cmdline.Usagef("--endpoint-template is for --endpoint-type template (got %s)", kind)
	case c.EndpointTemplate != "":
		text, name := c.EndpointTemplate, "--endpoint-template"
		if path, ok := strings.CutPrefix(text, "@"); ok {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, cmdline.Usagef("--endpoint-template: %w", err)
			}
			text, name = string(b), path
		}
		if ep.Template, err = endpoint.ParseTemplate(name, text); err != nil {
			return nil, cmdline.Usagef("--endpoint-template: %w", err)
		}
	case kind == endpoint.Template && strings.TrimSpace(c.CustomEndpoint) == "":
		return nil, cmdline.Usagef("--endpoint-type template needs --endpoint-template (the request body as a Go template) and --endpoint (the URL path to post it to)")
	case kind == endpoint.Template:
		return nil, cmdline.Usagef("--endpoint-type template needs --endpoint-template (the request body as a Go template)")
	}
	if kind == endpoint.Raw && strings.TrimSpace(c.InputFile) == "" {
		// Synthetic prompts are text, not request bodies.
		return nil, cmdline.Usagef("--endpoint-type raw needs --input-file: a JSONL whose every line's text is one JSON request body")
	}
	if kind == endpoint.Messages && c.embeddedMock() {
		// The API requires max_tokens; 4096 against the mock would stream
		// 4096 tokens a request. Its own default length keeps a run short.
		ep.DefaultMaxTokens = mockserver.DefaultOutputTokens
	}
	if ep.Path() == "" {
		return nil, cmdline.Usagef("--endpoint-type %s has no default path: give --endpoint", kind)
	}
	if err := ep.Validate(); err != nil {
		return nil, cmdline.Usagef("--response-field: %w", err)
	}
	return ep, nil
}

// rankingsFlags names the flags behind datasets.PassageOptions' fields.
var rankingsFlags = map[string]string{
	"Passages.Count": "--rankings-passages-mean", "Passages.CountStddev": "--rankings-passages-stddev",
	"Passages.ISL": "--rankings-passages-prompt-token-mean", "Passages.ISLStddev": "--rankings-passages-prompt-token-stddev",
}

// addPassages gives every turn without passages some to rank, for the
// rankings types: generated texts of the --rankings-passages-* shape.
func (c *config) addPassages(ds *datasets.Dataset, tok datasets.Tokenizer, log io.Writer) error {
	err := datasets.AddPassages(ds, datasets.PassageOptions{
		Count: c.RankingsPassagesMean, CountStddev: c.RankingsPassagesStddev,
		ISL: c.RankingsPassageTokens, ISLStddev: c.RankingsPassageTokensStddev, Seed: c.Seed, Tokenizer: tok,
	})
	if err != nil {
		return &cmdline.UsageError{Err: cmdline.ForFlags(err, rankingsFlags)}
	}
	fmt.Fprintf(log, "rankings: %d±%d passages of %d±%d tokens per query, where the dataset gives none\n",
		c.RankingsPassagesMean, c.RankingsPassagesStddev, c.RankingsPassageTokens, c.RankingsPassageTokensStddev)
	return nil
}

// queryLength is the synthetic prompt length: for the rankings types the
// --rankings-query-prompt-token-* flags, each defaulting to its --isl
// counterpart.
func (c *config) queryLength(rankings bool) (mean int, stddev float64, err error) {
	if !rankings {
		return c.ISL, c.ISLStddev, nil
	}
	if c.RankingsQueryTokens < 0 || c.RankingsQueryTokensStddev < 0 {
		return 0, 0, cmdline.Usagef("--rankings-query-prompt-token-mean and -stddev must not be negative")
	}
	mean, stddev = c.ISL, c.ISLStddev
	if c.RankingsQueryTokens > 0 {
		mean = c.RankingsQueryTokens
	}
	if c.RankingsQueryTokens > 0 || c.RankingsQueryTokensStddev > 0 {
		stddev = float64(c.RankingsQueryTokensStddev)
	}
	return mean, stddev, nil
}

// rankings reports whether --endpoint-type is a rankings type (false for
// an unknown one, which prepare rejects).
func (c *config) rankings() bool {
	k, err := endpoint.ParseKind(c.EndpointType)
	return err == nil && k.Info().Rankings
}

// checkBodies builds every turn's body once when the dataset is the body
// (--endpoint-type raw): a turn that is not one is bad input, refused
// before anything is sent rather than failing each request on its own.
func checkBodies(ds *datasets.Dataset, ep *endpoint.Endpoint) error {
	if ep.Kind != endpoint.Raw {
		return nil
	}
	for _, conv := range ds.Conversations {
		for i := range conv.Turns {
			if _, err := ep.Body("", nil, &conv.Turns[i]); err != nil {
				return cmdline.Usagef("%s: conversation %s turn %d: %w (give --input-file with one JSON request body per turn)", ds.Name, conv.ID, i+1, err)
			}
		}
	}
	return nil
}

// embeddedMock reports whether the run's target is the embedded mock
// server (no --url, or --url mock).
func (c *config) embeddedMock() bool { return c.URL == "" || c.URL == "mock" }
