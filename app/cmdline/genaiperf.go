package cmdline

// genaiPerf are GenAI-Perf's `profile` flags that neither surge nor AIPerf
// takes (its others surge takes by the same names), each with what to use
// instead: an unknown flag that is one of these says so, not just "unknown".
var genaiPerf = map[string]string{
	"measurement-interval":             "--benchmark-duration SECONDS or --request-count N bounds each stage (GenAI-Perf's window is in ms)",
	"p":                                "--benchmark-duration SECONDS or --request-count N bounds each stage (GenAI-Perf's -p is its measurement window, in ms)",
	"stability-percentage":             "each stage runs a fixed --request-count or --benchmark-duration; --num-profile-runs N gives confidence intervals",
	"s":                                "each stage runs a fixed --request-count or --benchmark-duration (GenAI-Perf's -s is its stability percentage)",
	"service-kind":                     "surge sends the OpenAI API, AIPerf's default: leave it out; --endpoint-type picks chat, completions, embeddings, …",
	"backend":                          "surge speaks OpenAI-compatible HTTP, not Triton's backends: --endpoint-type picks the API",
	"output-tokens-mean-deterministic": "--extra-inputs ignore_eos:true makes every answer exactly --osl tokens (vLLM, SGLang)",
	"num-system-prompts":               "--shared-system-prompt-length N gives every conversation one system prompt of N tokens",
	"system-prompt-length":             "--shared-system-prompt-length N gives every conversation one system prompt of N tokens",
	"generate-plots":                   "--auto-plot writes the charts as PNG files into plots/; surge report DIR writes them as HTML",
	"server-metrics-url":               "--server-metrics URL scrapes it (the target's own /metrics is scraped without a flag)",
}
