package cmdline

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
)

// Config is everything `surge profile` was asked to do. Flag names are in
// the comments; durations are already converted from the flags' units.
type Config struct {
	// Models is --model (-m, --model-names): one, or several that share
	// the requests by ModelSelection (--model-selection-strategy). Model
	// is the first: prepare fills either from the other.
	Models         []string
	Model          string
	ModelSelection string
	// ModelFromServer is set when no --model was given: the run asks the
	// server's /v1/models for the name (Model keeps the fallback).
	ModelFromServer bool
	// URLs is --url: one, or several that take the requests round-robin;
	// URL is the first ("" or "mock": start the embedded mock server).
	URLs []string
	URL  string
	// SkipPreflight is --skip-preflight: no check of the target before
	// the run (it connects, sends one small request and learns which
	// output-cap field the server honours).
	SkipPreflight bool
	// WaitTimeout, WaitMode and WaitInterval are --wait-for-model-*: probe
	// each server until it serves the model before the run (0: do not).
	WaitTimeout, WaitInterval time.Duration
	WaitMode                  string
	EndpointType              string // --endpoint-type
	Streaming                 bool   // --streaming
	// CustomEndpoint is --endpoint / --custom-endpoint: the URL path.
	CustomEndpoint   string
	EndpointTemplate string // --endpoint-template (inline, or @file)
	ResponseField    string // --response-field
	ReasoningFormat  string // --reasoning-format
	ConnectionReuse  string // --connection-reuse-strategy
	SessionHeader    string // --session-header
	// RankingsPassagesMean/Stddev: passages per rankings query when the
	// dataset gives none (--rankings-passages-mean/-stddev), of
	// RankingsPassageTokens/Stddev tokens each
	// (--rankings-passages-prompt-token-mean/-stddev).
	RankingsPassagesMean, RankingsPassagesStddev       int
	RankingsPassageTokens, RankingsPassageTokensStddev int
	// RankingsQueryTokens/Stddev: a synthetic rankings query's length
	// (--rankings-query-prompt-token-mean/-stddev; 0: --isl, --isl-stddev).
	RankingsQueryTokens, RankingsQueryTokensStddev int

	// FollowRedirects, MaxResponseMiB (0: 64) and ConnectionRetries ("0"
	// or "1"; "": 1) are the network edges (docs/network-edges.md):
	// --follow-redirects, --max-response-mib, --connection-retries.
	FollowRedirects   bool
	MaxResponseMiB    int
	ConnectionRetries string

	// Concurrency and RequestRate are single values or stage lists
	// ("1,2,4,8"); at most one of them may list several stages (a sweep).
	Concurrency     string  // --concurrency
	RequestRate     string  // --request-rate
	ArrivalPattern  string  // --arrival-pattern
	Smoothness      float64 // --arrival-smoothness
	SmoothnessSet   bool
	ConcurrencyRamp time.Duration // --concurrency-ramp-duration
	RateRamp        time.Duration // --request-rate-ramp-duration
	KneeFactor      float64       // --knee-factor

	FixedSchedule bool // --fixed-schedule
	// NoFixedSchedule keeps the load flags for a trace with timestamps
	// (--no-fixed-schedule).
	NoFixedSchedule bool
	AutoOffset      bool          // --fixed-schedule-auto-offset
	StartOffset     time.Duration // --fixed-schedule-start-offset
	EndOffset       time.Duration // --fixed-schedule-end-offset (0: none)

	UserCentricRate float64       // --user-centric-rate
	NumUsers        int           // --num-users
	TurnDelayMean   time.Duration // --conversation-turn-delay-mean
	TurnDelayStd    time.Duration // --conversation-turn-delay-stddev
	TurnDelayRatio  float64       // --conversation-turn-delay-ratio (multiplies every turn delay)
	// NoTurnDelays is set when --conversation-turn-delay-ratio 0 was
	// given: every turn delay removed, as AIPerf's ratio multiplies (a
	// Config built without the command line leaves the ratio 0 unscaled).
	NoTurnDelays bool
	// SystemPrompt is --system-prompt, or what --system-prompt-file holds
	// (read in validation).
	SystemPrompt, SystemPromptFile string
	// SeedDrawn is set when --random-seed was not given and Seed was drawn
	// for this run (AIPerf's default: a random seed per run).
	SeedDrawn bool
	// ConversationNum bounds each profile stage by sessions
	// (--conversation-num); 0: by --request-count or the duration.
	ConversationNum int
	// TurnsMean and TurnsStddev shape synthetic conversations
	// (--conversation-turn-mean/-stddev).
	TurnsMean, TurnsStddev int
	// NumDatasetEntries is how many synthetic conversations (or random_pool
	// draws) to build (--num-dataset-entries); 0: one per session.
	NumDatasetEntries int
	// SamplingStrategy is --dataset-sampling-strategy ("": the dataset
	// type's default).
	SamplingStrategy string

	// CacheBust is --cache-bust: where a session's marker goes ("" or
	// none: nowhere).
	CacheBust string
	// RequestRateSeries is --request-rate-series as given: a JSON file of
	// rate points, or an inline list ("": none).
	RequestRateSeries string

	RequestCount int           // --request-count
	Duration     time.Duration // --benchmark-duration
	// ZeroCount and ZeroDuration are set when --request-count or
	// --benchmark-duration was given as 0 (the zero values otherwise mean
	// "not given").
	ZeroCount, ZeroDuration bool
	Grace                   time.Duration // --benchmark-grace-period
	WarmupCount             int           // --warmup-request-count
	FailedThreshold         float64       // --failed-request-threshold (0: off)
	// WarmupDuration, WarmupConcurrency and WarmupRate are the warmup's
	// time bound and its own load (--warmup-duration, --warmup-concurrency,
	// --warmup-request-rate; 0: none, the first stage's load).
	WarmupDuration    time.Duration
	WarmupConcurrency int
	WarmupRate        float64

	// CancellationRate is --request-cancellation-rate, the percentage of
	// profile requests cancelled on purpose CancellationDelay after their
	// send (--request-cancellation-delay); PrefillConcurrency is
	// --prefill-concurrency (0: no cap), and WarmupPrefillConcurrency the
	// warmup's own (--warmup-prefill-concurrency; 0: the profile's).
	CancellationRate         float64
	CancellationDelay        time.Duration
	PrefillConcurrency       int
	WarmupPrefillConcurrency int
	// PrefillRamp is how long the prefill cap takes to rise from 1 to its
	// value, from the profile's start (--prefill-concurrency-ramp-duration).
	PrefillRamp time.Duration

	// SweepLists holds the list flags given several values (--isl
	// 128,512): the flag's name → its values, the field of its own holding
	// the first. --concurrency and --request-rate keep theirs as text.
	SweepLists map[string][]float64
	// SweepMode combines several lists: grid (every combination, the
	// default) or zip (the i-th value of each) (--sweep-mode).
	SweepMode string
	// SweepSameSeed seeds every value of a sweep from --random-seed
	// alone (--parameter-sweep-same-seed); by default value i gets
	// --random-seed + i, as AIPerf seeds them.
	SweepSameSeed bool
	// NumProfileRuns repeats the whole plan (--num-profile-runs; 0 or 1:
	// once), ProfileRunCooldown waits between the runs and
	// ConfidenceLevel sets the aggregate's intervals (--confidence-level).
	NumProfileRuns     int
	ProfileRunCooldown time.Duration
	ConfidenceLevel    float64

	InputFile string // --input-file
	// AllowInvalidUTF8 reads dataset lines that are not UTF-8 instead of
	// refusing them (--allow-invalid-utf8).
	AllowInvalidUTF8 bool
	// MaxMemory is --max-memory: the memory a run's dataset may take, as
	// given ("": three quarters of the machine's).
	MaxMemory         string
	CustomDatasetType string // --custom-dataset-type
	PublicDataset     string // --public-dataset
	ISLBlockSize      int    // --isl-block-size
	// HF*: a Hugging Face Hub dataset (--hf-dataset ORG/NAME, --hf-subset,
	// --hf-split, --hf-column ROLE=COLUMN), or a public dataset's subset,
	// split and filters (--dataset-filter KEY=VALUE); HFWekaDataset is
	// AIPerf's --hf-weka-dataset (--public-dataset weka_hf of that repo).
	HFDataset, HFSubset, HFSplit, HFWekaDataset string
	HFColumns, DatasetFilters                   []string

	ISL, OSL                     int     // --isl, --osl
	ISLStddev, OSLStddev         float64 // --isl-stddev, --osl-stddev
	RangeRatio                   float64 // --random-range-ratio
	SeqDist                      string  // --seq-dist
	PromptCorpus                 string  // --prompt-corpus
	PrefixPoolSize, PrefixLength int     // --prompt-prefix-pool-size, --prompt-prefix-length
	// Image*: AIPerf's --image-* options, synthetic images each turn
	// carries (docs/multimodal.md).
	ImageWidthMean, ImageWidthStddev   float64
	ImageHeightMean, ImageHeightStddev float64
	ImageFormat, ImageSource           string
	ImageSourceSampling                string
	ImageBatchSize                     int
	// Audio*: AIPerf's --audio-* options, synthetic audio each turn
	// carries; the lists are kHz and bits as given.
	AudioLengthMean, AudioLengthStddev float64
	AudioFormat                        string
	AudioSampleRates, AudioDepths      []string
	AudioChannels, AudioBatchSize      int
	// MockPrefillPerImage and MockPrefillPerAudioSecond price media in
	// the embedded mock's TTFT (--mock-prefill-per-image, -audio-second).
	MockPrefillPerImage, MockPrefillPerAudioSecond time.Duration
	SharedSystemPromptLength                       int // --shared-system-prompt-length
	UserContextLength                              int // --user-context-prompt-length
	TextBatchSize                                  int // --batch-size-text (0: 1)
	Tokenizer                                      string
	// TokenizerRevision is the Hub revision of a tokenizer named by its
	// model id (--tokenizer-revision; default main).
	TokenizerRevision string
	// UseServerTokenCount counts tokens from usage even with a tokenizer,
	// ISL included (--use-server-token-count).
	UseServerTokenCount bool
	// ApplyChatTemplate counts ISL as the model's chat template renders a
	// chat request's messages, and sizes synthetic prompts for it
	// (--apply-chat-template).
	ApplyChatTemplate bool
	// RetokenizeOutput counts output with the tokenizer even when a
	// response carries the server's usage (--retokenize-output).
	RetokenizeOutput bool
	// PerChunkUsage asks for the running usage on every streamed chunk
	// (--per-chunk-usage).
	PerChunkUsage bool
	// NoCapGuard lets a streamed response run past 4× its output cap
	// (--no-cap-guard).
	NoCapGuard bool
	Seed       uint64

	ExtraInputs []string
	// UseLegacyMaxTokens sends chat output caps as max_tokens;
	// LegacyMaxTokensSet is set when the flag was given either way (it
	// then wins over what the preflight learns).
	UseLegacyMaxTokens, LegacyMaxTokensSet bool
	Headers                                []string
	APIKey                                 string
	// Cloud holds the hosted endpoints' settings: --auth-type, --aws-*,
	// --sagemaker-*.
	Cloud   Cloud
	Timeout time.Duration
	// Timestamps is --timestamps: kernel (receive stamps) or read.
	Timestamps string
	Goodput    string

	NoGPUTelemetry    bool          // --no-gpu-telemetry
	GPUTelemetryURLs  []string      // --gpu-telemetry (DCGM exporters)
	GPUInterval       time.Duration // --gpu-telemetry-interval
	ServerInterval    time.Duration // --server-metrics-interval (0: GPUInterval)
	ServerTimeout     time.Duration // --server-metrics-timeout (0: telemetry's default)
	ServerMetricsURLs []string      // --server-metrics (default: the target's /metrics)
	NoServerMetrics   bool          // --no-server-metrics

	// Precision is --precision: METRIC:STAT:±PCT targets the run keeps
	// its load going until (each stage of a sweep); Trim is --trim (auto:
	// the headline numbers are the steady state's; "" or none: the whole
	// run's).
	Precision []string
	Trim      string
	// LiveConfig holds --control-addr, --stop-on and `surge search`'s
	// settings (live.go).
	LiveConfig
	// ShardConfig holds --shard, --shards and --start-at (shard.go).
	ShardConfig
	// TraceConfig holds AIPerf's trace replay and synthesis flags
	// (trace.go).
	TraceConfig
	// WarmupConfig holds AIPerf's warmup flags beyond count, duration and
	// load (warmup.go).
	WarmupConfig
	// HookConfig holds --reset-kv-cache and --server-profiler (hooks.go).
	HookConfig
	// MultiRunConfig holds --convergence-* (multirun.go).
	MultiRunConfig
	// NetworkConfig holds --network-latency-* (network.go).
	NetworkConfig
	// ExportConfig holds --otel-* and --mlflow-* (export.go).
	ExportConfig
	// AgenticConfig holds the agent workload's flags (agentic.go).
	AgenticConfig
	// BreakdownConfig holds the time breakdown's sources (breakdown.go).
	BreakdownConfig
	// HistoryConfig holds --history, --no-history, --history-label and
	// --cost-per-hour (history.go).
	HistoryConfig
	// AdaptiveConfig holds AIPerf's --adaptive-* flags (adaptive.go).
	AdaptiveConfig
	// RecipeConfig holds AIPerf's --search-recipe and its flags
	// (recipes.go).
	RecipeConfig
	// NativeConfig holds --cells, --sketch-metrics and
	// --synthesis-idle-gap-cap (native.go).
	NativeConfig
	// ModelConfig holds --model-weights and --lora (models.go).
	ModelConfig

	UI        string // --ui
	StdoutTTY bool   // whether stdout is a terminal (picks the default UI)
	// ProgressEvery is how often the progress line off a terminal is
	// printed (0: every tui.ProgressEvery); no flag sets it.
	ProgressEvery time.Duration
	// Columns is the terminal's width the summary fits (0: unknown, 80);
	// Wide is --wide: AIPerf's whole table however wide. Set by the
	// command (TerminalColumns).
	Columns int
	Wide    bool
	// Signals makes a run take SIGINT/SIGTERM itself: the first stops
	// issuing and drains (as cancelling Run's context does), the second
	// cancels the in-flight requests at once. Set by the command.
	Signals     bool
	ArtifactDir string // --output-artifact-dir
	// LogLevel is --log-level; Verbose and ExtraVerbose are -v and -vv
	// (DEBUG and TRACE).
	LogLevel              string
	Verbose, ExtraVerbose bool
	// Foreign holds the values given to AIPerf flags surge does not
	// implement, by canonical name (foreign.go).
	Foreign map[string][]string
	Report  bool // --report: report.html in ArtifactDir at the end
	// AutoPlot is --auto-plot: the charts as PNG files in ArtifactDir's
	// plots/ at the end; NoAutoPlot is AIPerf's --no-auto-plot (the
	// default, said outright).
	AutoPlot, NoAutoPlot bool
	// ExportOutputs is --export-outputs-json: outputs.json, every
	// response's text, at the end.
	ExportOutputs bool
	// ExportPrefix is --profile-export-prefix, ExportLevel --export-level
	// (summary, records or raw) and SliceDuration --slice-duration (seconds
	// or a duration such as 30s; "": no timeslices), as given.
	ExportPrefix, ExportLevel, SliceDuration string

	// ConfigFile is --config (-f): a YAML file of flag settings, applied
	// where the command line set none (configfile.go).
	ConfigFile string

	// Version is surge's version for the exports.
	Version string
}

// UsageError is bad usage or bad input: the CLI exits 2 with its message.
type UsageError struct{ Err error }

// Error returns the message, which names the flag, file or line at fault.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ParseExtraInputs reads --extra-inputs values, as AIPerf does: each is a
// JSON object, or key:value items separated by commas ("a:1,b:2"). A value
// is JSON when it parses as JSON (numbers, booleans, null, arrays and
// objects, whose commas do not split items), true/false/none in any case
// as AIPerf reads them, and a string otherwise.
func ParseExtraInputs(items []string) (map[string]any, error) {
	pairs, err := extraPairs(items)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(pairs))
	for _, p := range pairs {
		out[p.key] = p.value
	}
	return out, nil
}

// pair is one key:value item, in the order given.
type pair struct {
	key   string
	value any
}

// extraPairs reads --extra-inputs into its items, in order.
func extraPairs(items []string) ([]pair, error) {
	var out []pair
	for _, it := range items {
		it = strings.TrimSpace(it)
		if strings.HasPrefix(it, "{") {
			obj, err := jsonObject(it)
			if err != nil {
				return nil, fmt.Errorf("--extra-inputs %q: not a JSON object: %w", it, err)
			}
			for _, k := range slices.Sorted(maps.Keys(obj)) {
				out = append(out, pair{k, obj[k]})
			}
			continue
		}
		for _, piece := range splitItems(it, isExtraKey) {
			k, v, ok := strings.Cut(piece, ":")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return nil, fmt.Errorf("--extra-inputs %q: want key:value (e.g. ignore_eos:true, or a:1,b:2) or a JSON object", piece)
			}
			out = append(out, pair{k, extraValue(strings.TrimSpace(v))})
		}
	}
	return out, nil
}

// extraValue is an --extra-inputs value: JSON when it parses, AIPerf's
// True/False/None words, else the string.
func extraValue(v string) any {
	var parsed any
	if err := json.Unmarshal([]byte(v), &parsed); err == nil {
		return parsed
	}
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	case "none":
		return nil
	}
	return v
}

func jsonObject(s string) (map[string]any, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// splitItems splits s at the commas that start another "key:" item (key as
// isKey allows), outside JSON brackets and quotes: "a:1,b:[1,2]" is two
// items, "stop:x,y" one (y is no key), and so is a header value such as
// "Mon, 01 Jan 2024 10:00:00".
func splitItems(s string, isKey func(string) bool) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted:
			if c == '\\' {
				i++
			} else if c == '"' {
				quoted = false
			}
		case c == '"':
			quoted = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth <= 0:
			if k, _, ok := strings.Cut(s[i+1:], ":"); ok && isKey(strings.TrimSpace(k)) {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// isExtraKey reports whether k can name a request body field.
func isExtraKey(k string) bool {
	return k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) < 0
}

// isHeaderName reports whether k is an HTTP header name (RFC 9110 token).
func isHeaderName(k string) bool {
	return k != "" && strings.IndexFunc(k, func(r rune) bool {
		return r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r)
	}) < 0
}

// ParseHeaders reads --header values, as AIPerf does: "Name: value" items,
// several separated by commas ("A:1,B:2"), or a JSON object.
func ParseHeaders(items []string) (http.Header, error) {
	h := http.Header{}
	for _, raw := range items {
		if it := strings.TrimSpace(raw); strings.HasPrefix(it, "{") {
			obj, err := jsonObject(it)
			if err != nil {
				return nil, fmt.Errorf("--header: not a JSON object: %w", err)
			}
			for _, k := range slices.Sorted(maps.Keys(obj)) {
				v, ok := obj[k].(string)
				if !ok {
					b, _ := json.Marshal(obj[k])
					v = string(b)
				}
				if err := addHeader(h, k, v); err != nil {
					return nil, err
				}
			}
			continue
		}
		for _, it := range splitItems(raw, isHeaderName) {
			k, v, ok := strings.Cut(it, ":")
			if !ok {
				return nil, fmt.Errorf("--header %q: want \"Name: value\"", redactHeaderItem(it))
			}
			if err := addHeader(h, k, v); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// addHeader adds one header after checking its name and value.
func addHeader(h http.Header, k, v string) error {
	k = strings.TrimSpace(k)
	if !isHeaderName(k) {
		return fmt.Errorf("--header %q: want \"Name: value\"", redactHeaderItem(k+":"+v))
	}
	if strings.ContainsAny(v, "\r\n") {
		return fmt.Errorf("--header %s: value contains a line break", k)
	}
	h.Add(k, strings.TrimSpace(v))
	return nil
}

// secretHeaders are redacted wherever headers are shown.
var secretHeaders = []string{"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie"}

// IsSecretHeader reports whether a header's value must never be shown.
func IsSecretHeader(name string) bool {
	n := strings.ToLower(name)
	return slices.Contains(secretHeaders, n) || IsSecretName(n)
}

// secretWords make a name a secret's when it holds one of them as a word
// (split at anything but letters and digits): api_key, x-auth-token,
// password. "max_tokens" is no secret: plurals are not listed.
var secretWords = map[string]bool{"key": true, "apikey": true, "token": true, "secret": true, "password": true,
	"passwd": true, "pwd": true, "auth": true, "authorization": true, "signature": true, "sig": true,
	"credential": true, "credentials": true, "cookie": true}

// IsSecretName reports whether a header, URL query parameter or
// --extra-inputs key names a credential, whose value is never shown.
// Run-together names count too (apiKey, authToken, xApiKey).
func IsSecretName(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		if secretWords[w] {
			return true
		}
	}
	joined := strings.Join(words, "")
	for _, s := range []string{"apikey", "secret", "password", "signature", "credential"} {
		if strings.Contains(joined, s) {
			return true
		}
	}
	return strings.HasSuffix(joined, "token") || strings.HasSuffix(joined, "key")
}

// RedactURL is raw as surge shows it: the user information (a password,
// or a token given as the user name) and the values of query parameters
// that name a credential (api_key, token, sig) replaced by Redacted. A
// URL it cannot parse is shown up to its host only when it has no "@".
func RedactURL(raw string) string {
	s, scheme := raw, ""
	if !strings.Contains(s, "://") {
		s, scheme = "http://"+s, "http://"
	}
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.LastIndex(raw, "@"); i >= 0 {
			return Redacted + raw[i:]
		}
		return raw
	}
	const mark = "SURGEREDACTEDMARK"
	changed := false
	if u.User != nil {
		u.User, changed = url.User(mark), true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			if IsSecretName(k) {
				for i := range vs {
					vs[i], changed = mark, true
				}
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return raw
	}
	return strings.TrimPrefix(strings.ReplaceAll(u.String(), mark, Redacted), scheme)
}

// RedactURLs is RedactURL of each.
func RedactURLs(raw []string) []string {
	out := make([]string, len(raw))
	for i, r := range raw {
		out[i] = RedactURL(r)
	}
	return out
}

// SecretValues lists every secret the run was given, for redaction
// wherever text is copied out (a server's error message, the command
// line): the API key, secret headers' values (and the token after
// "Bearer "), the values of secret --extra-inputs keys, and the URLs'
// user information and secret query values. headers are the headers as
// sent.
func (c *Config) SecretValues(headers http.Header) []string {
	out := []string{c.APIKey, c.ControlToken}
	for k, vs := range headers {
		if !IsSecretHeader(k) {
			continue
		}
		for _, v := range vs {
			out = append(out, v)
			if _, tok, ok := strings.Cut(v, " "); ok {
				out = append(out, tok)
			}
		}
	}
	if pairs, err := extraPairs(c.ExtraInputs); err == nil {
		for _, p := range pairs {
			out = appendSecrets(out, p.key, p.value, false)
		}
	}
	for _, raw := range c.URLs {
		s := raw
		if !strings.Contains(s, "://") {
			s = "http://" + s
		}
		u, err := url.Parse(s)
		if err != nil {
			continue
		}
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		} else if u.User != nil { // a token given as the user name
			out = append(out, u.User.Username())
		}
		for k, vs := range u.Query() {
			if IsSecretName(k) {
				out = append(out, vs...)
			}
		}
	}
	// Empty strings and one-letter values would redact every occurrence
	// of nothing, or of a letter.
	return slices.DeleteFunc(out, func(s string) bool { return len(s) < 2 })
}

// appendSecrets appends the values under a secret key in v, at any depth
// of its objects and arrays ({"auth": {"password": …}}), each as text and
// as a JSON body carries it (quotes and backslashes escaped).
func appendSecrets(out []string, key string, v any, secret bool) []string {
	secret = secret || IsSecretHeader(key)
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = appendSecrets(out, k, x[k], secret)
		}
	case []any:
		for _, y := range x {
			out = appendSecrets(out, key, y, secret)
		}
	case string:
		if secret {
			out = append(out, x)
			if b, _ := json.Marshal(x); string(b[1:len(b)-1]) != x {
				out = append(out, string(b[1:len(b)-1]))
			}
		}
	case nil:
	default:
		if secret {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

// redactNested is v with every value under a secret key replaced by
// Redacted, at any depth.
func redactNested(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, y := range x {
			if IsSecretHeader(k) {
				out[k] = Redacted
			} else {
				out[k] = redactNested(y)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = redactNested(y)
		}
		return out
	}
	return v
}

// redactHeaderItem shows a malformed --header item without its value.
func redactHeaderItem(it string) string {
	if k, _, ok := strings.Cut(it, ":"); ok {
		return k + ": <redacted>"
	}
	if len(it) > 8 {
		return it[:4] + "…"
	}
	return it
}

// Redacted is the marker that replaces secrets in exports.
const Redacted = "<redacted>"

// redactHeaders is the headers as exports show them, as AIPerf lists
// them: [name, value] pairs in name order, one a value, secret ones
// replaced by Redacted.
func redactHeaders(headers http.Header) [][2]string {
	out := [][2]string{}
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		for _, v := range headers[k] {
			if IsSecretHeader(k) {
				v = Redacted
			}
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// Retries is --connection-retries as a count: 0 or 1 (the default), or
// -1 when it is neither.
func (c *Config) Retries() int {
	switch c.ConnectionRetries {
	case "", "1":
		return 1
	case "0":
		return 0
	}
	return -1
}

// ValueSeed is the seed of a sweep's value i: --random-seed + i, as AIPerf
// seeds a sweep's values, or --random-seed alone with
// --parameter-sweep-same-seed.
func (c *Config) ValueSeed(i int) uint64 {
	if c.SweepSameSeed {
		return c.Seed
	}
	return c.Seed + uint64(i)
}

// redactValue shows whether a secret was given, never the secret.
func redactValue(secret string) string {
	if secret != "" {
		return Redacted
	}
	return ""
}

// redactExtras is --extra-inputs as exports show them, as AIPerf lists
// them: [key, value] pairs in the order given (JSON values parsed),
// values whose key looks like a secret replaced by Redacted, at any depth
// of an object or array value.
func redactExtras(items []string) [][2]any {
	pairs, err := extraPairs(items)
	if err != nil {
		return [][2]any{{Redacted, Redacted}} // never run: the value did not parse
	}
	out := make([][2]any, len(pairs))
	for i, p := range pairs {
		out[i] = [2]any{p.key, redactNested(p.value)}
		if IsSecretHeader(p.key) {
			out[i][1] = Redacted
		}
	}
	return out
}

// ForFlags is err as the user should read it: a library's complaint about
// one of its parameters (*schedule.FieldError, *datasets.OptionError)
// becomes the same complaint about the flag that set it; flags maps the
// call's parameter names to its flags. Other errors pass unchanged.
func ForFlags(err error, flags map[string]string) error {
	var (
		field, reason string
		se            *schedule.FieldError
		de            *datasets.OptionError
	)
	switch {
	case errors.As(err, &se):
		field, reason = se.Field, se.Reason
	case errors.As(err, &de):
		field, reason = de.Option, de.Reason
	default:
		return err
	}
	if f, ok := flags[field]; ok {
		return &flagError{flag: f, reason: reason, err: err}
	}
	return err
}

// flagError is a library's field error renamed to its flag.
type flagError struct {
	flag, reason string
	err          error
}

func (e *flagError) Error() string { return e.flag + " " + e.reason }
func (e *flagError) Unwrap() error { return e.err }

// Readiness probes, as AIPerf's --wait-for-model-mode names them.
const (
	ProbeInference = "inference" // a one-token request: any answer below 500 is ready
	ProbeModels    = "models"    // GET /v1/models lists the model
	ProbeBoth      = "both"      // models, then inference
)
