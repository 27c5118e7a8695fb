package profile

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// docLine is a command line copied unchanged from AIPerf's documentation
// (github.com/ai-dynamo/aiperf, Apache-2.0: docs/tutorials and
// docs/cli-options.md, the file named), and what AIPerf means by it, as
// a check of the run surge would make of it.
type docLine struct {
	from, cmd string
	means     func(s *spec.Spec) bool
	// aiperfRefuses, when set, is a line of AIPerf's pages that AIPerf
	// itself refuses (its docs' own slip): surge refuses it too.
	aiperfRefuses string
}

// aiperfDocLines is the held-back set: 47 lines from 15 of AIPerf's pages,
// each run as surge runs a command line (parsed, then checked), never
// edited to suit surge.
var aiperfDocLines = []docLine{
	// tutorials/adaptive-scale.md
	{"adaptive-scale.md", `aiperf profile \
  --url http://localhost:8000/v1/chat/completions \
  --model meta-llama/Llama-3.1-8B-Instruct \
  --endpoint-type chat \
  --streaming \
  --concurrency 400 \
  --benchmark-duration 3600 \
  --adaptive-scale \
  --adaptive-scale-control concurrency:1,400:int \
  --adaptive-scale-assessment-period 60 \
  --adaptive-sustain-duration 1800 \
  --adaptive-scale-sla request_latency:p95:le:30000 \
  --adaptive-scale-sla error_rate:avg:le:0.01`, func(s *spec.Spec) bool {
		a := s.Live.Adaptive
		return a != nil && a.Variable == "concurrency" && a.Min == 1 && a.Max == 400 && a.Period == time.Minute &&
			a.Sustain == 30*time.Minute && len(a.SLAs) == 2
	}, ""},
	{"adaptive-scale.md", `aiperf profile \
  --config adaptive-scale-boundary.yaml \
  --tokenizer builtin \
  --extra-inputs ignore_eos:true \
  --ui none \
  --output-artifact-dir ./adaptive-scale-boundary-artifacts`, func(s *spec.Spec) bool {
		a := s.Live.Adaptive
		return a != nil && a.Variable == "concurrency" && a.Min == 4 && a.Max == 64 && a.Period == 5*time.Second &&
			a.Sustain == 10*time.Second && a.Policy == "fixed_percent_step" && len(a.SLAs) == 2 &&
			s.Dataset.ISL == 128 && s.Dataset.OSL == 16 && strings.HasPrefix(s.Target.URL, "http://127.0.0.1:18000")
	}, ""},
	// tutorials/template-endpoint.md
	{"template-endpoint.md", `aiperf profile \
  --model your-model \
  --url http://localhost:8000/custom-endpoint \
  --endpoint-type template \
  --extra-inputs payload_template:'
  {
    "text": {{ text|tojson }}
  }' \
  --synthetic-input-tokens-mean 100 \
  --output-tokens-mean 50 \
  --concurrency 4 \
  --request-count 20`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Template && s.Endpoint.Jinja != nil && s.Dataset.ISL == 100 && s.Dataset.OSL == 50 &&
			s.Load.RequestCount == 20 && len(s.Load.Concs) == 1 && s.Load.Concs[0] == 4
	}, ""},
	{"template-endpoint.md", `aiperf profile \
  --model embedding-model \
  --url http://localhost:8000/embed \
  --endpoint-type template \
  --extra-inputs payload_template:'
    {
      "input": {{ texts|tojson }},
      "model": {{ model|tojson }}
    }' \
  --extra-inputs response_field:'embeddings' \
  --synthetic-input-tokens-mean 50 \
  --concurrency 8 \
  --request-count 100`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Template && s.Endpoint.Jinja != nil && s.Endpoint.ResponseField == "embeddings" && s.Load.RequestCount == 100
	}, ""},
	{"template-endpoint.md", `aiperf profile \
  --model nv-embed-v2 \
  --url http://localhost:8000/embeddings \
  --endpoint-type template \
  --extra-inputs payload_template:nv-embedqa \
  --synthetic-input-tokens-mean 100 \
  --concurrency 4 \
  --request-count 50`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Template && s.Endpoint.Jinja != nil && s.Load.RequestCount == 50
	}, ""},
	{"template-endpoint.md", `aiperf profile \
  --model custom-llm \
  --url http://localhost:8000/generate \
  --endpoint-type template \
  --extra-inputs payload_template:./chat_template.json \
  --extra-inputs response_field:'generated_text' \
  --streaming \
  --synthetic-input-tokens-mean 200 \
  --output-tokens-mean 100 \
  --concurrency 10`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Template && s.Endpoint.Jinja != nil && s.Endpoint.ResponseField == "generated_text" && s.Streaming
	}, ""},
	{"template-endpoint.md", `aiperf profile \
  --model vision-model \
  --url http://localhost:8000/analyze \
  --endpoint-type template \
  --extra-inputs payload_template:'
    {
      "text": {{ text|tojson }},
      "image": {{ image|tojson }}
    }' \
  --input-file ./multimodal_dataset.jsonl \
  --concurrency 2`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Template && s.Dataset.InputFile == "./multimodal_dataset.jsonl"
	}, ""},
	// tutorials/spec-decode-metrics.md: nothing to ask; the acceptance
	// comes with the answers.
	{"spec-decode-metrics.md", `aiperf profile \
    --model meta-llama/Llama-3.1-8B-Instruct \
    --endpoint-type chat \
    --streaming \
    --url localhost:8000 \
    --synthetic-input-tokens-mean 512 \
    --output-tokens-mean 256 \
    --concurrency 16 \
    --export-level records`, func(s *spec.Spec) bool {
		return s.Streaming && s.Dataset.ISL == 512 && s.Dataset.OSL == 256 && s.Load.Concs[0] == 16
	}, ""},
	// tutorials/goodput.md
	{"goodput.md", `aiperf profile \
    -m Qwen/Qwen3-0.6B \
    --endpoint-type chat \
    --streaming \
    --url localhost:8000 \
    --request-count 20 \
    --goodput "time_to_first_token:100 inter_token_latency:3.40"`, func(s *spec.Spec) bool {
		return len(s.Goodput) == 2 && s.Load.RequestCount == 20
	}, ""},
	// tutorials/openai-text-endpoints.md
	{"openai-text-endpoints.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --endpoint-type chat \
    --endpoint /v1/chat/completions \
    --streaming \
    --synthetic-input-tokens-mean 100 \
    --synthetic-input-tokens-stddev 0 \
    --output-tokens-mean 200 \
    --output-tokens-stddev 0 \
    --url localhost:8000 \
    --request-count 20`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Chat && s.Dataset.ISL == 100 && s.Dataset.OSL == 200 && s.Load.RequestCount == 20
	}, ""},
	{"openai-text-endpoints.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --endpoint-type chat \
    --endpoint /v1/chat/completions \
    --streaming \
    --input-file inputs.jsonl \
    --custom-dataset-type single_turn \
    --url localhost:8000 \
    --request-count 10`, func(s *spec.Spec) bool {
		return s.Dataset.InputFile == "inputs.jsonl" && s.Dataset.Type == "single_turn" && s.Load.RequestCount == 10
	}, ""},
	{"openai-text-endpoints.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --endpoint-type completions \
    --endpoint /v1/completions \
    --synthetic-input-tokens-mean 64 \
    --synthetic-input-tokens-stddev 4 \
    --output-tokens-mean 128 \
    --output-tokens-stddev 4 \
    --url localhost:8000 \
    --request-count 32`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Completions && s.Dataset.ISLStddev == 4 && s.Dataset.OSL == 128 && s.Load.RequestCount == 32
	}, ""},
	{"openai-text-endpoints.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --endpoint-type completions \
    --endpoint /v1/completions \
    --input-file inputs.jsonl \
    --custom-dataset-type single_turn \
    --url localhost:8000 \
    --request-count 10`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Completions && s.Dataset.InputFile == "inputs.jsonl"
	}, ""},
	// tutorials/request-cancellation.md
	{"request-cancellation.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --endpoint-type chat \
    --endpoint /v1/chat/completions \
    --streaming \
    --url localhost:8000 \
    --request-cancellation-rate 10 \
    --request-cancellation-delay 0.5 \
    --synthetic-input-tokens-mean 800 \
    --synthetic-input-tokens-stddev 80 \
    --output-tokens-mean 400 \
    --output-tokens-stddev 40 \
    --concurrency 8 \
    --request-count 50 \
    --warmup-request-count 5`, func(s *spec.Spec) bool {
		return s.Load.CancellationRate == 10 && s.Load.CancellationDelay == 500*time.Millisecond && s.Load.Warmup.Count == 5
	}, ""},
	{"request-cancellation.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --endpoint-type chat \
    --endpoint /v1/chat/completions \
    --streaming \
    --url localhost:8000 \
    --request-cancellation-rate 50 \
    --request-cancellation-delay 1.0 \
    --synthetic-input-tokens-mean 1200 \
    --output-tokens-mean 600 \
    --concurrency 10 \
    --request-count 40`, func(s *spec.Spec) bool {
		return s.Load.CancellationRate == 50 && s.Load.CancellationDelay == time.Second
	}, ""},
	{"request-cancellation.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --endpoint-type chat \
    --endpoint /v1/chat/completions \
    --streaming \
    --url localhost:8000 \
    --request-cancellation-rate 30 \
    --request-cancellation-delay 0.0 \
    --synthetic-input-tokens-mean 500 \
    --output-tokens-mean 100 \
    --concurrency 15 \
    --request-count 60`, func(s *spec.Spec) bool {
		return s.Load.CancellationRate == 30 && s.Load.CancellationDelay == 0 && s.Load.RequestCount == 60
	}, ""},
	// tutorials/prefill-concurrency.md
	{"prefill-concurrency.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --endpoint-type chat \
    --streaming \
    --url localhost:8000 \
    --concurrency 30 \
    --prefill-concurrency 3 \
    --synthetic-input-tokens-mean 16000 \
    --output-tokens-mean 500 \
    --request-count 100`, func(s *spec.Spec) bool {
		return s.Load.PrefillConcurrency == 3 && s.Load.Concs[0] == 30
	}, ""},
	{"prefill-concurrency.md", `aiperf profile \
    --model Qwen/Qwen2.5-7B-Instruct \
    --endpoint-type chat \
    --streaming \
    --url localhost:8000 \
    --concurrency 50 \
    --prefill-concurrency 5 \
    --prefill-concurrency-ramp-duration 30 \
    --synthetic-input-tokens-mean 32000 \
    --output-tokens-mean 200 \
    --benchmark-duration 120`, func(s *spec.Spec) bool {
		return s.Load.PrefillConcurrency == 5 && s.Load.PrefillRamp == 30*time.Second && s.Load.Duration == 2*time.Minute
	}, ""},
	{"prefill-concurrency.md", `aiperf profile \
    --model Qwen/Qwen2.5-7B-Instruct \
    --endpoint-type chat \
    --streaming \
    --url localhost:8000 \
    --request-rate 10 \
    --concurrency 100 \
    --prefill-concurrency 10 \
    --synthetic-input-tokens-mean 8000 \
    --output-tokens-mean 300 \
    --benchmark-duration 60`, func(s *spec.Spec) bool {
		return len(s.Load.Rates) == 1 && s.Load.Rates[0] == 10 && s.Load.Concs[0] == 100 && s.Load.PrefillConcurrency == 10
	}, ""},
	// tutorials/adaptive-search.md: a Bayesian search, which surge
	// refuses (naming surge search --slo): the one line of the set not
	// run as AIPerf means it.
	{"adaptive-search.md", `aiperf profile \
    --model meta-llama/Llama-3.1-8B-Instruct \
    --url http://vllm.internal:8000 \
    --search-space "concurrency:1,1000:int" \
    --search-metric output_token_throughput \
    --search-direction maximize \
    --search-max-iterations 25 \
    --search-initial-points 5 \
    --search-random-seed 42 \
    --num-profile-runs 3 \
    --request-count 1000 \
    --warmup-request-count 50`, nil, ""},
	// tutorials/ramping.md
	{"ramping.md", `aiperf profile \
    --model your-model \
    --url localhost:8000 \
    --concurrency 100 \
    --concurrency-ramp-duration 30 \
    --request-count 1000`, func(s *spec.Spec) bool {
		return s.Load.ConcurrencyRamp == 30*time.Second && s.Load.Concs[0] == 100
	}, ""},
	{"ramping.md", `aiperf profile \
    --model your-model \
    --url localhost:8000 \
    --request-rate 100 \
    --request-rate-ramp-duration 60 \
    --duration 120`, nil, "AIPerf has no --duration (its flag is --benchmark-duration)"},
	{"ramping.md", `aiperf profile \
    --model your-model \
    --url localhost:8000 \
    --request-rate 200 \
    --request-rate-ramp-duration 30 \
    --concurrency 100 \
    --concurrency-ramp-duration 30 \
    --duration 120`, nil, "AIPerf has no --duration (its flag is --benchmark-duration)"},
	{"ramping.md", `aiperf profile \
    --model your-model \
    --url localhost:8000 \
    --concurrency 100 \
    --prefill-concurrency 20 \
    --prefill-concurrency-ramp-duration 20 \
    --synthetic-input-tokens-mean 8000`, nil, "AIPerf requires --streaming with --prefill-concurrency"},
	{"ramping.md", `aiperf profile \
    --model your-model \
    --url localhost:8000 \
    --concurrency 500 \
    --concurrency-ramp-duration 60 \
    --duration 300`, nil, "AIPerf has no --duration (its flag is --benchmark-duration)"},
	{"ramping.md", `aiperf profile \
    --model your-model \
    --url localhost:8000 \
    --concurrency 50 \
    --prefill-concurrency 5 \
    --prefill-concurrency-ramp-duration 30 \
    --synthetic-input-tokens-mean 32000`, nil, "AIPerf requires --streaming with --prefill-concurrency"},
	{"ramping.md", `aiperf profile \
    --model your-model \
    --url localhost:8000 \
    --request-rate 500 \
    --request-rate-ramp-duration 120 \
    --concurrency 200 \
    --concurrency-ramp-duration 120 \
    --duration 180`, nil, "AIPerf has no --duration (its flag is --benchmark-duration)"},
	// tutorials/user-centric-timing.md
	{"user-centric-timing.md", `aiperf profile \
    --model your-model \
    --url localhost:8000 \
    --endpoint-type chat \
    --streaming \
    --user-centric-rate 1.0 \
    --num-users 15 \
    --session-turns-mean 20 \
    --shared-system-prompt-length 1000 \
    --user-context-prompt-length 20000 \
    --synthetic-input-tokens-mean 26 \
    --osl 100 \
    --num-dataset-entries 1000 \
    --benchmark-duration 100`, func(s *spec.Spec) bool {
		return s.Load.UserCentricRate == 1 && s.Load.NumUsers == 15 && s.Dataset.TurnsMean == 20 &&
			s.Dataset.SharedSystemPromptLength == 1000 && s.Dataset.UserContextLength == 20000 && s.Dataset.ISL == 26 && s.Dataset.OSL == 100
	}, ""},
	{"user-centric-timing.md", `aiperf profile \
    --user-centric-rate 1.0 \
    --num-users 15 \
    --concurrency 15 \
    --model your-model \
    --url localhost:8000`, nil, ""},
	{"user-centric-timing.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --url localhost:8000 \
    --endpoint-type chat \
    --streaming \
    --user-centric-rate 1.0 \
    --num-users 15 \
    --session-turns-mean 20 \
    --shared-system-prompt-length 1000 \
    --user-context-prompt-length 20000 \
    --synthetic-input-tokens-mean 26 \
    --osl 100 \
    --num-dataset-entries 1000 \
    --benchmark-duration 100 \
    --random-seed 42`, func(s *spec.Spec) bool {
		return s.Load.UserCentricRate == 1 && s.Seed() == 42
	}, ""},
	{"user-centric-timing.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --url localhost:8000 \
    --endpoint-type chat \
    --streaming \
    --user-centric-rate 4.0 \
    --num-users 15 \
    --session-turns-mean 20 \
    --shared-system-prompt-length 1000 \
    --user-context-prompt-length 20000 \
    --synthetic-input-tokens-mean 26 \
    --osl 100 \
    --num-dataset-entries 1000 \
    --benchmark-duration 100`, func(s *spec.Spec) bool { return s.Load.UserCentricRate == 4 }, ""},
	{"user-centric-timing.md", `aiperf profile \
    --model Qwen/Qwen3-0.6B \
    --url localhost:8000 \
    --endpoint-type chat \
    --streaming \
    --user-centric-rate 0.5 \
    --num-users 15 \
    --session-turns-mean 20 \
    --shared-system-prompt-length 1000 \
    --user-context-prompt-length 20000 \
    --synthetic-input-tokens-mean 26 \
    --osl 100 \
    --num-dataset-entries 1000 \
    --benchmark-duration 300`, func(s *spec.Spec) bool {
		return s.Load.UserCentricRate == 0.5 && s.Load.Duration == 5*time.Minute
	}, ""},
	// tutorials/multi-url-load-balancing.md
	{"multi-url-load-balancing.md", `aiperf profile --model llama \
    --url http://server1:8000 \
    --url http://server2:8000 \
    --request-rate 20 \
    --request-count 100`, func(s *spec.Spec) bool { return len(s.Target.URLs) == 2 && s.Load.Rates[0] == 20 }, ""},
	{"multi-url-load-balancing.md", `aiperf profile --model llama \
    --url http://localhost:8000 \
    --url http://localhost:8001 \
    --url http://localhost:8002 \
    --url http://localhost:8003 \
    --concurrency 32 \
    --benchmark-duration 60`, func(s *spec.Spec) bool { return len(s.Target.URLs) == 4 && s.Load.Concs[0] == 32 }, ""},
	{"multi-url-load-balancing.md", `aiperf profile --model llama \
    --url http://server1:8000 \
    --url http://server2:8000 \
    --url-strategy round_robin \
    --request-count 100`, func(s *spec.Spec) bool { return len(s.Target.URLs) == 2 }, ""},
	// tutorials/timeslices.md: no --url, localhost:8000 to AIPerf
	// (surge's embedded mock, saying so when a server answers there).
	{"timeslices.md", `aiperf profile \
  --model Qwen/Qwen3-0.6B \
  --benchmark-duration 60 \
  --slice-duration 10`, func(s *spec.Spec) bool {
		return s.Load.Duration == time.Minute && s.Exports.Slice == 10*time.Second
	}, ""},
	// the search recipes (docs/sweeping/search-recipes.md)
	{"search-recipes.md", `aiperf profile --model my-model --url http://infer.example.com --streaming \
  --search-recipe max-concurrency-under-sla --ttft-sla-ms 200`, func(s *spec.Spec) bool {
		return s.Live.Search != nil && s.Live.Search.Recipe == "max-concurrency-under-sla" && len(s.Live.Search.SLAs) == 1
	}, ""},
	{"search-recipes.md", `aiperf profile --model my-model --url http://infer.example.com --streaming \
  --search-recipe max-concurrency-under-sla --search-style monotonic --ttft-sla-ms 200`, func(s *spec.Spec) bool {
		return s.Live.Search != nil && s.Live.Search.Style == "monotonic"
	}, ""},
	// tutorials/embeddings.md
	{"embeddings.md", `aiperf profile \
    --model BAAI/bge-small-en-v1.5 \
    --endpoint-type embeddings \
    --endpoint /v1/embeddings \
    --synthetic-input-tokens-mean 100 \
    --synthetic-input-tokens-stddev 0 \
    --url localhost:8000 \
    --request-count 20 \
    --concurrency 4`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Embeddings && s.Dataset.ISL == 100 && s.Load.RequestCount == 20
	}, ""},
	{"embeddings.md", `aiperf profile \
    --model BAAI/bge-small-en-v1.5 \
    --endpoint-type embeddings \
    --endpoint /v1/embeddings \
    --input-file inputs.jsonl \
    --custom-dataset-type single_turn \
    --url localhost:8000 \
    --request-count 5`, func(s *spec.Spec) bool {
		return s.Endpoint.Kind == endpoint.Embeddings && s.Dataset.InputFile == "inputs.jsonl" && s.Load.RequestCount == 5
	}, ""},
	// cli-options.md, aiperf profile's examples
	{"cli-options.md", `aiperf profile --model Qwen/Qwen3-0.6B --url localhost:8000 --endpoint-type chat --streaming`, func(s *spec.Spec) bool {
		return s.Streaming && s.Endpoint.Kind == endpoint.Chat
	}, ""},
	{"cli-options.md", `aiperf profile --model your_model --url localhost:8000 --concurrency 10 --request-count 100`, func(s *spec.Spec) bool {
		return s.Load.Concs[0] == 10 && s.Load.RequestCount == 100
	}, ""},
	{"cli-options.md", `aiperf profile --model your_model --url localhost:8000 --request-rate 5.0 --benchmark-duration 60`, func(s *spec.Spec) bool {
		return s.Load.Rates[0] == 5 && s.Load.Duration == time.Minute
	}, ""},
	{"cli-options.md", `aiperf profile --model your_model --url localhost:8000 --benchmark-duration 300 --benchmark-grace-period 30`, nil, ""},
	{"cli-options.md", `aiperf profile --model your_model --url localhost:8000 --input-file trace.jsonl --fixed-schedule`, func(s *spec.Spec) bool {
		return s.Load.Fixed.On && s.Dataset.InputFile == "trace.jsonl"
	}, ""},
	{"cli-options.md", `aiperf profile --model your_model --url localhost:8000 --public-dataset sharegpt --num-sessions 50`, func(s *spec.Spec) bool {
		return s.Dataset.Public == "sharegpt" && s.Load.ConversationNum == 50
	}, ""},
	{"cli-options.md", `aiperf profile --model your_model --url localhost:8000 --goodput "request_latency:250 inter_token_latency:10"`, func(s *spec.Spec) bool {
		return len(s.Goodput) == 2
	}, ""},
}

// TestAIPerfDocumentedLines runs the held-back set: every line parses as
// surge parses a command line, unchanged, and does what AIPerf's
// documentation says it does; one (a Bayesian search) is refused with
// its reason. The files the lines name are written in a folder of their
// own, as the pages write them.
func TestAIPerfDocumentedLines(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for name, body := range map[string]string{
		// adaptive-scale.md's working boundary example, as it gives it.
		"adaptive-scale-boundary.yaml": `schemaVersion: "2.0"

benchmark:
  model: deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct
  endpoint:
    url: http://127.0.0.1:18000/v1/chat/completions
    type: chat
    streaming: true
  dataset:
    type: synthetic
    entries: 1000
    prompts:
      isl: 128
      osl: 16
  phases:
    - name: profiling
      type: concurrency
      concurrency: 4
      duration: 45
      adaptive_scale:
        enabled: true
        control:
          variable: concurrency
          min: 4
          max: 64
        assessment_period: 5
        min_completed_requests: 5
        sustain_duration: 10
        strategy:
          type: ramp_until_fail
          step_policy: fixed_percent_step
          step_percent: 100
      sla:
        request_latency:
          p95:
            le: 250
        error_rate:
          avg:
            le: 0.01
`,
		// template-endpoint.md's chat_template.json.
		"chat_template.json": `{
  "model": {{ model|tojson }},
  "prompt": {{ text|tojson }},
  "max_new_tokens": {{ max_tokens|tojson }},
  "stream": {{ stream|lower }}
}
`,
		"multimodal_dataset.jsonl": `{"text": "What is in this image?", "image": "https://example.com/a.png"}` + "\n",
		// openai-text-endpoints.md's inputs.jsonl.
		"inputs.jsonl": `{"texts": ["Hello!"]}` + "\n" + `{"texts": ["Tell me a joke."]}` + "\n",
		"trace.jsonl":  `{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}` + "\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meant, refused, aiperfToo := 0, 0, 0
	for i, l := range aiperfDocLines {
		args := apptest.ShellWords(t, l.cmd)
		if len(args) < 2 || args[0] != "aiperf" || args[1] != "profile" {
			t.Fatalf("line %d (%s) is not an aiperf profile line", i, l.from)
		}
		c, err := cmdline.ParseProfile(args[2:]...)
		var s *spec.Spec
		if err == nil {
			s, err = spec.Parse(c)
		}
		switch {
		case l.aiperfRefuses != "" && err != nil:
			aiperfToo++
			meant++
		case l.aiperfRefuses != "":
			t.Errorf("line %d (%s): AIPerf refuses it (%s), surge ran it", i, l.from, l.aiperfRefuses)
		case err != nil && l.from == "adaptive-search.md":
			refused++
			if !strings.Contains(err.Error(), "surge search") {
				t.Errorf("line %d (%s): refused without saying what to use instead: %v", i, l.from, err)
			}
		case err != nil:
			t.Errorf("line %d (%s): %v", i, l.from, err)
		case l.means != nil && !l.means(s):
			t.Errorf("line %d (%s) does not mean what AIPerf says it does:\n%s", i, l.from, l.cmd)
		default:
			meant++
		}
	}
	// Of the lines AIPerf itself runs, at least 40, all but one run as
	// it means them.
	if n := len(aiperfDocLines) - aiperfToo; n < 40 || meant-aiperfToo < n-1 {
		t.Errorf("%d of the %d lines AIPerf runs run as AIPerf means them (%d refused), want at least %d of at least 40", meant-aiperfToo, n, refused, n-1)
	}
	t.Logf("%d of %d AIPerf documented lines run as AIPerf means them (%d of them lines AIPerf refuses too); %d refused with its reason", meant, len(aiperfDocLines), aiperfToo, refused)
}
