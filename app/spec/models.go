package spec

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
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
	return nil
}
