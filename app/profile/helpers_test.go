package profile

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/metrics"
)

// runConfig runs c as `surge profile` does: parsed into a spec first (its
// usage errors returned as the command returns them), then run.
func runConfig(ctx context.Context, c cmdline.Config, out, log io.Writer) (*Result, error) {
	s, err := spec.Parse(c)
	if err != nil {
		return nil, err
	}
	return Run(ctx, s, out, log)
}

// prepareConfig is Prepare of c's spec.
func prepareConfig(c cmdline.Config, log io.Writer) (*prepared, error) {
	s, err := spec.Parse(c)
	if err != nil {
		return nil, err
	}
	return Prepare(s, log)
}

// specFor is c's spec, the settings a literal leaves zero that a run
// needs (a timeout, a prompt length) set as the command line's defaults.
func specFor(t testing.TB, c cmdline.Config) *spec.Spec {
	t.Helper()
	if c.Timeout == 0 {
		c.Timeout = time.Minute
	}
	if c.ISL == 0 {
		c.ISL = 8
	}
	if c.EndpointType == "" {
		c.EndpointType = "chat"
	}
	s, err := spec.Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loadTokenizerOf is loadTokenizer of c's spec (its usage errors returned
// as the spec's).
func loadTokenizerOf(c cmdline.Config, l cmdline.Logger) (datasets.Tokenizer, metrics.TokenCounter, tokenizerSource, error) {
	if c.Timeout == 0 {
		c.Timeout = time.Minute
	}
	if c.ISL == 0 {
		c.ISL = 8
	}
	c.EndpointType = "chat"
	s, err := spec.Parse(c)
	if err != nil {
		return nil, nil, tokenizerSource{}, err
	}
	return loadTokenizer(context.Background(), &s.Tokenizer, l)
}
