package cmdline

import (
	"net/http"

	"github.com/urfave/cli/v2"
)

// SynthesisConfig is AIPerf's trace synthesis flags.
type SynthesisConfig struct {
	// Synthesis: --synthesis-speedup-ratio, -prefix-len-multiplier,
	// -prompt-len-multiplier, -output-len-multiplier as given ("": 1,
	// unchanged), -prefix-root-multiplier (0 or 1: one tree) and
	// -max-isl, -max-osl (0: none).
	SynthSpeedup, SynthPrefixLen, SynthPromptLen, SynthOutputLen string
	SynthPrefixRoot                                              int
	SynthMaxISL, SynthMaxOSL                                     int
}

// synthesisOptions are the rows of the --synthesis-* flags (flags.go's
// options holds them with the rest).
func synthesisOptions() []option {
	// one is a multiplier: 1 when not given.
	one := func(get func(c *Config) *string) func(c *Config, _ http.Header) any {
		return func(c *Config, _ http.Header) any {
			if v := optionalNumber(*get(c)); v != nil {
				return v
			}
			return 1.0
		}
	}
	return []option{
		{flag: &cli.StringFlag{Hidden: true, Category: catTrace, Name: "synthesis-speedup-ratio", Usage: "trace synthesis: divide the trace's timestamps by this"}, path: "input.synthesis.speedup_ratio",
			field: func(c *Config) any { return &c.SynthSpeedup }, export: one(func(c *Config) *string { return &c.SynthSpeedup })},
		{flag: &cli.StringFlag{Hidden: true, Category: catTrace, Name: "synthesis-prefix-len-multiplier", Usage: "trace synthesis: multiply the shared prefix blocks of every row"}, path: "input.synthesis.prefix_len_multiplier",
			field: func(c *Config) any { return &c.SynthPrefixLen }, export: one(func(c *Config) *string { return &c.SynthPrefixLen })},
		{flag: &cli.IntFlag{Hidden: true, Category: catTrace, Name: "synthesis-prefix-root-multiplier", Usage: "trace synthesis: spread the rows over this many independent prefix trees"}, path: "input.synthesis.prefix_root_multiplier",
			field: func(c *Config) any { return &c.SynthPrefixRoot }, export: func(c *Config, _ http.Header) any { return max(c.SynthPrefixRoot, 1) }},
		{flag: &cli.StringFlag{Hidden: true, Category: catTrace, Name: "synthesis-prompt-len-multiplier", Usage: "trace synthesis: multiply every row's unique (unshared) prompt length"}, path: "input.synthesis.prompt_len_multiplier",
			field: func(c *Config) any { return &c.SynthPromptLen }, export: one(func(c *Config) *string { return &c.SynthPromptLen })},
		{flag: &cli.StringFlag{Hidden: true, Category: catTrace, Name: "synthesis-output-len-multiplier", Usage: "trace synthesis: multiply every row's output length"}, path: "input.synthesis.output_len_multiplier",
			field: func(c *Config) any { return &c.SynthOutputLen }, export: one(func(c *Config) *string { return &c.SynthOutputLen })},
		{flag: &cli.IntFlag{Hidden: true, Category: catTrace, Name: "synthesis-max-isl", Usage: "trace synthesis: leave out rows longer than this many input tokens"}, path: "input.synthesis.max_isl",
			field: func(c *Config) any { return &c.SynthMaxISL }},
		{flag: &cli.IntFlag{Hidden: true, Category: catTrace, Name: "synthesis-max-osl", Usage: "trace synthesis: cap every row's output length at this"}, path: "input.synthesis.max_osl",
			field: func(c *Config) any { return &c.SynthMaxOSL }},
	}
}
