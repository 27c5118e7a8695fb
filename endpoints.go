package main

import (
	"math/rand/v2"
	"os"
	"strings"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// endpointFor resolves the endpoint flags into the endpoint every request
// is built and read with.
func (c *Config) endpointFor(kind endpoint.Kind, extra map[string]any) (*endpoint.Endpoint, error) {
	ep := &endpoint.Endpoint{Kind: kind, Model: c.Model, Streaming: c.Streaming, Extra: extra,
		LegacyMaxTokens: c.UseLegacyMaxTokens, CustomPath: strings.TrimSpace(c.CustomEndpoint),
		ResponseField: strings.TrimSpace(c.ResponseField)}
	var err error
	if ep.Reasoning, err = endpoint.ParseReasoningFormat(c.ReasoningFormat); err != nil {
		return nil, usagef("--reasoning-format: %w", err)
	}
	switch {
	case c.EndpointTemplate != "" && kind != endpoint.Template:
		return nil, usagef("--endpoint-template is for --endpoint-type template (got %s)", kind)
	case c.EndpointTemplate != "":
		text, name := c.EndpointTemplate, "--endpoint-template"
		if path, ok := strings.CutPrefix(text, "@"); ok {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, usagef("--endpoint-template: %w", err)
			}
			text, name = string(b), path
		}
		if ep.Template, err = endpoint.ParseTemplate(name, text); err != nil {
			return nil, usagef("--endpoint-template: %w", err)
		}
	case kind == endpoint.Template:
		return nil, usagef("--endpoint-type template needs --endpoint-template (the request body as a Go template)")
	}
	if ep.Path() == "" {
		return nil, usagef("--endpoint-type %s has no default path: give --endpoint", kind)
	}
	if err := ep.Validate(); err != nil {
		return nil, usagef("--response-field: %w", err)
	}
	if c.Streaming && !ep.Info().Streams {
		return nil, usagef("--streaming: endpoint type %s does not stream (it answers with one body)", kind)
	}
	if c.RankingsPassagesMean < 0 || c.RankingsPassagesStddev < 0 {
		return nil, usagef("--rankings-passages-mean and --rankings-passages-stddev must not be negative")
	}
	return ep, nil
}

// defaultRankingsPassages is --rankings-passages-mean's default.
const defaultRankingsPassages = 5

// addPassages gives every turn without passages some to rank, for the
// rankings types: the contents of other turns of the dataset, as many as
// a normal draw around mean (at least 1), from a seeded RNG so a seed
// sends the same requests.
func addPassages(ds *datasets.Dataset, mean, stddev int, seed uint64) {
	if mean <= 0 {
		mean = defaultRankingsPassages
	}
	var pool []string
	var poolTokens []int // each passage's length when the dataset knows it
	for _, conv := range ds.Conversations {
		for _, t := range conv.Turns {
			pool = append(pool, t.Content())
			poolTokens = append(poolTokens, t.InputTokens)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x7061737361676573)) // "passages"
	next := 0
	for ci := range ds.Conversations {
		for ti := range ds.Conversations[ci].Turns {
			t := &ds.Conversations[ci].Turns[ti]
			if len(t.Passages) > 0 {
				continue
			}
			n := max(1, int(float64(mean)+rng.NormFloat64()*float64(stddev)+0.5))
			t.Passages = make([]string, n)
			known := t.InputTokens > 0
			for i := range t.Passages {
				next++
				t.Passages[i] = pool[next%len(pool)]
				// ISL counts the query and every passage.
				known = known && poolTokens[next%len(pool)] > 0
				t.InputTokens += poolTokens[next%len(pool)]
			}
			if !known {
				t.InputTokens = 0 // counted from the text instead
			}
		}
	}
}
