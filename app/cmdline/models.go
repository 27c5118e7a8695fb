package cmdline

import "github.com/urfave/cli/v2"

// ModelConfig is how a run that names several models shares its requests
// among them: weights for --model-selection-strategy weighted, and the
// LoRA adapters among the names; and the embedded mock's draft model.
type ModelConfig struct {
	// ModelWeights is --model-weights: one weight per --model, in order
	// ("0.7,0.3"), for --model-selection-strategy weighted.
	ModelWeights string
	// LoRA is --lora ADAPTER=BASE: a --model name that is a LoRA adapter
	// of BASE (its requests name the adapter; its results say its base).
	LoRA []string
	// MockSpecAcceptance and MockSpecTokens give the embedded mock a
	// draft model (--mock-spec-acceptance, --mock-spec-tokens).
	MockSpecAcceptance float64
	MockSpecTokens     int
}

// modelOptions are the rows of those flags (flags.go's options holds them
// with the rest).
func modelOptions() []option {
	return []option{
		{flag: &cli.StringFlag{Category: catTarget, Hidden: true, Name: "model-weights", Usage: "with --model-selection-strategy weighted: each --model's share of the requests, in order, summing to 1 (\"0.7,0.3\"; AIPerf's models.items[].weight)"}, path: "endpoint.model_weights",
			field: func(c *Config) any { return &c.ModelWeights }},
		{flag: &cli.StringSliceFlag{Category: catTarget, Hidden: true, Name: "lora", Usage: "ADAPTER=BASE: the --model name ADAPTER is a LoRA adapter of BASE (requests name the adapter, its results say its base; repeatable)"}, path: "endpoint.lora_adapters",
			field: func(c *Config) any { return &c.LoRA }, many: true},
		{flag: &cli.Float64Flag{Category: catTarget, Hidden: true, Name: "mock-spec-acceptance", Usage: "the embedded mock (no --url) simulates a draft model: each draft token accepted with this probability (0–1), reported as vLLM's per-request spec-decode metrics"}, path: "mock.spec_acceptance",
			field: func(c *Config) any { return &c.MockSpecAcceptance }},
		{flag: &cli.IntFlag{Category: catTarget, Hidden: true, Name: "mock-spec-tokens", Usage: "the embedded mock's draft tokens per verify step (default 4 with --mock-spec-acceptance)"}, path: "mock.spec_tokens",
			field: func(c *Config) any { return &c.MockSpecTokens }},
	}
}
