// Package mockserver is an OpenAI-compatible inference server that needs no
// GPU and no model, so that surge can be run, tested and demonstrated
// anywhere. It serves POST /v1/chat/completions and /v1/completions
// (streaming and not), GET /v1/models, /health, /metrics (vLLM's metric
// names) and /stats (the mock's own view of its latency).
//
// Streams are shaped the way vLLM sends them: a role-only first chunk, one
// server-sent event per chunk of tokens, a final chunk carrying
// finish_reason, an optional usage-only chunk, then "data: [DONE]".
//
// Agent traffic (tools.go): a request that offers tools is answered with a
// call of one of them for a seeded fraction of answers (Config.ToolCallRate),
// streamed in its API's shape (chat, Responses, Anthropic Messages); tool
// calls and results sent back are checked and counted (Stats), a result for
// a call the conversation never made refused with 400. Config.PrefixCache
// reports cached prompt tokens, Config.MaxModelLen refuses prompts past the
// window as vLLM does.
//
// Token i of a request is due at arrival+TTFT+i*ITL, on absolute deadlines
// with one timer per request, so a slow write never drifts the schedule and
// ten thousand idle streams cost ten thousand goroutines and timers, nothing
// more.
//
// Token counting is an approximation on purpose: every output token is one
// English word with a leading space (" the", " river"), which BPE
// tokenizers count as about one token each, and a prompt's token count is
// the number of whitespace-separated words in it (token-id prompts count one
// per id). Real tokenizers will disagree a little on prompts; that is the
// price of having no model.
package mockserver
