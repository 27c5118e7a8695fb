package metrics

import "math"

// ServerTokens are the token counts an inference server's own /metrics
// counters gave over the run (their increase between the first and the
// last scrape), as the composer reads them from the telemetry: nil for a
// count the server does not export.
type ServerTokens struct {
	Prompt, Output *float64
	// CachedPrompt are prompt tokens the server served from its prefix
	// cache (SGLang's cached_tokens, vLLM's prefix-cache hits).
	CachedPrompt *float64
	// Families names the servers that counted (vllm, llamacpp, …).
	Families []string
	// WithWarmup is set when the counters' window covered the warmup
	// requests too, which the client's side then counts as well.
	WithWarmup bool
}

// TokenComparison is the server's count of the run's tokens beside
// surge's: AIPerf has no such thing; the summary export keeps both sides
// under server_token_counts and the console prints one line of them.
//
// Surge's side is what it sent and read: the prompt tokens of every
// request (the failed ones' too: the server counted their prompts), the
// output tokens of the successful ones (OSL), and the prompt tokens its
// responses' usage said were cached. Servers count their own way:
// llama.cpp counts only the prompt tokens it evaluated (not those its
// cache reused) and the generated tokens of completed requests; vLLM and
// SGLang every token, aborted requests' too. A gap of a few percent is a
// chat template or closing tokens; a large one is worth a look.
type TokenComparison struct {
	Server ServerTokens
	// ClientPrompt and ClientOutput are surge's counts (NaN: none);
	// ClientCachedPrompt the usage's cached prompt tokens (NaN: no
	// response said).
	ClientPrompt, ClientOutput, ClientCachedPrompt float64
	// Failed counts the requests that failed, whose output surge does not
	// count and the server may have.
	Failed int64
}

// CompareServerTokens sets the server's token counts beside the run's own
// (s.ServerTokens, which the exports show); a server without token
// counters leaves it nil.
func (s *Summary) CompareServerTokens(t ServerTokens) {
	if t.Prompt == nil && t.Output == nil {
		s.ServerTokens = nil
		return
	}
	c := &TokenComparison{Server: t, ClientPrompt: math.NaN(), ClientOutput: math.NaN(), ClientCachedPrompt: math.NaN(),
		Failed: int64(s.Run[ErrorRequestCount])}
	sum := func(tags ...Tag) float64 {
		total, seen := 0.0, false
		for _, sm := range []*Summary{s, s.Warmup} {
			if sm == nil || (sm == s.Warmup && !t.WithWarmup) {
				continue
			}
			for _, tag := range tags {
				if v, ok := sm.Run[tag]; ok {
					total, seen = total+v, true
				}
			}
		}
		if !seen {
			return math.NaN()
		}
		return total
	}
	c.ClientPrompt = sum(TotalISL, TotalErrorISL)
	c.ClientOutput = sum(TotalOSL)
	c.ClientCachedPrompt = sum(TotalUsageCacheRead)
	if t.WithWarmup && s.Warmup != nil {
		c.Failed += int64(s.Warmup.Run[ErrorRequestCount])
	}
	s.ServerTokens = c
}

// DiffPct is client's count off the server's, in percent of the
// server's (NaN when either is unknown or the server's is 0).
func DiffPct(client float64, server *float64) float64 {
	if server == nil || *server == 0 || math.IsNaN(client) {
		return math.NaN()
	}
	return 100 * (client - *server) / *server
}
