package datasets

import (
	"sort"
	"strings"
)

// hubKind is how a public Hub dataset's rows become conversations (the
// AIPerf loader it follows).
type hubKind uint8

const (
	// hubColumns maps columns (AIPerf's HFInstructionResponse and
	// MTBench loaders, and --hf-dataset with --hf-column).
	hubColumns hubKind = iota + 1
	// hubFirstMessage sends a chat column's first user message with the
	// row's first image (AIPerf's HFConversation loader).
	hubFirstMessage
	// hubASR sends a clip with a fixed transcription prompt, clips over
	// 30 s skipped (AIPerf's HFASR loader).
	hubASR
	// hubExgentic replays recorded agent sessions' model calls (AIPerf's
	// Exgentic loader).
	hubExgentic
	// hubWeka replays WEKA (AgentX) traces, one a row (AIPerf's
	// SemiAnalysis loader).
	hubWeka
)

// PublicDataset is one --public-dataset name: the Hub dataset it reads,
// how, and what it sends; or, when Refused is set, why surge refuses it.
type PublicDataset struct {
	// Name is the --public-dataset name (AIPerf's).
	Name string
	// Repo, Subset, Split and Revision say where the rows are (Repo ""
	// for weka_hf: --hf-dataset names it).
	Repo, Subset, Split, Revision string
	// Sends says in a line what each request sends.
	Sends string
	// Gated marks datasets whose terms must be accepted on the Hub (with
	// HF_TOKEN set) before they download.
	Gated bool
	// Filters are the --dataset-filter keys it takes.
	Filters []string
	// Refused, when set, is why surge refuses the name; Fix what to do
	// instead.
	Refused, Fix string

	kind       hubKind
	columns    Columns
	template   string // AIPerf's prompt_template: {column} fields
	contentKey string // a chat message's text key (hubFirstMessage)
	exV2       bool   // exgentic_v2: its filter pairs, the benchmark filter
}

// asrPrompt is the text AIPerf sends with each clip of an ASR dataset.
const asrPrompt = "Transcribe this audio."

// asrMaxSeconds is the longest clip an ASR dataset sends (AIPerf's).
const asrMaxSeconds = 30

// blazeditTemplate is vLLM's BlazeditDataset prompt, as AIPerf's
// blazedit_* entries give it.
const blazeditTemplate = "Given a code file, please apply the change requests and generate the new file.\n\nOriginal file:\n```python\n{code}\n```\n\nChange request:\n{change_request}\n\nPlease generate the new code file in the \"New file\" section below."

// exgenticRevision and exgenticV2Revision are the commits AIPerf pins
// Exgentic's traces at (exgentic, exgentic_v2).
const (
	exgenticRevision   = "70036b93a04e61b0ea2706a68b962f4f26774587"
	exgenticV2Revision = "4b8ad4ab198438e5a170f9171c19c6a2cf7c1814"
)

// wekaNoSubagents is the SemiAnalysis corpus AIPerf's default WEKA names
// read (98 traces, subagents stripped).
const wekaNoSubagents = "semianalysisai/cc-traces-weka-no-subagents-051826"

// publicHub lists AIPerf's --public-dataset names (sharegpt is read by
// PublicSources), in AIPerf's order.
var publicHub = func() []PublicDataset {
	instr := func(name, repo, subset, split, prompt, sends string) PublicDataset {
		return PublicDataset{Name: name, Repo: repo, Subset: subset, Split: split, kind: hubColumns,
			columns: Columns{Prompt: prompt}, Sends: sends}
	}
	asr := func(name, repo, subset string, gated bool, sends string) PublicDataset {
		return PublicDataset{Name: name, Repo: repo, Subset: subset, Split: "test", kind: hubASR, Gated: gated,
			columns: Columns{Audio: "audio"}, Sends: sends + `: one clip (≤ 30 s, as WAV) with "` + asrPrompt + `"`}
	}
	list := []PublicDataset{
		{Name: "exgentic_v2", Repo: "Exgentic/agent-llm-traces", Split: "train", Revision: exgenticV2Revision, kind: hubExgentic, exV2: true,
			Filters: []string{"harness", "source_model", "benchmark"},
			Sends:   "Exgentic's second recording, as exgentic: each model call whole (its system instructions, temperature and stop sequences too), capped at its requested or recorded output, after its recorded think time"},
		{Name: "h_cua_perf", Repo: "Hcompany/h_cua_perf", Split: "train",
			Refused: "its corpus is one 2.5 GB zstd-compressed file read whole (past the Hub download bound), and its filters reshape each trajectory's screenshots (n_screenshots, uuid_cache) in ways surge does not replay yet",
			Fix:     "select trajectories with the dataset's trace_processor.py, write them as a Mooncake trace, and run it with --input-file and --custom-dataset-type mooncake_trace"},
		{Name: "exgentic", Repo: "Exgentic/agent-llm-traces", Split: "train", Revision: exgenticRevision, kind: hubExgentic,
			Filters: []string{"harness", "source_model"},
			Sends:   "each recorded model call of an agent session as its whole message and tool snapshot, capped at its recorded output, after its recorded think time"},
		instr("aimo", "AI-MO/NuminaMath-TIR", "", "train", "problem", "a competition math problem (`problem`)"),
		{Name: "mmstar", Repo: "Lin-Chen/MMStar", Split: "val", kind: hubColumns, columns: Columns{Prompt: "question", Image: "image"},
			Sends: "a visual question (`question`) with its image"},
		{Name: "mmvu", Repo: "yale-nlp/MMVU", Split: "validation", Refused: "it sends videos, and surge sends no video parts yet",
			Fix: "use an image or audio dataset"},
		{Name: "vision_arena", Repo: "lmarena-ai/VisionArena-Chat", Split: "train", kind: hubFirstMessage, Gated: true,
			columns: Columns{Messages: "conversation", Image: "images"}, contentKey: "content",
			Sends: "a chat's first user message with its first image"},
		{Name: "llava_onevision", Repo: "lmms-lab/LLaVA-OneVision-Data", Subset: "sharegpt4o", Split: "train", kind: hubFirstMessage,
			columns: Columns{Messages: "conversations", Image: "image"}, contentKey: "value",
			Sends: "a chat's first user message (`<image>` tags removed) with its image"},
		instr("aimo_aime", "AI-MO/aimo-validation-aime", "", "train", "problem", "an AIME problem (`problem`)"),
		instr("aimo_numina_cot", "AI-MO/NuminaMath-CoT", "", "train", "problem", "a competition math problem (`problem`)"),
		instr("aimo_numina_1_5", "AI-MO/NuminaMath-1.5", "", "train", "problem", "a competition math problem (`problem`)"),
		{Name: "spec_bench", Refused: "AIPerf downloads it from GitHub (hemingkx/Spec-Bench), not from the Hugging Face Hub",
			Fix: "use spec_al_mtbench or spec_al_gsm8k, or convert its question.jsonl to --custom-dataset-type multi_turn"},
		instr("spec_al_gsm8k", "openai/gsm8k", "main", "test", "question", "a grade-school math word problem (`question`)"),
		instr("spec_al_math500", "HuggingFaceH4/MATH-500", "", "test", "problem", "a competition math problem (`problem`)"),
		instr("spec_al_humaneval", "openai/openai_humaneval", "", "test", "prompt", "a Python function to complete (`prompt`)"),
		instr("spec_al_mbpp", "google-research-datasets/mbpp", "full", "test", "text", "a Python programming task (`text`)"),
		instr("spec_al_mtbench", "HuggingFaceH4/mt_bench_prompts", "", "train", "prompt", "a two-turn chat: each user prompt of `prompt` as a turn, after the reply to the one before"),
		instr("instruct_coder", "likaixin/InstructCoder", "", "train", "instruction", "a code-editing instruction (`instruction`)"),
		{Name: "blazedit_5k", Repo: "vdaita/edit_5k_char", Split: "train", kind: hubColumns, columns: Columns{Prompt: "change_request"}, template: blazeditTemplate,
			Sends: "a ~5k-character code file and a change request, in vLLM's Blazedit prompt"},
		{Name: "blazedit_10k", Repo: "vdaita/edit_10k_char", Split: "train", kind: hubColumns, columns: Columns{Prompt: "change_request"}, template: blazeditTemplate,
			Sends: "a ~10k-character code file and a change request, in vLLM's Blazedit prompt"},
		asr("librispeech", "openslr/librispeech_asr", "clean", false, "read speech from audiobooks"),
		asr("voxpopuli", "facebook/voxpopuli", "en", false, "European Parliament speech"),
		asr("gigaspeech", "speechcolab/gigaspeech", "xs", true, "audiobook, podcast and YouTube speech"),
		asr("ami", "edinburghcstr/ami", "ihm", false, "meeting speech (headset microphones)"),
		asr("spgispeech", "kensho/spgispeech", "test", true, "earnings-call speech"),
		{Name: "semianalysis_cc_traces_weka", Repo: wekaNoSubagents, Split: "train", kind: hubWeka,
			Sends: "SemiAnalysis's Claude Code sessions (no subagents) replayed as WEKA traces: each call's context from its hash blocks, capped at its output"},
		{Name: "semianalysis_cc_traces_weka_no_subagents", Repo: wekaNoSubagents, Split: "train", kind: hubWeka,
			Sends: "the same corpus as semianalysis_cc_traces_weka"},
	}
	for _, v := range []string{"with_subagents", "with_subagents_256k", "with_subagents_060226", "with_subagents_060226_256k",
		"with_subagents_060526", "with_subagents_060526_256k", "with_subagents_060826", "with_subagents_060826_256k",
		"061326", "061326_256k", "061526", "061526_256k", "062126", "062126_256k"} {
		list = append(list, PublicDataset{Name: "semianalysis_cc_traces_weka_" + v,
			Refused: "AIPerf pins a SemiAnalysis corpus to this name whose Hub repository surge does not know",
			Fix:     "name the corpus: --public-dataset weka_hf --hf-dataset semianalysisai/<repository>"})
	}
	list = append(list, PublicDataset{Name: "weka_hf", Split: "train", kind: hubWeka,
		Sends: "the WEKA traces of the Hub dataset --hf-dataset names, one a row"})
	for _, c := range []string{"qualitative", "coding", "humanities", "math", "multilingual", "qa", "rag", "reasoning", "roleplay", "stem", "summarization", "writing",
		"throughput_1k", "throughput_2k", "throughput_8k", "throughput_16k", "throughput_32k"} {
		list = append(list, speedBench(c))
		if strings.HasPrefix(c, "throughput_") {
			for _, tier := range []string{"low_entropy", "mixed", "high_entropy"} {
				list = append(list, speedBench(c+"_"+tier))
			}
		}
	}
	return list
}()

// speedBench is a SPEED-Bench name: refused, as AIPerf now refuses its
// Hub rows.
func speedBench(c string) PublicDataset {
	return PublicDataset{Name: "speed_bench_" + c, Repo: "nvidia/SPEED-Bench", Split: "test",
		Refused: "SPEED-Bench keeps many prompts on the Hub as placeholders for their source datasets, which its prepare script fetches (AIPerf reads the prepared file)",
		Fix:     "run SPEED-Bench's prepare script and send its JSONL with --input-file"}
}

// PublicDatasets are AIPerf's --public-dataset names and what surge does
// with each, sharegpt first.
func PublicDatasets() []PublicDataset {
	out := []PublicDataset{{Name: PublicShareGPT, Repo: PublicSources[PublicShareGPT].Repo, Split: "train", Revision: PublicSources[PublicShareGPT].Revision,
		Sends: PublicSources[PublicShareGPT].Sends}}
	return append(out, publicHub...)
}

// publicDataset finds a Hub-read --public-dataset name.
func publicDataset(name string) (PublicDataset, bool) {
	for _, d := range publicHub {
		if d.Name == name {
			return d, true
		}
	}
	return PublicDataset{}, false
}

// PublicNames lists the --public-dataset names surge reads, sorted
// (PublicDatasets has the refused ones too, each with its reason).
func PublicNames() []string {
	names := []string{PublicShareGPT}
	for _, d := range publicHub {
		if d.Refused == "" {
			names = append(names, d.Name)
		}
	}
	sort.Strings(names)
	return names
}

// refusal is the error for a refused name.
func (d PublicDataset) refusal() error {
	return optionErrorf("PublicDataset", "%s: refused: %s (%s)", d.Name, d.Refused, d.Fix)
}
