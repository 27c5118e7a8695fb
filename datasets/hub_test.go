package datasets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets/hf"
	"github.com/surgebench/surge/datasets/hf/hftest"
	"github.com/surgebench/surge/datasets/tokenizer/hub"
)

// hubOptions reads through the fake Hub h, from an empty cache.
func hubOptions(t *testing.T, h *hftest.Hub) Options {
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "")
	return Options{Tokenizer: qwen(t), Hub: hub.Options{Endpoint: h.URL, CacheDir: t.TempDir(), Timeout: 10 * time.Second}}
}

// pngBytes is a w×h PNG.
func pngBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// turns writes a dataset's conversations one turn a line: text, cap,
// media kinds and formats, system prompt.
func turns(d *Dataset) string {
	var b strings.Builder
	for _, c := range d.Conversations {
		if c.SystemPrompt != "" {
			fmt.Fprintf(&b, "[%s] system=%q\n", c.ID, c.SystemPrompt)
		}
		for i, t := range c.Turns {
			fmt.Fprintf(&b, "[%s/%d] %q max=%d", c.ID, i, t.Content(), t.MaxTokens)
			for _, p := range t.Media {
				fmt.Fprintf(&b, " %s:%s", p.Kind, p.Format)
				if p.Width > 0 {
					fmt.Fprintf(&b, ":%dx%d", p.Width, p.Height)
				}
				if p.Seconds > 0 {
					fmt.Fprintf(&b, ":%gs", p.Seconds)
				}
			}
			if t.Delay > 0 {
				fmt.Fprintf(&b, " delay=%v", t.Delay)
			}
			if t.Tools != nil {
				fmt.Fprintf(&b, " tools=%d", len(t.Tools))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

type promptRow struct {
	Q   string `parquet:"question"`
	Sys string `parquet:"system"`
	OSL int64  `parquet:"osl"`
}

// TestHFDatasetFormats: --hf-dataset with a column mapping reads the same
// rows from JSON, JSON Lines, CSV and Parquet files: prompt, system prompt
// and output cap.
func TestHFDatasetFormats(t *testing.T) {
	h := hftest.New(t)
	h.Add("org/json", "main", "data/train.json", []byte(`[{"question":"What is 2+2?","system":"Be brief.","osl":16},{"question":"Name a color.","system":"","osl":"8"}]`))
	h.Add("org/jsonl", "main", "train.jsonl", []byte("{\"question\":\"What is 2+2?\",\"system\":\"Be brief.\",\"osl\":16}\n{\"question\":\"Name a color.\",\"osl\":8}\n"))
	h.Add("org/csv", "main", "train.csv", []byte("question,system,osl\nWhat is 2+2?,Be brief.,16\nName a color.,,8\n"))
	h.Add("org/parquet", "main", "data/train-00000-of-00001.parquet", hftest.Parquet(t, []promptRow{{"What is 2+2?", "Be brief.", 16}, {"Name a color.", "", 8}}, 1))
	want := "[%s#1] system=\"Be brief.\"\n[%s#1/0] \"What is 2+2?\" max=16\n[%s#2/0] \"Name a color.\" max=8\n"
	for repo, file := range map[string]string{"org/json": "data/train.json", "org/jsonl": "train.jsonl", "org/csv": "train.csv", "org/parquet": "data/train-00000-of-00001.parquet"} {
		t.Run(repo, func(t *testing.T) {
			o := hubOptions(t, h)
			o.HF = HFOptions{Dataset: repo, Columns: []string{"prompt=question,system=system", "output_len=osl"}}
			d, rep, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if got := turns(d); got != fmt.Sprintf(want, file, file, file) {
				t.Errorf("got\n%s", got)
			}
			if d.Type != TypeHF || rep.Source != "hf://datasets/"+repo || rep.Rows != 2 || !strings.HasPrefix(rep.Lines[0], "dataset: hf "+repo+" → 2 conversations, 2 turns") ||
				!strings.Contains(rep.Lines[1], "kept 2 of 2 rows") {
				t.Errorf("type %s, report %+v", d.Type, rep)
			}
		})
	}
}

type imageRow struct {
	Q     string `parquet:"question"`
	Image struct {
		Bytes []byte `parquet:"bytes"`
		Path  string `parquet:"path"`
	} `parquet:"image"`
}

// TestHFDatasetImagesAndAudio: images the datasets library stores as
// {"bytes", "path"} and URLs go as image parts, clips as audio parts.
func TestHFDatasetImagesAndAudio(t *testing.T) {
	h := hftest.New(t)
	rows := make([]imageRow, 2)
	for i := range rows {
		rows[i].Q = fmt.Sprintf("What is in picture %d?", i)
		rows[i].Image.Bytes = pngBytes(t, 4+i, 3)
		rows[i].Image.Path = fmt.Sprintf("img%d.png", i)
	}
	h.Add("org/pics", "main", "train.parquet", hftest.Parquet(t, rows, 0))
	clip, _ := json.Marshal(map[string]any{"q": "Say it", "pics": []string{"https://example.com/a.jpg", "https://example.com/b.jpg"},
		"clip": "data:audio/wav;base64," + b64(hftest.WAV(0.25))})
	h.Add("org/mixed", "main", "train.jsonl", append(clip, '\n'))
	o := hubOptions(t, h)
	o.HF = HFOptions{Dataset: "org/pics", Columns: []string{"prompt=question", "image=image"}}
	d, rep, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := turns(d); got != "[train.parquet#1/0] \"What is in picture 0?\" max=0 image:png:4x3\n[train.parquet#2/0] \"What is in picture 1?\" max=0 image:png:5x3\n" {
		t.Errorf("got\n%s", got)
	}
	if !strings.Contains(strings.Join(rep.Lines, "\n"), "dataset: 2 images and 0 audio clips") {
		t.Errorf("report %v", rep.Lines)
	}
	o.HF = HFOptions{Dataset: "org/mixed", Columns: []string{"prompt=q,image=pics,audio=clip"}}
	if d, _, err = Load(o); err != nil {
		t.Fatal(err)
	}
	if got := turns(d); got != "[train.jsonl#1/0] \"Say it\" max=0 image:url image:url audio:wav:0.25s\n" {
		t.Errorf("got\n%s", got)
	}
}

func b64(b []byte) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	_ = enc.Encode(b) // JSON encodes bytes as base64
	return strings.Trim(strings.TrimSpace(buf.String()), `"`)
}

// TestHFDatasetMultiTurn: a chat column's user messages are a
// conversation's turns, each capped at the reply after it; a prompt list
// is turns too.
func TestHFDatasetMultiTurn(t *testing.T) {
	h := hftest.New(t)
	chat := `{"id": 1, "messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi there"},
	 {"role": "assistant", "content": "Hello. How can I help you today?"}, {"role": "user", "content": [{"type": "text", "text": "Tell me a joke"}]},
	 {"role": "assistant", "content": "No."}]}` + "\n" +
		`{"id": 2, "messages": [{"from": "human", "value": "Ping"}, {"from": "gpt", "value": "Pong"}]}` + "\n" +
		`{"id": 3, "messages": [{"role": "assistant", "content": "only a reply"}]}` + "\n"
	h.Add("org/chat", "main", "train.jsonl", []byte(strings.ReplaceAll(chat, "\n\t", " ")))
	o := hubOptions(t, h)
	o.HF = HFOptions{Dataset: "org/chat", Columns: []string{"messages=messages"}}
	d, rep, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	want := "[train.jsonl#1] system=\"You are terse.\"\n[train.jsonl#1/0] \"Hi there\" max=9\n[train.jsonl#1/1] \"Tell me a joke\" max=2\n[train.jsonl#2/0] \"Ping\" max=2\n"
	if got := turns(d); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(rep.Lines[1], "kept 2 of 3 rows (empty prompt 1)") {
		t.Errorf("report %v", rep.Lines)
	}
	// The same chat in a Parquet file: a list of structs.
	type msg struct {
		Role    string `parquet:"role"`
		Content string `parquet:"content"`
	}
	type chatRow struct {
		ID       int64 `parquet:"id"`
		Messages []msg `parquet:"messages,list"`
	}
	h.Add("org/chatpq", "main", "data/train-0.parquet", hftest.Parquet(t, []chatRow{{ID: 2, Messages: []msg{{"user", "Ping"}, {"assistant", "Pong"}}}}, 0))
	o.HF = HFOptions{Dataset: "org/chatpq", Columns: []string{"messages=messages"}}
	if d, _, err = Load(o); err != nil {
		t.Fatal(err)
	}
	if got := turns(d); got != "[data/train-0.parquet#1/0] \"Ping\" max=2\n" {
		t.Errorf("Parquet chat got\n%s", got)
	}
	// MT-Bench: a prompt column holding a list of turns.
	h.Add("HuggingFaceH4/mt_bench_prompts", "main", "raw/question.jsonl", []byte(`{"prompt": ["Write a haiku.", "Now make it rhyme."], "category": "writing"}`+"\n"))
	o.HF = HFOptions{}
	o.PublicDataset = "spec_al_mtbench"
	if d, _, err = Load(o); err != nil {
		t.Fatal(err)
	}
	if got := turns(d); got != "[raw/question.jsonl#1/0] \"Write a haiku.\" max=0\n[raw/question.jsonl#1/1] \"Now make it rhyme.\" max=0\n" {
		t.Errorf("mt_bench got\n%s", got)
	}
}

// TestHFDatasetRowsAndFilters: reading stops at the rows the run needs
// (later files are never fetched); a filter keeps the rows whose column
// holds the value.
func TestHFDatasetRowsAndFilters(t *testing.T) {
	h := hftest.New(t)
	for f := range 3 {
		var b strings.Builder
		for i := range 50 {
			fmt.Fprintf(&b, "{\"text\": \"prompt %d.%d\", \"lang\": \"%s\"}\n", f, i, []string{"en", "fr"}[i%2])
		}
		h.Add("org/shards", "main", fmt.Sprintf("data/train-%05d-of-00003.jsonl", f), []byte(b.String()))
	}
	o := hubOptions(t, h)
	o.HF = HFOptions{Dataset: "org/shards", Columns: []string{"prompt=text"}, Rows: 60}
	d, rep, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Conversations) != 60 || d.Conversations[59].Turns[0].Text != "prompt 1.9" {
		t.Errorf("%d conversations, last %+v", len(d.Conversations), d.Conversations[len(d.Conversations)-1])
	}
	if strings.Join(h.Paths, " ") != "data/train-00000-of-00003.jsonl data/train-00001-of-00003.jsonl" {
		t.Errorf("fetched %v", h.Paths)
	}
	if !strings.Contains(rep.Lines[1], "3 JSON Lines files at main (split by file name); read 2 of them: kept 60 of 60 rows") {
		t.Errorf("report %v", rep.Lines)
	}
	o.HF = HFOptions{Dataset: "org/shards", Columns: []string{"prompt=text"}, Filters: []string{"lang=fr"}, Rows: 10}
	if d, rep, err = Load(o); err != nil {
		t.Fatal(err)
	}
	if len(d.Conversations) != 10 || d.Conversations[0].Turns[0].Text != "prompt 0.1" || !strings.Contains(rep.Lines[1], "kept 10 of 20 rows (filtered out 10)") {
		t.Errorf("filtered: %d, %q, %v", len(d.Conversations), d.Conversations[0].Turns[0].Text, rep.Lines)
	}
	o.HF.Filters = []string{"lang=de"}
	if _, _, err = Load(o); err == nil || !strings.Contains(err.Error(), "no row gave a conversation (kept 0 of 150 rows (filtered out 150)) (no row matched the dataset filters") {
		t.Errorf("no match: %v", err)
	}
}

type audioRow struct {
	Audio struct {
		Bytes []byte `parquet:"bytes"`
		Path  string `parquet:"path"`
	} `parquet:"audio"`
	Text string `parquet:"text"`
}

type mmstarRow struct {
	Q     string `parquet:"question"`
	Image struct {
		Bytes []byte `parquet:"bytes"`
		Path  string `parquet:"path"`
	} `parquet:"image"`
	Answer string `parquet:"answer"`
}

// TestPublicHubDatasets: AIPerf's public names read their Hub
// repositories, subsets, splits and columns as AIPerf's loaders do.
func TestPublicHubDatasets(t *testing.T) {
	h := hftest.New(t)
	// aimo: a flat prompt column.
	h.Add("AI-MO/NuminaMath-TIR", "main", "data/train-00000-of-00001.parquet", hftest.Parquet(t, []promptRow{{Q: "ignored"}}, 0))
	h.Add("AI-MO/NuminaMath-TIR", "main", "README.md", []byte("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train.jsonl\n---\n"))
	h.Add("AI-MO/NuminaMath-TIR", "main", "data/train.jsonl", []byte("{\"problem\": \"Solve x+1=2.\", \"solution\": \"x=1\"}\n{\"problem\": \"  \"}\n"))
	// mmstar: the val split, question and image.
	var mm mmstarRow
	mm.Q, mm.Image.Bytes, mm.Answer = "Which shape?", pngBytes(t, 2, 2), "A"
	h.Add("Lin-Chen/MMStar", "main", "mmstar.parquet", hftest.Parquet(t, []mmstarRow{mm}, 0))
	h.Add("Lin-Chen/MMStar", "main", "README.md", []byte("---\nconfigs:\n- config_name: val\n  data_files:\n  - split: val\n    path: mmstar.parquet\n---\n"))
	// blazedit: the template fills code and change_request.
	h.Add("vdaita/edit_5k_char", "main", "train.jsonl", []byte(`{"code": "print(1)", "change_request": "print 2"}`+"\n"))
	// vision_arena: list-of-lists messages, the first image of a list.
	h.Add("lmarena-ai/VisionArena-Chat", "main", "data/train-0.jsonl", []byte(`{"conversation": [[{"role": "user", "content": "Describe it"}], [{"role": "assistant", "content": "A cat"}]], "images": ["not an image", "https://example.com/cat.png"]}`+"\n"))
	h.Gate("lmarena-ai/VisionArena-Chat", "hf_arena")
	// llava_onevision: the sharegpt4o subset, <image> tags removed.
	h.Add("lmms-lab/LLaVA-OneVision-Data", "main", "sharegpt4o/train-0.jsonl", []byte(`{"conversations": [{"from": "human", "value": "<image>\nWhat is this?"}, {"from": "gpt", "value": "A dog."}], "image": null}`+"\n"))
	// librispeech: scripted on main, read from the Parquet conversion;
	// clips over 30 s skipped.
	h.Add("openslr/librispeech_asr", "main", "librispeech_asr.py", []byte("# script"))
	clips := make([]audioRow, 3)
	for i, secs := range []float64{1.5, 31, 0.5} {
		clips[i].Audio.Bytes, clips[i].Audio.Path, clips[i].Text = hftest.WAV(secs), fmt.Sprintf("%d.wav", i), "words"
	}
	h.Add("openslr/librispeech_asr", hftest.ParquetRevision(), "clean/test/0000.parquet", hftest.Parquet(t, clips, 0))
	h.Add("openslr/librispeech_asr", hftest.ParquetRevision(), "other/test/0000.parquet", hftest.Parquet(t, clips[:1], 0))
	o := hubOptions(t, h)
	for _, tc := range []struct {
		name, token, subset string
		want, line          string
	}{
		{name: "aimo", want: "[data/train.jsonl#1/0] \"Solve x+1=2.\" max=0\n", line: "kept 1 of 2 rows (empty prompt 1)"},
		{name: "mmstar", want: "[mmstar.parquet#1/0] \"Which shape?\" max=0 image:png:2x2\n", line: `Lin-Chen/MMStar (val), val: 1 Parquet files at main (subset "val" from the dataset card)`},
		{name: "blazedit_5k", want: "[train.jsonl#1/0] \"Given a code file, please apply the change requests and generate the new file.\\n\\nOriginal file:\\n```python\\nprint(1)\\n```\\n\\nChange request:\\nprint 2\\n\\nPlease generate the new code file in the \\\"New file\\\" section below.\" max=0\n"},
		{name: "vision_arena", token: "hf_arena", want: "[data/train-0.jsonl#1/0] \"Describe it\" max=0 image:url\n"},
		{name: "llava_onevision", want: "[sharegpt4o/train-0.jsonl#1/0] \"What is this?\" max=0\n"},
		{name: "librispeech", want: "[clean/test/0000.parquet#1/0] \"Transcribe this audio.\" max=0 audio:wav:1.5s\n[clean/test/0000.parquet#3/0] \"Transcribe this audio.\" max=0 audio:wav:0.5s\n",
			line: "openslr/librispeech_asr (clean), test: 1 Parquet files of the Hub's conversion (refs/convert/parquet); read 1 of them: kept 2 of 3 rows (longer than 30 s 1)"},
		{name: "librispeech", subset: "other", want: "[other/test/0000.parquet#1/0] \"Transcribe this audio.\" max=0 audio:wav:1.5s\n"},
	} {
		t.Run(tc.name+tc.subset, func(t *testing.T) {
			o := o
			o.PublicDataset = tc.name
			o.Hub.Token = tc.token
			o.HF = HFOptions{Subset: tc.subset}
			d, rep, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if got := turns(d); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if d.Type != tc.name || !strings.Contains(strings.Join(rep.Lines, "\n"), tc.line) {
				t.Errorf("type %s, report %v", d.Type, rep.Lines)
			}
		})
	}
	// Offline, a dataset read from the Parquet conversion reads from the
	// cache.
	t.Setenv("HF_HUB_OFFLINE", "1")
	o.PublicDataset, o.HF = "librispeech", HFOptions{}
	if d, _, err := Load(o); err != nil || len(d.Conversations) != 2 {
		t.Errorf("offline librispeech: %v", err)
	}
	t.Setenv("HF_HUB_OFFLINE", "")
	// A gated dataset without a token: one line, the dataset, the fix.
	o.PublicDataset = "vision_arena"
	_, _, err := Load(o)
	if err == nil || !strings.HasPrefix(err.Error(), "hf dataset lmarena-ai/VisionArena-Chat: listing its files: lmarena-ai/VisionArena-Chat@main: ") ||
		!strings.HasSuffix(err.Error(), "(vision_arena is gated: accept its terms at https://huggingface.co/datasets/lmarena-ai/VisionArena-Chat and set HF_TOKEN)") {
		t.Errorf("gated: %v", err)
	}
}

// TestPublicAgentTraces: exgentic replays recorded sessions (filtered by
// harness and source model), weka_hf the WEKA traces of the repository
// named.
func TestPublicAgentTraces(t *testing.T) {
	h := hftest.New(t)
	msgs := func(text string) string {
		b, _ := json.Marshal([]any{
			map[string]any{"role": "developer", "parts": []any{map[string]any{"type": "text", "content": "Use tools."}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": text}}},
			map[string]any{"role": "assistant", "parts": []any{map[string]any{"type": "thinking", "thinking": "hmm"}, map[string]any{"type": "tool_call", "id": "c1", "name": "ls", "arguments": map[string]any{"d": "."}}}},
			map[string]any{"role": "tool", "parts": []any{map[string]any{"type": "tool_call_response", "id": "c1", "result": []any{"a.go"}}}},
		})
		return string(b)
	}
	span := func(start, end string, in, out int, text string) map[string]any {
		return map[string]any{"type": "llm_call", "start_time": start, "end_time": end, "status": map[string]any{"code": 1},
			"attributes": map[string]any{"gen_ai.usage.input_tokens": in, "gen_ai.usage.output_tokens": out, "gen_ai.input.messages": msgs(text),
				"gen_ai.tool.definitions": `[{"type": "function", "name": "ls", "description": "list", "parameters": {"type": "object"}}]`}}
	}
	rows := []map[string]any{
		{"harness": "tool_calling", "session_id": "s1", "models": []string{"azure/gpt-4.1"}, "spans": []any{
			span("2026-01-01T00:00:05Z", "2026-01-01T00:00:07Z", 100, 20, "second"),
			span("2026-01-01T00:00:00Z", "2026-01-01T00:00:02Z", 90, 10, "first"),
			map[string]any{"type": "tool_call"},
			span("2026-01-01T00:00:08Z", "2026-01-01T00:00:09Z", 0, 0, "empty"),
		}},
		{"harness": "claude_code", "session_id": "s2", "models": []string{"claude-opus-4-5"}, "spans": []any{span("2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", 5, 5, "other")}},
	}
	var b strings.Builder
	for _, r := range rows {
		j, _ := json.Marshal(r)
		b.Write(append(j, '\n'))
	}
	h.Add("Exgentic/agent-llm-traces", exgenticRevision, "data/train.jsonl", []byte(b.String()))
	o := hubOptions(t, h)
	o.PublicDataset = "exgentic"
	o.HF = HFOptions{Filters: []string{"harness=tool_calling", "source_model=gpt-4.1"}}
	d, rep, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := turns(d); got != "[s1/0] \"Use tools.\\nfirst\\n[\\\"a.go\\\"]\" max=10 tools=1\n[s1/1] \"Use tools.\\nsecond\\n[\\\"a.go\\\"]\" max=20 delay=3s tools=1\n" {
		t.Errorf("got\n%s", got)
	}
	m := d.Conversations[0].Turns[0].Messages
	if len(m) != 4 || m[0]["role"] != "system" || m[2]["reasoning_content"] != "hmm" || m[3]["role"] != "tool" || m[3]["content"] != `["a.go"]` ||
		m[2]["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] != `{"d":"."}` {
		t.Errorf("messages %v", m)
	}
	if !strings.Contains(rep.Lines[1], "kept 1 of 2 rows (filtered out 1, calls with no tokens 1)") {
		t.Errorf("report %v", rep.Lines)
	}

	trace := func(id string) string {
		j, _ := json.Marshal(map[string]any{"id": id, "block_size": 64, "hash_id_scope": "local", "models": []string{"m"}, "tool_tokens": nil,
			"requests": []any{map[string]any{"t": 0.0, "type": "n", "model": "m", "in": 128, "out": 4, "hash_ids": []int{1, 2}},
				map[string]any{"t": 3.0, "type": "n", "model": "m", "in": 192, "out": 4, "hash_ids": []int{1, 2, 3}}}})
		return string(j) + "\n"
	}
	h.Add("semianalysisai/cc-traces-test", "main", "traces.jsonl", []byte(trace("a")+trace("b")))
	o.PublicDataset, o.HF = "weka_hf", HFOptions{Dataset: "semianalysisai/cc-traces-test"}
	if d, rep, err = Load(o); err != nil {
		t.Fatal(err)
	}
	if len(d.Conversations) != 2 || len(d.Conversations[0].Turns) != 2 || d.Conversations[0].Turns[1].InputTokens != 192 || !d.Conversations[0].Turns[1].Standalone {
		t.Errorf("weka: %s", summary(d))
	}
	if !strings.Contains(strings.Join(rep.Lines, "\n"), "prompt blocks of 64 tokens") {
		t.Errorf("weka report %v", rep.Lines)
	}
}

// TestPublicExgenticV2: exgentic_v2 reads Exgentic's second recording at
// AIPerf's pinned commit: untyped chat spans, system instructions before
// the messages, the requested output cap, the recorded temperature and
// stop sequences, and the benchmark filter; its own missing pairs.
func TestPublicExgenticV2(t *testing.T) {
	h := hftest.New(t)
	msgs := `[{"role": "user", "parts": [{"type": "text", "content": "book a flight"}]}]`
	span := func(start, end string, attrs map[string]any) map[string]any {
		a := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 7, "gen_ai.input.messages": msgs}
		for k, v := range attrs {
			a[k] = v
		}
		return map[string]any{"start_time": start, "end_time": end, "attributes": a}
	}
	rows := []map[string]any{
		{"harness": "tool_calling", "session_id": "v1", "benchmark": "tau2_airline", "models": []string{"gpt-5.2-2025-12-11"}, "spans": []any{
			span("2026-02-01T00:00:00Z", "2026-02-01T00:00:01Z", map[string]any{"gen_ai.system_instructions": "You are an airline agent.",
				"gen_ai.request.max_tokens": 256, "gen_ai.request.temperature": 0.2, "gen_ai.request.stop_sequences": []string{"</done>"}}),
			span("2026-02-01T00:00:03Z", "2026-02-01T00:00:04Z", map[string]any{"gen_ai.system_instructions": `[{"type": "text", "content": "Be brief."}]`}),
			map[string]any{"start_time": "2026-02-01T00:00:05Z", "end_time": "2026-02-01T00:00:06Z", "attributes": map[string]any{"gen_ai.operation.name": "execute_tool"}},
		}},
		{"harness": "tool_calling", "session_id": "v2", "benchmark": "swebench", "models": []string{"gpt-5.2-2025-12-11"}, "spans": []any{
			span("2026-02-01T00:00:00Z", "2026-02-01T00:00:01Z", nil)}},
	}
	var b strings.Builder
	for _, r := range rows {
		j, _ := json.Marshal(r)
		b.Write(append(j, '\n'))
	}
	h.Add("Exgentic/agent-llm-traces", exgenticV2Revision, "data/train.jsonl", []byte(b.String()))
	o := hubOptions(t, h)
	o.PublicDataset = "exgentic_v2"
	o.HF = HFOptions{Filters: []string{"benchmark=tau2_airline"}}
	d, _, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Conversations) != 1 || len(d.Conversations[0].Turns) != 2 {
		t.Fatalf("got %s", summary(d))
	}
	first, second := d.Conversations[0].Turns[0], d.Conversations[0].Turns[1]
	if first.MaxTokens != 256 || second.MaxTokens != 7 || second.Delay != 2*time.Second {
		t.Errorf("caps %d, %d; delay %v", first.MaxTokens, second.MaxTokens, second.Delay)
	}
	if m := first.Messages; len(m) != 2 || m[0]["role"] != "system" || m[0]["content"] != "You are an airline agent." || m[1]["content"] != "book a flight" {
		t.Errorf("messages %v", m)
	}
	if m := second.Messages; len(m) != 2 || m[0]["role"] != "system" || m[0]["content"] != "Be brief." {
		t.Errorf("messages %v", m)
	}
	if e := first.Extra; e["temperature"] != 0.2 || fmt.Sprint(e["stop"]) != "[</done>]" || second.Extra != nil {
		t.Errorf("extra %v, %v", first.Extra, second.Extra)
	}
	for _, tc := range []struct {
		name    string
		filters []string
		want    string
	}{
		{"exgentic", []string{"benchmark=swebench"}, "exgentic: the benchmark filter is exgentic_v2's"},
		{"exgentic_v2", []string{"benchmark=mmlu"}, `exgentic_v2: benchmark "mmlu": unknown`},
		{"exgentic_v2", []string{"source_model=gpt-4.1"}, "exgentic_v2: no traces of source_model=gpt-4.1 in any harness"},
		{"exgentic_v2", []string{"harness=tool_calling_with_shortlisting", "source_model=claude-opus-4-5"}, "exgentic_v2: no traces of harness=tool_calling_with_shortlisting"},
	} {
		o.PublicDataset, o.HF = tc.name, HFOptions{Filters: tc.filters}
		if _, _, err := Load(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v", tc.name, tc.filters, err)
		}
	}
}

// TestHFDatasetBadInput: each failure is one line naming the dataset, the
// file and the fix, before any request is sent.
func TestHFDatasetBadInput(t *testing.T) {
	h := hftest.New(t)
	h.Add("org/cols", "main", "train.jsonl", []byte(`{"question": "q", "answer": "a"}`+"\n"))
	h.Add("org/pq", "main", "train.parquet", hftest.Parquet(t, []promptRow{{Q: "q"}}, 0))
	h.Add("org/private", "main", "train.jsonl", []byte(`{"prompt": "p"}`+"\n"))
	h.Gate("org/private", "hf_secret")
	h.Add("org/arrow", "main", "data/train.arrow", []byte("x"))
	h.Add("org/badimg", "main", "train.jsonl", []byte(`{"prompt": "p", "image": {"bytes": null, "path": "/local/cache/x.png"}}`+"\n"))
	h.Add("org/ogg", "main", "train.jsonl", []byte(`{"prompt": "p", "clip": {"bytes": "T2dnUwACAAAAAAAA"}}`+"\n"))
	o := hubOptions(t, h)
	for _, tc := range []struct {
		repo, cols, token string
		offline           bool
		want              string
	}{
		{repo: "org/cols", cols: "prompt=prompt", want: `hf dataset org/cols, train.jsonl: no column "prompt" (its columns are answer, question; map them with --hf-column ROLE=COLUMN)`},
		{repo: "org/pq", cols: "prompt=text,system=sys", want: `hf dataset org/pq, train.parquet: no column "text", "sys" (its columns are question, system, osl)`},
		{repo: "org/private", cols: "prompt=prompt", want: "hf dataset org/private: listing its files: org/private@main: " + h.URL + " refused it (HTTP 401: no such dataset, or a gated or private one: set HF_TOKEN to a token with access) (set HF_TOKEN to a token with access, after accepting the dataset's terms on its Hub page)"},
		{repo: "org/private", cols: "prompt=prompt", token: "hf_other", want: "(HTTP 403: no such dataset, or one HF_TOKEN has no access to)"},
		{repo: "org/cols", cols: "prompt=question", offline: true, want: ") and HF_HUB_OFFLINE is set (run once with the network (HF_HUB_OFFLINE unset) to cache it, or point HF_HOME at a cache that has it)"},
		{repo: "org/arrow", cols: "prompt=p", want: "hf dataset org/arrow: org/arrow keeps its data in Arrow files (data/train.arrow), which surge does not read; and its Parquet conversion (refs/convert/parquet) cannot be listed"},
		{repo: "org/badimg", cols: "prompt=prompt,image=image", want: `hf dataset org/badimg, train.jsonl row 1: column "image": an image without bytes (path "/local/cache/x.png" only): surge sends the bytes a dataset holds, or a URL`},
		{repo: "org/ogg", cols: "prompt=prompt,audio=clip", want: `hf dataset org/ogg, train.jsonl row 1: column "clip": audio in Ogg (Vorbis or Opus) format: surge sends WAV and MP3 clips and decodes FLAC`},
	} {
		t.Run(tc.repo+tc.token, func(t *testing.T) {
			if tc.offline {
				t.Setenv("HF_HUB_OFFLINE", "1")
			}
			o := o
			o.Hub.CacheDir = t.TempDir()
			o.Hub.Token = tc.token
			o.HF = HFOptions{Dataset: tc.repo, Columns: []string{tc.cols}}
			_, _, err := Load(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Errorf("the token is in the error: %v", err)
			}
			var he *hf.Error
			if !strings.Contains(err.Error(), "hf dataset "+tc.repo) || !errorsAs(err, &he) {
				t.Errorf("%T does not name the dataset", err)
			}
		})
	}
}

func errorsAs(err error, target any) bool {
	type unwrapper interface{ Unwrap() error }
	for e := err; e != nil; {
		if he, ok := e.(*hf.Error); ok {
			*(target.(**hf.Error)) = he
			return true
		}
		u, ok := e.(unwrapper)
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

// TestPublicDatasetsTable: every name has a place or a reason, and the
// docs' table lists every name.
func TestPublicDatasetsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range PublicDatasets() {
		if seen[d.Name] {
			t.Errorf("%s listed twice", d.Name)
		}
		seen[d.Name] = true
		switch {
		case d.Refused != "" && d.Fix == "":
			t.Errorf("%s: refused with no fix", d.Name)
		case d.Refused == "" && d.Sends == "":
			t.Errorf("%s: says nothing of what it sends", d.Name)
		case d.Refused == "" && d.Repo == "" && d.Name != "weka_hf":
			t.Errorf("%s: no repository", d.Name)
		}
	}
	if len(seen) < 70 {
		t.Errorf("%d names", len(seen))
	}
	// docs/workloads.md names each (the speed_bench_* and date-pinned
	// SemiAnalysis names in one row each).
	doc, err := os.ReadFile("../docs/workloads.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range seen {
		switch {
		case strings.HasPrefix(name, "speed_bench_"):
			name = "speed_bench_*"
		case strings.HasPrefix(name, "semianalysis_cc_traces_weka_with_subagents"):
			name = "semianalysis_cc_traces_weka_with_subagents*"
		case strings.HasPrefix(name, "semianalysis_cc_traces_weka_06"):
			name = "semianalysis_cc_traces_weka_06*"
		}
		if !bytes.Contains(doc, []byte("`"+name+"`")) {
			t.Errorf("docs/workloads.md does not list %s", name)
		}
	}
}
