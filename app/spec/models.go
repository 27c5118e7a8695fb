package spec

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/examples/mockserver"
)

// parseModels reads how several models share the requests: the weights
// of --model-selection-strategy weighted (one per model, summing to 1 as
// AIPerf requires) and the LoRA adapters among the names (--lora
// ADAPTER=BASE).
func parseModels(s *Spec, c *cmdline.Config) error {
	t := &s.Target
	switch {
	case c.ModelSelection == "weighted" && c.ModelWeights == "":
		return cmdline.Usagef("--model-selection-strategy weighted needs --model-weights, one weight per --model (\"0.7,0.3\"; AIPerf's models.items[].weight)")
	case c.ModelSelection != "weighted" && c.ModelWeights != "":
		return cmdline.Usagef("--model-weights shares the requests by weight: give --model-selection-strategy weighted")
	}
	if c.ModelWeights != "" {
		parts := strings.Split(c.ModelWeights, ",")
		if len(parts) != len(t.Models) {
			return cmdline.Usagef("--model-weights has %d weights for %d models: give one per --model, in order", len(parts), len(t.Models))
		}
		sum := 0.0
		for _, p := range parts {
			w, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || w < 0 || w > 1 || math.IsNaN(w) {
				return cmdline.Usagef("--model-weights %q: each weight is between 0 and 1", p)
			}
			t.Weights = append(t.Weights, w)
			sum += w
		}
		if sum < 0.99 || sum > 1.01 {
			return cmdline.Usagef("--model-weights sum to %g: AIPerf's weights sum to 1", sum)
		}
	}
	for _, l := range c.LoRA {
		adapter, base, ok := strings.Cut(l, "=")
		adapter, base = strings.TrimSpace(adapter), strings.TrimSpace(base)
		if !ok || adapter == "" || base == "" {
			return cmdline.Usagef("--lora %q: want ADAPTER=BASE (the adapter's name, as --model gives it, and its base model)", l)
		}
		if !slices.Contains(t.Models, adapter) {
			return cmdline.Usagef("--lora %s: %s is not one of the --model names (a request names the adapter as its model)", l, adapter)
		}
		if t.LoRA == nil {
			t.LoRA = map[string]string{}
		}
		t.LoRA[adapter] = base
	}
	return parseMockSpec(t, c)
}

// parseMockSpec reads the embedded mock's draft model: a token count
// alone, or an acceptance rate (4 tokens a step unless told).
func parseMockSpec(t *Target, c *cmdline.Config) error {
	r, k := c.MockSpecAcceptance, c.MockSpecTokens
	if !(r >= 0 && r <= 1) || k < 0 || k > mockserver.MaxSpecTokens {
		return cmdline.Usagef("--mock-spec-acceptance %g (want 0–1) and --mock-spec-tokens %d (want 0–%d)", r, k, mockserver.MaxSpecTokens)
	}
	if (r > 0 || k > 0) && !t.Mock {
		return cmdline.Usagef("--mock-spec-acceptance and --mock-spec-tokens give the embedded mock a draft model: drop --url, or drop them")
	}
	if r > 0 && k == 0 {
		k = 4
	}
	t.MockSpecAcceptance, t.MockSpecTokens = r, k
	return nil
}
