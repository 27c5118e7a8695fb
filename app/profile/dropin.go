package profile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"time"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
)

// addSystemPrompt puts the system prompt flags' text at the head of every
// conversation's system message: alone, or before a dataset's own (a
// shared system prompt's) after a blank line.
func addSystemPrompt(ds *datasets.Dataset, text string) *datasets.Dataset {
	if text == "" {
		return ds
	}
	return datasets.Each(ds, func(_ int, conv *datasets.Conversation) {
		if conv.SystemPrompt == "" {
			conv.SystemPrompt = text
		} else {
			conv.SystemPrompt = text + "\n\n" + conv.SystemPrompt
		}
	})
}

// valuePools are the synthetic prompts of a sweep's values, one pool of
// size conversations per value, as AIPerf builds each value's dataset
// anew with seed --random-seed + the value's index: a prefix cache sees
// no prompt of an earlier value again (with --parameter-sweep-same-seed,
// every value the same prompts). n 0: one pool for the whole run.
type valuePools struct {
	n, size  int
	seed     func(value int) uint64
	strategy string
}

// loadValueDatasets loads the run's dataset into *ds: for a sweep of
// synthetic prompts with a fixed --num-dataset-entries, one pool per value
// (value i seeded Seed+i), else the one dataset the run shares.
func loadValueDatasets(ctx context.Context, s *spec.Spec, ds **datasets.Dataset, tok datasets.Tokenizer, log io.Writer) (valuePools, error) {
	l, d := &s.Load, &s.Dataset
	values := max(len(l.Concs), len(l.Rates), 1)
	if values < 2 || d.Entries == 0 || !d.Synthetic() || l.Fixed.On {
		got, err := loadDataset(ctx, s, tok, datasetCount(s), log)
		*ds = got
		return valuePools{}, err
	}
	parts := make([]*datasets.Dataset, values)
	// One dataset line for the stages' pools, which differ by seed only:
	// the first pool's, unwrapped, edited, then wrapped.
	var first bytes.Buffer
	for i := range values {
		w, sv := io.Discard, s.WithSeed(s.ValueSeed(i))
		if i == 0 {
			w, sv.Columns = &first, math.MaxInt
		}
		got, err := loadDataset(ctx, sv, tok, d.Entries, w)
		if err != nil {
			return valuePools{}, err
		}
		parts[i] = got
	}
	head, rest, _ := strings.Cut(first.String(), "\n")
	if seed := fmt.Sprintf(", seed %d → ", s.ValueSeed(0)); strings.Contains(head, seed) {
		head = strings.Replace(head, seed, fmt.Sprintf(", seeds %d to %d → ", s.ValueSeed(0), s.ValueSeed(values-1)), 1) + " per stage"
	} else {
		head += fmt.Sprintf(" (one pool per stage, seeds %d to %d)", s.ValueSeed(0), s.ValueSeed(values-1))
	}
	fmt.Fprint(log, export.Wrap(head+"\n"+rest, s.Columns, 2))
	*ds = datasets.Concat(parts[0].Name, parts[0].Type, parts, valueSuffix)
	strategy := d.Sampling
	if strategy == "" {
		strategy = datasets.DefaultSampling(parts[0].Type)
	}
	return valuePools{n: values, size: d.Entries, seed: s.ValueSeed, strategy: strategy}, nil
}

// valueSuffix names value k's conversations apart from value 0's.
func valueSuffix(k int) string {
	if k == 0 {
		return ""
	}
	return fmt.Sprintf("-v%d", k)
}

// assign points each profile stage at its value's pool (the warmup takes
// the first value's), the pool's conversations taken by the sampling
// strategy, seeded per value.
func (vp valuePools) assign(stages []loadgen.Stage) {
	if vp.n == 0 {
		return
	}
	v := 0
	for i := range stages {
		pool := min(v, vp.n-1)
		if stages[i].Phase == metrics.Profile {
			v++
		}
		base, size := pool*vp.size, vp.size
		pick := func(k int) int { return k }
		if vp.strategy != datasets.SampleSequential {
			pick = datasets.NewSampler(vp.strategy, size, vp.seed(pool)).Pick
		}
		stages[i].Conversation = func(k int) int { return base + pick(k)%size }
	}
}

// aiperfDefaultURL is where an AIPerf command line without --url sends
// its requests.
const aiperfDefaultURL = "localhost:8000"

// defaultServerNote says, when no --url was given and something answers
// at addr (AIPerf's default localhost:8000), that the run still uses the
// embedded mock and how to benchmark that server instead; "" when nothing
// answers or a --url was given. A user who copies an AIPerf line without
// --url would otherwise benchmark the mock without noticing.
func defaultServerNote(t *spec.Target, addr string) string {
	if !t.Mock || t.URL != "" {
		return ""
	}
	d := net.Dialer{Timeout: 300 * time.Millisecond}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return ""
	}
	conn.Close()
	return fmt.Sprintf("note: a server answers at %s (AIPerf's default --url), but no --url was given: this run benchmarks the embedded mock; --url %s benchmarks that server", addr, addr)
}
