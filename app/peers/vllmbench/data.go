package vllmbench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/peers"
)

// data is the dataset a command line names, as surge builds it: its
// `surge profile` flags, the requests it sends, and the file vLLM reads
// that surge reads in another layout (made by prepare, before the run).
type data struct {
	name string
	// args are its surge profile flags (the file's, after prepare).
	args []string
	// count is the requests vLLM sends: --num-prompts, or fewer where
	// its dataset builds fewer (prefix_repetition).
	count int
	// file is the dataset's file, rewrite how surge gets vLLM's reading
	// of it (nil: surge reads the file as it is).
	file    string
	rewrite func(ctx context.Context, in, out string) error
	// ext is the rewritten file's extension.
	ext string
	// note is said before the run when surge's reading of the dataset
	// differs from vLLM's in a way worth knowing.
	note string
}

// inputLen and outputLen are a dataset's lengths: --input-len and
// --output-len when given (vLLM maps them onto every dataset's own),
// else the dataset's flag.
func lenFlag(a peers.Args, general, own string, def int) (int, error) {
	if a.Has(general) {
		return intFlag(a, general, def)
	}
	return intFlag(a, own, def)
}

// hfPublic are the Hugging Face datasets vLLM's hf reader knows that
// surge reads too, under AIPerf's public dataset names, by Hub id.
var hfPublic = map[string]struct {
	public     string
	multimodal bool
}{
	"lmarena-ai/VisionArena-Chat":   {"vision_arena", true},
	"likaixin/InstructCoder":        {"instruct_coder", false},
	"AI-MO/aimo-validation-aime":    {"aimo_aime", false},
	"AI-MO/NuminaMath-1.5":          {"aimo_numina_1_5", false},
	"AI-MO/NuminaMath-CoT":          {"aimo_numina_cot", false},
	"vdaita/edit_5k_char":           {"blazedit_5k", false},
	"vdaita/edit_10k_char":          {"blazedit_10k", false},
	"Lin-Chen/MMStar":               {"mmstar", true},
	"lmms-lab/LLaVA-OneVision-Data": {"llava_onevision", true},
}

// hfRefused are the other Hub datasets vLLM's hf reader knows, each with
// why surge refuses it.
var hfRefused = map[string]string{
	"openslr/librispeech_asr": "vLLM sends it to the openai-audio backend, which surge refuses",
	"facebook/voxpopuli":      "vLLM sends it to the openai-audio backend, which surge refuses",
	"edinburghcstr/ami":       "vLLM sends it to the openai-audio backend, which surge refuses",
	"speechcolab/gigaspeech":  "vLLM sends it to the openai-audio backend, which surge refuses",
	"kensho/spgispeech":       "vLLM sends it to the openai-audio backend, which surge refuses",
	"philschmid/mt-bench":     "surge reads AIPerf's MT-Bench (HuggingFaceH4/mt_bench_prompts: surge profile --public-dataset spec_al_mtbench), not this copy",
	"yale-nlp/MMVU":           "it sends videos; surge sends no video parts",
}

// parseData reads the dataset flags as vLLM's get_samples does.
func parseData(a peers.Args, b *bench) (data, error) {
	d := data{name: str(a, "dataset-name", "random"), count: b.numPrompts}
	path, hasPath := a.Value("dataset-path")
	if why, ok := refusedDatasets[d.name]; ok {
		return d, usage("--dataset-name %s is refused: %s", d.name, why)
	}
	// Flags that go with one dataset only.
	only := map[string][]string{
		"random":            {"random-batch-size"},
		"prefix_repetition": {"prefix-repetition-prefix-len", "prefix-repetition-suffix-len", "prefix-repetition-num-prefixes", "prefix-repetition-output-len"},
		"custom":            {"custom-output-len", "skip-chat-template"},
		"hf":                {"hf-subset", "hf-split", "no-stream"},
		"random-mm":         {"random-mm-base-items-per-request", "random-mm-num-mm-items-range-ratio", "random-mm-limit-mm-per-prompt", "random-mm-bucket-config"},
	}
	for ds, fl := range only {
		for _, f := range fl {
			if a.Has(f) && ds != d.name && !(ds == "random" && d.name == "random-mm") {
				return d, usage("--%s goes with --dataset-name %s (this run's is %s): surge refuses a flag that would change nothing", f, ds, d.name)
			}
		}
	}
	shuffle := "shuffle"
	if a.Has("disable-shuffle") {
		shuffle = "sequential"
	}
	switch d.name {
	case "random", "random-mm":
		if hasPath {
			return d, usage("Cannot use 'random' dataset with --dataset-path. Please specify the appropriate --dataset-name (e.g., 'sharegpt', 'custom', 'sonnet') for your dataset file: %s", path)
		}
		args, err := randomArgs(a)
		if err != nil {
			return d, err
		}
		d.args = args
		d.note = "random: surge builds each prompt of the length from its corpus with the model's tokenizer; vLLM takes the length less the tokenizer's special tokens (its BOS)"
		if d.name == "random-mm" {
			if b.backend != chatBackend {
				return d, usage("Multi-modal content (images) is only supported on 'openai-chat' backend.")
			}
			mm, err := imageArgs(a)
			if err != nil {
				return d, err
			}
			d.args = append(d.args, mm...)
		} else if bs, err := intFlag(a, "random-batch-size", 1); err != nil {
			return d, err
		} else if bs != 1 {
			return d, usage("--random-batch-size %d is refused: batches are for vLLM's embedding backends, which surge refuses", bs)
		}
	case "prefix_repetition":
		p, err := intFlag(a, "prefix-repetition-prefix-len", 256)
		if err != nil {
			return d, err
		}
		s, err := intFlag(a, "prefix-repetition-suffix-len", 256)
		if err != nil {
			return d, err
		}
		k, err := intFlag(a, "prefix-repetition-num-prefixes", 10)
		if err != nil {
			return d, err
		}
		o, err := lenFlag(a, "output-len", "prefix-repetition-output-len", 128)
		if err != nil {
			return d, err
		}
		if k < 1 || p < 1 || s < 1 || o < 1 {
			return d, usage("prefix_repetition: --prefix-repetition-prefix-len %d, -suffix-len %d, -num-prefixes %d and -output-len %d must each be at least 1", p, s, k, o)
		}
		if b.numPrompts/k == 0 {
			return d, usage("num_requests (%d) must be greater than or equal to num_prefixes (%d)", b.numPrompts, k)
		}
		d.count = k * (b.numPrompts / k) // vLLM builds num_prompts // num_prefixes per prefix
		d.args = []string{"--isl", strconv.Itoa(s), "--osl", strconv.Itoa(o), "--prompt-prefix-pool-size", strconv.Itoa(k), "--prompt-prefix-length", strconv.Itoa(p)}
		d.note = "prefix_repetition: surge draws each prompt's prefix at random from the pool; vLLM gives every prefix an equal share"
	case "sharegpt":
		if !hasPath {
			return d, usage("dataset_path must be provided for loading data (--dataset-path FILE, ShareGPT's JSON).")
		}
		if a.Has("output-len") {
			return d, usage("--output-len with sharegpt is refused: surge caps each ShareGPT reply at its recorded length and has no override")
		}
		d.file, d.rewrite, d.ext = path, firstPairs, ".json"
		d.args = []string{"--public-dataset", "sharegpt", "--dataset-sampling-strategy", shuffle}
		d.note = "sharegpt: each conversation's first two messages, filtered as vLLM filters them (prompts of 4–1024 tokens, replies of at least 4, 2048 in all); surge draws its own sample of them"
	case "custom":
		if !hasPath {
			return d, usage("dataset_path must be provided for loading data (--dataset-path FILE.jsonl).")
		}
		if !strings.HasSuffix(path, ".jsonl") {
			return d, usage("Only JSONL format is supported for CustomDataset (got --dataset-path %s).", path)
		}
		if !a.Has("skip-chat-template") {
			return d, usage("--dataset-name custom without --skip-chat-template is refused: vLLM wraps each prompt in the model's chat template (for the Completions API); surge sends prompts as the file holds them. Give --skip-chat-template, or use --backend openai-chat, whose server applies the template")
		}
		o, err := lenFlag(a, "output-len", "custom-output-len", 256)
		if err != nil {
			return d, err
		}
		if o < 1 {
			return d, usage("--custom-output-len %d: want at least 1", o)
		}
		d.file, d.ext = path, ".jsonl"
		d.rewrite = func(ctx context.Context, in, out string) error { return customPrompts(ctx, in, out, o) }
		d.args = []string{"--custom-dataset-type", "single_turn", "--dataset-sampling-strategy", shuffle}
	case "burstgpt":
		if !hasPath {
			return d, usage("dataset_path must be provided for loading data (--dataset-path BurstGPT's CSV).")
		}
		d.file, d.rewrite, d.ext = path, gpt4Rows, ".csv"
		// vLLM samples its rows at random (pandas' sample), shuffle or not.
		d.args = []string{"--custom-dataset-type", "burst_gpt_trace", "--dataset-sampling-strategy", "shuffle"}
		d.note = "burstgpt: the GPT-4 rows that did not fail, as vLLM keeps them, each a prompt of its Request tokens capped at its Response tokens (arrivals are this command's, not the trace's timestamps)"
	case "hf":
		if !hasPath {
			return d, usage("dataset_path must be provided for loading data (--dataset-path ORG/NAME).")
		}
		if a.Has("hf-name") {
			return d, usage("--hf-name is refused: surge reads a Hub dataset from the Hub (or its cache), not a local copy: give its id as --dataset-path")
		}
		ds, known := hfPublic[path]
		if !known {
			why, ok := hfRefused[path]
			if !ok {
				why = "surge has no reader for it under that name: name its columns with surge profile --hf-dataset " + path + " --hf-column prompt=COLUMN"
			}
			return d, usage("--dataset-path %s (hf) is refused: %s", path, why)
		}
		if ds.multimodal && b.backend != chatBackend {
			return d, usage("Multi-modal content is only supported on 'openai-chat' and 'openai-audio' backends.")
		}
		d.args = []string{"--public-dataset", ds.public}
		for _, f := range []string{"hf-subset", "hf-split"} {
			if v, ok := a.Value(f); ok {
				d.args = append(d.args, "--"+f, v)
			}
		}
		d.note = fmt.Sprintf("hf: %s read as AIPerf's %s loader reads it (surge profile --public-dataset %s); vLLM's reader words some prompts its own way", path, ds.public, ds.public)
	default:
		return d, usage("argument --dataset-name: invalid choice: %q (choose from %s)", d.name, strings.Join(datasetNames, ", "))
	}
	return d, nil
}

// randomArgs are the random dataset's surge flags: vLLM's lengths, its
// uniform range and its shared prefix.
func randomArgs(a peers.Args) ([]string, error) {
	isl, err := lenFlag(a, "input-len", "random-input-len", 1024)
	if err != nil {
		return nil, err
	}
	osl, err := lenFlag(a, "output-len", "random-output-len", 128)
	if err != nil {
		return nil, err
	}
	rr, err := floatFlag(a, "random-range-ratio", 0)
	if err != nil {
		return nil, err
	}
	prefix, err := intFlag(a, "random-prefix-len", 0)
	if err != nil {
		return nil, err
	}
	if !(rr >= 0 && rr < 1) {
		return nil, usage("range_ratio must be in [0, 1) (got --random-range-ratio %g).", rr)
	}
	if prefix < 0 || isl < 0 || osl < 0 {
		return nil, usage("--random-input-len %d, --random-output-len %d and --random-prefix-len %d must not be negative", isl, osl, prefix)
	}
	if prefix+int(math.Floor(float64(isl)*(1-rr))) < 1 || isl < 1 {
		return nil, usage("--random-input-len is too small: the minimum possible total input tokens (prefix + sampled) is %d; increase --random-input-len and/or --random-prefix-len, or decrease --random-range-ratio", prefix+int(math.Floor(float64(isl)*(1-rr))))
	}
	args := []string{"--isl", strconv.Itoa(isl), "--osl", strconv.Itoa(max(osl, 1))}
	if rr > 0 {
		args = append(args, "--random-range-ratio", strconv.FormatFloat(rr, 'g', -1, 64))
	}
	if prefix > 0 {
		args = append(args, "--prompt-prefix-pool-size", "1", "--prompt-prefix-length", strconv.Itoa(prefix))
	}
	return args, nil
}

// bucketKey is one key of --random-mm-bucket-config: (H, W, T), as a
// Python tuple or its string.
var bucketKey = regexp.MustCompile(`^\(?\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)?$`)

// imageArgs are random-mm's image flags: one image size (vLLM's bucket
// config with one positive image bucket), a fixed count per request.
func imageArgs(a peers.Args) ([]string, error) {
	n, err := intFlag(a, "random-mm-base-items-per-request", 1)
	if err != nil {
		return nil, err
	}
	r, err := floatFlag(a, "random-mm-num-mm-items-range-ratio", 0)
	if err != nil {
		return nil, err
	}
	if r != 0 {
		return nil, usage("--random-mm-num-mm-items-range-ratio %g is refused: surge sends the same number of images with every request (0)", r)
	}
	if n < 1 {
		return nil, usage("--random-mm-base-items-per-request %d: want at least 1 (surge sends images with every request)", n)
	}
	if v, ok := a.Value("random-mm-limit-mm-per-prompt"); ok {
		lim, err := imageLimit(v)
		if err != nil {
			return nil, err
		}
		if lim < n {
			return nil, usage("--random-mm-limit-mm-per-prompt allows %d images, fewer than --random-mm-base-items-per-request %d: vLLM would clamp the count, which surge does not", lim, n)
		}
	}
	cfg := str(a, "random-mm-bucket-config", "")
	if cfg == "" {
		return nil, usage("random-mm: vLLM's default --random-mm-bucket-config mixes 256x256 and 720x1280 images half and half; surge draws every image of one size: give one bucket, e.g. --random-mm-bucket-config '{(256, 256, 1): 1.0}'")
	}
	h, w, err := oneBucket(cfg)
	if err != nil {
		return nil, err
	}
	return []string{"--image-batch-size", strconv.Itoa(n), "--image-height-mean", strconv.Itoa(h), "--image-width-mean", strconv.Itoa(w), "--image-format", "jpeg"}, nil
}

// imageLimit reads --random-mm-limit-mm-per-prompt (JSON) for its images.
func imageLimit(v string) (int, error) {
	var m map[string]float64
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return 0, usage("argument --random-mm-limit-mm-per-prompt: invalid loads value: %q", v)
	}
	if vid := m["video"]; vid < 0 {
		return 0, usage("--random-mm-limit-mm-per-prompt: negative limits")
	}
	return int(m["image"]), nil
}

// oneBucket reads a bucket config and returns its one image size: a config
// with several positive buckets, or a video, is refused.
func oneBucket(v string) (h, w int, err error) {
	body := strings.TrimSpace(v)
	if !strings.HasPrefix(body, "{") || !strings.HasSuffix(body, "}") {
		return 0, 0, usage("--random-mm-bucket-config %q: want a dict {(H, W, T): P}", v)
	}
	body = strings.TrimSpace(body[1 : len(body)-1])
	n := 0
	for body != "" {
		// A key (a tuple, quoted or not), then ":" and the probability.
		end := strings.Index(body, ")")
		colon := strings.Index(body[max(end, 0):], ":")
		if end < 0 || colon < 0 {
			return 0, 0, usage("--random-mm-bucket-config %q: want a dict {(H, W, T): P}", v)
		}
		key := strings.Trim(strings.TrimSpace(body[:end+1]), `"'`)
		key = strings.TrimSuffix(strings.TrimPrefix(key, "("), ")")
		rest := body[end+colon+1:]
		pEnd := strings.Index(rest, ",")
		if pEnd < 0 {
			pEnd = len(rest)
		}
		p, perr := strconv.ParseFloat(strings.Trim(strings.TrimSpace(rest[:pEnd]), `"'`), 64)
		m := bucketKey.FindStringSubmatch(strings.TrimSpace(key))
		if perr != nil || m == nil || p < 0 {
			return 0, 0, usage("--random-mm-bucket-config %q: invalid bucket %q (want (H, W, T): P, P ≥ 0)", v, key)
		}
		body = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest[pEnd:]), ","))
		if p == 0 {
			continue
		}
		hh, _ := strconv.Atoi(m[1])
		ww, _ := strconv.Atoi(m[2])
		t, _ := strconv.Atoi(m[3])
		if t != 1 {
			return 0, 0, usage("--random-mm-bucket-config: a video bucket (%d frames) is refused: surge sends no video parts", t)
		}
		if hh < 1 || ww < 1 {
			return 0, 0, usage("--random-mm-bucket-config: image %dx%d: want positive sizes", hh, ww)
		}
		h, w = hh, ww
		n++
	}
	switch {
	case n == 0:
		return 0, 0, usage("Got invalid bucket config. Bucket config values must be non-zero.")
	case n > 1:
		return 0, 0, usage("--random-mm-bucket-config %q mixes %d image sizes: surge draws every image of one size: give one bucket", v, n)
	}
	return h, w, nil
}

// prepare writes the dataset's file in the layout surge reads, into dir,
// and returns the dataset's surge flags.
func (d data) prepare(ctx context.Context, dir string) ([]string, error) {
	if d.rewrite == nil {
		return d.args, nil
	}
	out := filepath.Join(dir, "vllm_"+strings.ReplaceAll(d.name, "-", "_")+d.ext)
	if err := d.rewrite(ctx, d.file, out); err != nil {
		return nil, err
	}
	return append([]string{"--input-file", out}, d.args...), nil
}
