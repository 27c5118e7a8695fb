package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/surgebench/surge/datasets/tokenizer"
)

// TestLoadBadInput checks every kind of bad input gives file:line: msg.
func TestLoadBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, typ, file, content string
		want                     string // after "<path>:"
	}{
		{"mooncake malformed", TypeMooncake, "t.jsonl", "{\"input_length\": 10, \"hash_ids\": [0]}\n{\"input_length\": 10,\n", `2: malformed JSON at column 20: unexpected end of JSON input`},
		{"mooncake garbage", TypeMooncake, "t.jsonl", "{\"input_length\": 10}\nnot json\n", `2: malformed JSON at column 2: invalid character 'o' in literal null (expecting 'u')`},
		{"mooncake missing input_length", TypeMooncake, "t.jsonl", `{"timestamp": 5, "hash_ids": [1]}`, `1: missing an input: give "input_length" (with optional "hash_ids"), "text_input", "messages" or "payload"`},
		{"mooncake too long for hash ids", TypeMooncake, "t.jsonl", `{"input_length": 1025, "hash_ids": [1, 2]}`, `1: input_length 1025 does not fit 2 hash_ids of 512 tokens (want 513..1024)`},
		{"mooncake too short for hash ids", TypeMooncake, "t.jsonl", `{"input_length": 512, "hash_ids": [1, 2]}`, `1: input_length 512 does not fit 2 hash_ids of 512 tokens (want 513..1024)`},
		{"mooncake wrong type", TypeMooncake, "t.jsonl", `{"input_length": "ten"}`, `1: field "input_length": want an integer, got string`},
		{"mooncake fractional length", TypeMooncake, "t.jsonl", `{"input_length": 1.5}`, `1: field "input_length": want an integer, got number 1.5`},
		{"mooncake negative id", TypeMooncake, "t.jsonl", `{"input_length": 5, "hash_ids": [-1]}`, `1: hash_ids[0] is negative (-1)`},
		{"mooncake negative timestamp", TypeMooncake, "t.jsonl", `{"input_length": 5, "timestamp": -3}`, `1: timestamp -3: must not be negative`},
		{"mooncake zero length", TypeMooncake, "t.jsonl", `{"input_length": 0}`, `1: input_length must be positive, got 0`},
		{"mooncake not an object", TypeMooncake, "t.jsonl", `[1]`, `1: want a JSON object, got array`},
		{"mooncake empty", TypeMooncake, "t.jsonl", "\n\n", ` no rows`},
		{"mooncake two inputs", TypeMooncake, "t.jsonl", `{"text_input": "a", "messages": [{"role": "user", "content": "b"}]}`, `1: "input_length", "text_input", "messages" and "payload" exclude each other: give one`},
		{"mooncake length and payload", TypeMooncake, "t.jsonl", `{"input_length": 4, "payload": {"prompt": "x"}}`, `1: "input_length", "text_input", "messages" and "payload" exclude each other: give one`},
		{"mooncake text and text_input", TypeMooncake, "t.jsonl", `{"text_input": "a", "text": "b"}`, `1: give "text_input" or "text", not both`},
		{"mooncake hash ids with text", TypeMooncake, "t.jsonl", `{"text_input": "a", "hash_ids": [1]}`, `1: "hash_ids" needs "input_length" (and no text_input, messages or payload)`},
		{"mooncake tools without messages", TypeMooncake, "t.jsonl", `{"text_input": "a", "tools": [{"type": "function"}]}`, `1: "tools" needs "messages"`},
		{"mooncake empty tools", TypeMooncake, "t.jsonl", `{"messages": [{"role": "user", "content": "a"}], "tools": []}`, `1: "tools" must be a non-empty list`},
		{"mooncake empty messages", TypeMooncake, "t.jsonl", `{"messages": []}`, `1: "messages" must be a non-empty list`},
		{"mooncake null messages", TypeMooncake, "t.jsonl", `{"messages": null}`, `1: "messages" must be a non-empty list`},
		{"mooncake message without role", TypeMooncake, "t.jsonl", `{"messages": [{"role": "user", "content": "a"}, {"content": "b"}]}`, `1: messages[1] has no "role"`},
		{"mooncake message not object", TypeMooncake, "t.jsonl", `{"messages": ["hi"]}`, `1: field "messages": want an object, got string`},
		{"mooncake empty payload", TypeMooncake, "t.jsonl", `{"payload": {}}`, `1: "payload" must be a non-empty object`},
		{"mooncake payload not object", TypeMooncake, "t.jsonl", `{"payload": [1]}`, `1: field "payload": want an object, got array`},
		{"mooncake bad message mode", TypeMooncake, "t.jsonl", `{"messages": [{"role": "user"}], "message_mode": "append"}`, `1: message_mode "append": want "history" or "delta"`},
		{"mooncake delta without messages", TypeMooncake, "t.jsonl", `{"text_input": "a", "message_mode": "delta"}`, `1: message_mode "delta" needs "messages"`},
		{"mooncake delta extra messages", TypeMooncake, "t.jsonl", `{"messages": [{"role": "user"}], "message_mode": "delta", "extra": {"messages": []}}`, `1: message_mode "delta": "extra" must not hold "messages" (it would replace the conversation)`},
		{"mooncake extra not object", TypeMooncake, "t.jsonl", `{"input_length": 3, "extra": [1]}`, `1: field "extra": want an object, got array`},
		{"single empty session", TypeSingleTurn, "s.jsonl", `{"text": "a", "session_id": ""}`, `1: session_id is empty`},
		{"single missing text", TypeSingleTurn, "s.jsonl", "{\"text\": \"hi\"}\n\n{\"delay\": 5}\n", `3: missing required field "text" (or "texts", or "messages")`},
		{"single both texts", TypeSingleTurn, "s.jsonl", `{"text": "a", "texts": ["b"]}`, `1: give "text" or "texts", not both`},
		{"single missing image", TypeSingleTurn, "s.jsonl", `{"text": "a", "image": "no-such.png"}`, `1: image: open no-such.png: no such file or directory`},
		{"single image and images", TypeSingleTurn, "s.jsonl", `{"text": "a", "image": "a.png", "images": ["b.png"]}`, `1: give "image" or "images", not both`},
		{"single image not string", TypeSingleTurn, "s.jsonl", `{"text": "a", "image": 3}`, `1: "image" must be a string (a path or a URL)`},
		{"single bad images", TypeSingleTurn, "s.jsonl", `{"text": "a", "images": 3}`, `1: "images" must be a list of strings or of {"name", "contents"} objects`},
		{"single bad data url", TypeSingleTurn, "s.jsonl", `{"text": "a", "image": "data:image/png;base64,@@"}`, `1: image: a data URL of "image/png": bad base64: illegal base64 data at input byte 0`},
		{"single audio url", TypeSingleTurn, "s.jsonl", `{"text": "a", "audio": "https://h/a.wav"}`, `1: audio: https://h/a.wav: input_audio carries its data in the request, so an audio URL cannot be sent: download the file and name its path`},
		{"multi bad audio", TypeMultiTurn, "m.jsonl", `{"turns": [{"text": "x"}, {"audios": ["wav,!"]}]}`, `1: turns[1]: audio: wav audio: bad base64: illegal base64 data at input byte 0`},
		{"single turns", TypeSingleTurn, "s.jsonl", `{"turns": []}`, `1: "turns" belongs in a multi_turn file (--custom-dataset-type multi_turn)`},
		{"single negative output", TypeSingleTurn, "s.jsonl", `{"text": "a", "output_length": -1}`, `1: output_length must not be negative, got -1`},
		{"single extra not object", TypeSingleTurn, "s.jsonl", `{"text": "a", "extra": 3}`, `1: field "extra": want an object, got number`},
		{"multi missing turns", TypeMultiTurn, "m.jsonl", `{"session_id": "a"}`, `1: missing required field "turns"`},
		{"multi bad turn", TypeMultiTurn, "m.jsonl", `{"session_id": "a", "turns": [{"text": "x"}, {"delay": 1}]}`, `1: turns[1]: missing required field "text" (or "texts", or "messages")`},
		{"multi duplicate session", TypeMultiTurn, "m.jsonl", "{\"session_id\": \"a\", \"turns\": [{\"text\": \"x\"}]}\n{\"session_id\": \"a\", \"turns\": [{\"text\": \"y\"}]}\n", `2: session_id "a" already used on line 1`},
		{"pool timestamp", TypeRandomPool, "p.jsonl", `{"text": "x", "timestamp": 5}`, `1: random_pool entries are drawn at random and cannot carry a timestamp`},
		{"azure bad header", TypeAzure, "a.csv", "TIME,ContextTokens,GeneratedTokens\n", `1: header: missing column "TIMESTAMP" (want TIMESTAMP,ContextTokens,GeneratedTokens)`},
		{"azure bad time", TypeAzure, "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\nyesterday,1,2\n", `3: TIMESTAMP "yesterday": want YYYY-MM-DD hh:mm:ss.fffffff`},
		{"azure bad count", TypeAzure, "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,-4,44\n", `2: ContextTokens "-4": want a non-negative integer`},
		{"azure columns", TypeAzure, "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,4\n", `2: want 3 columns, got 2`},
		{"azure out of order", TypeAzure, "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,4,4\n2023-11-16 18:15:45,4,4\n", `3: TIMESTAMP 2023-11-16 18:15:45 is earlier than line 2's`},
		{"azure no rows", TypeAzure, "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n", ` no rows after the header`},
		{"sharegpt not array", PublicShareGPT, "g.json", `{"id": 1}`, `1: want a JSON array of conversations`},
		{"sharegpt malformed", PublicShareGPT, "g.json", "[\n  {\"id\": \"a\", \"conversations\": []},\n  {\"id\": \"b\" \"conversations\": []}\n]", `3: malformed JSON: invalid character '"' after object key:value pair`},
		{"sharegpt missing conversations", PublicShareGPT, "g.json", "[\n  {\"id\": \"a\"}\n]", `2: missing required field "conversations"`},
		{"sharegpt wrong type", PublicShareGPT, "g.json", "[\n {\"id\": \"a\",\n  \"conversations\": 7}]", `3: field "conversations": want an array, got number`},
		{"sharegpt truncated", PublicShareGPT, "g.json", "[\n {\"id\": \"a\", \"conversations\": []}", `2: malformed JSON: unexpected end of file`},
	}
	tok := qwen(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tc.file, tc.content)
			o := Options{InputFile: path, CustomDatasetType: tc.typ, Tokenizer: tok}
			if tc.typ == PublicShareGPT {
				o.CustomDatasetType, o.PublicDataset = "", PublicShareGPT
			}
			_, _, err := Load(o)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Load: got %v (%T), want an *InputError", err, err)
			}
			if got, want := err.Error(), path+":"+tc.want; got != want {
				t.Errorf("error\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestLoadUsageErrors covers option errors that are not about a file's content.
func TestLoadUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"missing file", Options{InputFile: "/nonexistent/x.jsonl", CustomDatasetType: TypeMooncake}, "/nonexistent/x.jsonl: cannot read the input file: open /nonexistent/x.jsonl: no such file or directory"},
		{"unknown type", Options{InputFile: "testdata/mooncake_head200.jsonl", CustomDatasetType: "nope"}, `CustomDatasetType "nope": unknown (known: single_turn, multi_turn, random_pool, mooncake_trace, azure_trace, bailian_trace, burst_gpt_trace, baseten, weka, inputs_json, raw_payload)`},
		{"type without file", Options{CustomDatasetType: TypeMooncake}, "CustomDatasetType mooncake_trace needs an input file"},
		{"unknown public", Options{PublicDataset: "wiki"}, `PublicDataset "wiki": unknown (surge reads aimo, aimo_aime, aimo_numina_1_5, aimo_numina_cot, ami, blazedit_10k, blazedit_5k, exgentic, exgentic_v2, gigaspeech, instruct_coder, librispeech, llava_onevision, mmstar, semianalysis_cc_traces_weka, semianalysis_cc_traces_weka_no_subagents, sharegpt, spec_al_gsm8k, spec_al_humaneval, spec_al_math500, spec_al_mbpp, spec_al_mtbench, spgispeech, vision_arena, voxpopuli, weka_hf; docs/workloads.md lists AIPerf's every name)`},
		{"refused public", Options{PublicDataset: "mmvu"}, `PublicDataset mmvu: refused: it sends videos, and surge sends no video parts yet (use an image or audio dataset)`},
		{"hf and file", Options{InputFile: "x.jsonl", HF: HFOptions{Dataset: "org/name"}}, `InputFile excludes a Hugging Face dataset (give one of them)`},
		{"hf and type", Options{CustomDatasetType: TypeMooncake, PublicDataset: "aimo"}, `CustomDatasetType excludes a Hugging Face dataset (give one of them)`},
		{"sharegpt and hf", Options{PublicDataset: PublicShareGPT, HF: HFOptions{Split: "test"}}, `PublicDataset sharegpt reads its own file: the Hugging Face dataset options do not apply to it`},
		{"hf no columns", Options{HF: HFOptions{Dataset: "org/name"}}, `HF.Columns no prompt=COLUMN or messages=COLUMN: say which column holds what to send`},
		{"hf bad id", Options{HF: HFOptions{Dataset: "just-a-name", Columns: []string{"prompt=q"}}}, `HF.Dataset "just-a-name": not a Hub dataset id (ORG/NAME)`},
		{"hf options alone", Options{HF: HFOptions{Split: "test"}}, `HF.Dataset is needed with the Hugging Face options (ORG/NAME)`},
		{"public columns", Options{PublicDataset: "aimo", HF: HFOptions{Columns: []string{"prompt=x"}}}, `HF.Columns do not apply to --public-dataset aimo, which maps its own columns (use --hf-dataset AI-MO/NuminaMath-TIR to map others)`},
		{"public filter", Options{PublicDataset: "aimo", HF: HFOptions{Filters: []string{"a=b"}}}, `HF.Filters aimo takes no dataset filters (AIPerf's exgentic does; --hf-dataset filters rows by column)`},
		{"exgentic filter", Options{PublicDataset: "exgentic", HF: HFOptions{Filters: []string{"harness=nope"}}}, `HF.Filters exgentic: harness "nope": unknown (available: harness=[claude_code, openai_solo, smolagents_code, tool_calling, tool_calling_with_shortlisting], source_model=[DeepSeek-V3.2, Kimi-K2.5, claude-opus-4-5, gemini-3-pro-preview, gpt-4.1, gpt-5.2-2025-12-11])`},
		{"exgentic pair", Options{PublicDataset: "exgentic", HF: HFOptions{Filters: []string{"harness=tool_calling", "source_model=azure/gpt-5.2-2025-12-11"}}}, `HF.Filters exgentic: no traces of harness=tool_calling with source_model=gpt-5.2-2025-12-11 (source models for this harness: DeepSeek-V3.2, Kimi-K2.5, claude-opus-4-5, gemini-3-pro-preview, gpt-4.1)`},
		{"weka_hf no repo", Options{PublicDataset: "weka_hf"}, `HF.Dataset is needed: weka_hf reads the traces of the Hub dataset it names (ORG/NAME)`},
		{"pinned and repo", Options{PublicDataset: "librispeech", HF: HFOptions{Dataset: "org/other"}}, `HF.Dataset "org/other": librispeech reads openslr/librispeech_asr; give one of them`},
		{"hf rows", Options{HF: HFOptions{Dataset: "org/name", Columns: []string{"prompt=q"}, Rows: MaxHubRows + 1}}, `HF.Rows 1048577 is over the limit of 1048576`},
		{"bad block size", Options{ISLBlockSize: -1}, "ISLBlockSize must be positive, got -1"},
		{"folder", Options{InputFile: "testdata/weka"}, "InputFile testdata/weka is a folder: only weka and raw_payload read folders (give one with the custom dataset type)"},
		{"synthetic no isl", Options{Synthetic: SyntheticOptions{Count: 1}}, "Synthetic.ISL must be positive, got 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Load(tc.o)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestMooncakeGolden loads the first 200 trace lines and checks lengths,
// timestamps, shared blocks and the exact prompt token counts.
func TestMooncakeGolden(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	d, rep, err := Load(Options{InputFile: "testdata/mooncake_head200.jsonl", CustomDatasetType: TypeMooncake, Tokenizer: tok, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 200 || len(d.Conversations) != 200 || !d.HasTimestamps() {
		t.Fatalf("rows %d, conversations %d, timestamps %v", rep.Rows, len(d.Conversations), d.HasTimestamps())
	}
	golden(t, "mooncake_head200.txt", summary(d)+strings.Join(rep.Lines, "\n")+"\n")

	// Row 1 is {"timestamp": 0, "input_length": 6758, "output_length": 500, hash_ids 0..13}.
	t0 := d.Conversations[0].Turns[0]
	if t0.InputTokens != 6758 || t0.MaxTokens != 500 || !t0.HasTimestamp || t0.Timestamp != 0 {
		t.Errorf("first turn: %+v", t0)
	}
	// Equal hash ids are byte-identical blocks: every row starts with id 0.
	first := blockText(&d.Conversations[0].Turns[0], 0)
	for _, c := range d.Conversations[1:4] {
		if blockText(&c.Turns[0], 0) != first || !strings.HasPrefix(c.Turns[0].Content(), first) {
			t.Errorf("%s: block 0 differs from row 1's", c.ID)
		}
	}
	if n := len(tok.Encode(first)); n != 512 {
		t.Errorf("block 0 is %d tokens, want 512", n)
	}
	// Drift across block boundaries, measured on a few rows.
	for _, i := range []int{0, 3, 6, 50, 199} {
		tr := &d.Conversations[i].Turns[0]
		got := len(tok.Encode(tr.Content()))
		if drift := got - tr.InputTokens; drift < -1 || drift > 1 {
			t.Errorf("row %d: %d tokens, want %d±1", i+1, got, tr.InputTokens)
		} else if drift != 0 {
			t.Logf("row %d: drift %d", i+1, drift)
		}
	}
	// Timestamps are milliseconds.
	last := d.Conversations[199].Turns[0]
	if want := time.Duration(0); last.Timestamp <= want {
		t.Errorf("last timestamp %v", last.Timestamp)
	}
}

// TestMooncakeSessionsAndText covers session_id grouping, text rows, delays,
// rows without hash_ids and a custom block size.
func TestMooncakeSessionsAndText(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	path := writeFile(t, "s.jsonl", `{"session_id": "a", "timestamp": 10, "input_length": 20, "output_length": 5, "hash_ids": [0, 1]}
{"session_id": "b", "timestamp": 20, "text": "hello there", "output_length": 3}
{"session_id": "a", "delay": 1500, "input_length": 40, "hash_ids": [0, 1, 2]}
{"timestamp": 30.5, "input_length": 25}
`)
	d, _, err := Load(Options{InputFile: path, CustomDatasetType: TypeMooncake, Tokenizer: tok, ISLBlockSize: 16, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		ID        string
		Turns     int
		In, Max   int
		TS, Delay time.Duration
		Tokens    int
	}
	var gots []got
	for _, c := range d.Conversations {
		for _, tr := range c.Turns {
			gots = append(gots, got{c.ID, len(c.Turns), tr.InputTokens, tr.MaxTokens, tr.Timestamp, tr.Delay, len(tok.Encode(tr.Content()))})
		}
	}
	want := []got{
		{"a", 2, 20, 5, 10 * time.Millisecond, 0, 20},
		{"a", 2, 40, 0, 0, 1500 * time.Millisecond, 40},
		{"b", 1, 0, 3, 20 * time.Millisecond, 0, 2},
		{"trace-4", 1, 25, 0, 30500 * time.Microsecond, 0, 25},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Turn 2 of "a" repeats blocks 0 and 1 of turn 1 (a 16+4 cut of block 1
	// against a full block 1): block 0 is the same text.
	a := d.Conversations[0]
	if b0 := blockText(&a.Turns[0], 0); b0 != blockText(&a.Turns[1], 0) || !strings.HasPrefix(a.Turns[1].Content(), b0) {
		t.Errorf("shared block 0 differs")
	}
}

// TestMooncakeAIPerfInputs: AIPerf's four input modes (input_length,
// text_input, messages with tools, payload), its message modes and
// per-row extra fields.
func TestMooncakeAIPerfInputs(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "a.jsonl", `{"session_id": "s", "text_input": "Hello world", "output_length": 4, "extra": {"temperature": 0.1}}
{"session_id": "s", "delay": 250, "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [{"type": "text", "text": "Hi"}]}, {"role": "tool", "tool_call_id": "c1", "content": "42"}], "tools": [{"type": "function", "function": {"name": "f"}}]}
{"session_id": "d", "message_mode": "delta", "messages": [{"role": "user", "content": "next"}]}
{"payload": {"prompt": "Hello", "max_tokens": 50}, "timestamp": 1000}
{"input_length": 10, "hash_ids": [123]}
`)
	d, rep, err := Load(Options{InputFile: path, Tokenizer: qwen(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeMooncake {
		t.Fatalf("guessed %s, want %s", rep.Type, TypeMooncake)
	}
	if len(d.Conversations) != 4 {
		t.Fatalf("%d conversations, want 4", len(d.Conversations))
	}
	s := d.Conversations[0]
	want := []Turn{
		{Text: "Hello world", MaxTokens: 4, Extra: map[string]any{"temperature": 0.1}},
		{Delay: 250 * time.Millisecond,
			Messages: []map[string]any{{"role": "system", "content": "Be brief."}, {"role": "user", "content": []any{map[string]any{"type": "text", "text": "Hi"}}},
				{"role": "tool", "tool_call_id": "c1", "content": "42"}},
			Tools: []map[string]any{{"type": "function", "function": map[string]any{"name": "f"}}}},
	}
	if diff := cmp.Diff(want, s.Turns); diff != "" {
		t.Errorf("session s (-want +got):\n%s", diff)
	}
	if got := s.Turns[1].Content(); got != "Be brief.\nHi\n42" {
		t.Errorf("messages' text %q, want every message's text one a line", got)
	}
	if tr := d.Conversations[1].Turns[0]; !tr.MessagesDelta || tr.Content() != "next" {
		t.Errorf("delta row: %+v", tr)
	}
	p := d.Conversations[2].Turns[0]
	if p.Payload["prompt"] != "Hello" || !p.HasTimestamp || p.Timestamp != time.Second || p.Content() != "Hello" {
		t.Errorf("payload row: %+v (content %q)", p, p.Content())
	}
	if g := d.Conversations[3].Turns[0]; g.InputTokens != 10 || g.Prompt == nil {
		t.Errorf("input_length row: %+v", g)
	}
}

// TestSingleTurnSessionsAndRoles: single_turn lines sharing a session_id
// are one conversation, as AIPerf groups them; any role is sent.
func TestSingleTurnSessionsAndRoles(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "s.jsonl", `{"session_id": "a", "text": "one"}
{"text": "alone", "role": "system"}
{"session_id": "a", "text": "two", "role": "assistant", "delay": 5}
`)
	d, _, err := Load(Options{InputFile: path, CustomDatasetType: TypeSingleTurn})
	if err != nil {
		t.Fatal(err)
	}
	want := []Conversation{
		{ID: "a", Turns: []Turn{{Text: "one"}, {Text: "two", Role: "assistant", Delay: 5 * time.Millisecond}}},
		{ID: "line-2", Turns: []Turn{{Text: "alone", Role: "system"}}},
	}
	if diff := cmp.Diff(want, d.Conversations); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestAzureGolden replays the first 300 rows of the conversation trace.
func TestAzureGolden(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	d, rep, err := Load(Options{InputFile: "testdata/azure_conv_head300.csv", Tokenizer: tok, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeAzure || rep.Rows != 300 || !d.HasTimestamps() {
		t.Fatalf("type %s rows %d timestamps %v", rep.Type, rep.Rows, d.HasTimestamps())
	}
	golden(t, "azure_conv_head300.txt", summary(d)+strings.Join(rep.Lines, "\n")+"\n")
	// Row 2 is 2023-11-16 18:15:50.9951690,396,109; row 1 at 18:15:46.6805900.
	tr := d.Conversations[1].Turns[0]
	if tr.Timestamp != 4314579*time.Microsecond || tr.InputTokens != 396 || tr.MaxTokens != 109 {
		t.Errorf("row 2: %v %d %d", tr.Timestamp, tr.InputTokens, tr.MaxTokens)
	}
	for _, i := range []int{0, 1, 2, 150, 299} {
		tr := &d.Conversations[i].Turns[0]
		if got := len(tok.Encode(tr.Content())); got != tr.InputTokens {
			t.Errorf("row %d: %d tokens, want %d", i+2, got, tr.InputTokens)
		}
	}
}

// TestShareGPT runs the filter on FastChat's dummy conversations.
func TestShareGPT(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	d, rep, err := Load(Options{PublicDataset: PublicShareGPT, InputFile: "testdata/sharegpt_dummy.json", Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	st := rep.ShareGPT
	if st.Total != 500 || st.Kept != len(d.Conversations) || st.Kept+st.PromptShort+st.PromptLong+st.TotalLong+st.CompletionShort+st.NoReply != st.Total {
		t.Fatalf("stats don't add up: %+v", st)
	}
	golden(t, "sharegpt_dummy.txt", strings.Join(rep.Lines, "\n")+"\n")
	c := d.Conversations[0]
	if c.Turns[0].InputTokens != len(tok.Encode(c.Turns[0].Text)) || c.Turns[0].MaxTokens < ShareGPTMinCompletion {
		t.Errorf("first kept: %+v", c.Turns[0])
	}
	// A hand-made file exercising each filter bucket.
	long := strings.Repeat(" word", 1100)
	mid := strings.Repeat(" word", 1000)
	path := writeFile(t, "g.json", `[
 {"id": "ok", "conversations": [{"from": "human", "value": "Tell me about the sea please"}, {"from": "gpt", "value": "The sea is large and deep and blue."}]},
 {"id": "short", "conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello, how can I help you today?"}]},
 {"id": "long", "conversations": [{"from": "human", "value": "`+long+`"}, {"from": "gpt", "value": "That is a lot of words."}]},
 {"id": "total", "conversations": [{"from": "human", "value": "`+mid+`"}, {"from": "gpt", "value": "`+long+`"}]},
 {"id": "terse", "conversations": [{"from": "human", "value": "Tell me about the sea please"}, {"from": "gpt", "value": "No."}]},
 {"id": "alone", "conversations": [{"from": "human", "value": "Anyone there?"}]}
]`)
	d, rep, err = Load(Options{PublicDataset: PublicShareGPT, InputFile: path, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	want := "sharegpt: kept 1 of 6, 1 turns (filtered: prompt too short 1, too long 1, total > 2048 1, completion < 4 1, no human→gpt pair 1)"
	if rep.Lines[1] != want || d.Conversations[0].ID != "ok" {
		t.Errorf("got %q, want %q", rep.Lines[1], want)
	}
}

// TestJSONLFormats loads single_turn, multi_turn and random_pool files.
func TestJSONLFormats(t *testing.T) {
	t.Parallel()
	single := writeFile(t, "s.jsonl", "{\"text\": \"What is a prime?\", \"timestamp\": 100, \"output_length\": 20, \"extra\": {\"temperature\": 0.5}}\n\n{\"texts\": [\"a\", \"b\"], \"delay\": 250}\n")
	d, rep, err := Load(Options{InputFile: single})
	if err != nil {
		t.Fatal(err)
	}
	wantTurns := []Turn{
		{Text: "What is a prime?", MaxTokens: 20, Timestamp: 100 * time.Millisecond, HasTimestamp: true, Extra: map[string]any{"temperature": 0.5}},
		{Text: "a\nb", Delay: 250 * time.Millisecond},
	}
	if rep.Type != TypeSingleTurn || len(d.Conversations) != 2 {
		t.Fatalf("type %s, %d conversations", rep.Type, len(d.Conversations))
	}
	for i, w := range wantTurns {
		if diff := cmp.Diff(w, d.Conversations[i].Turns[0]); diff != "" {
			t.Errorf("turn %d (-want +got):\n%s", i, diff)
		}
	}

	multi := writeFile(t, "m.jsonl", `{"session_id": "s1", "turns": [{"text": "Hi", "timestamp": 0}, {"text": "And then?", "delay": 1000, "output_length": 7}]}
{"turns": [{"text": "Solo"}]}
`)
	d, rep, err = Load(Options{InputFile: multi})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeMultiTurn || len(d.Conversations) != 2 || d.Conversations[0].ID != "s1" || d.Conversations[1].ID != "line-2" {
		t.Fatalf("got %+v", d.Conversations)
	}
	if tr := d.Conversations[0].Turns[1]; tr.Text != "And then?" || tr.Delay != time.Second || tr.MaxTokens != 7 {
		t.Errorf("turn 2: %+v", tr)
	}

	pool := writeFile(t, "p.jsonl", "{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": \"c\"}\n")
	load := func(seed uint64, n int) []string {
		d, rep, err := Load(Options{InputFile: pool, CustomDatasetType: TypeRandomPool, Seed: seed, Synthetic: SyntheticOptions{Count: n}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Rows != 3 || len(d.Conversations) != max(n, 3) {
			t.Fatalf("rows %d conversations %d", rep.Rows, len(d.Conversations))
		}
		var s []string
		for _, c := range d.Conversations {
			s = append(s, c.Turns[0].Text)
		}
		return s
	}
	a, b, c := load(1, 50), load(1, 50), load(2, 50)
	if !cmp.Equal(a, b) || cmp.Equal(a, c) {
		t.Errorf("random_pool not seeded: %v / %v / %v", a, b, c)
	}
	seen := map[string]bool{}
	for _, s := range a {
		seen[s] = true
	}
	if len(seen) != 3 {
		t.Errorf("50 draws from 3 gave %v", seen)
	}
	if got := load(1, 0); !cmp.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("count 0: %v", got)
	}
}

// TestFullTraces runs on the shared traces when they are present.
func TestFullTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	t.Parallel()
	dir := filepath.Join("..", "..", "shared", "data")
	mc := filepath.Join(dir, "mooncake_conversation_trace.jsonl")
	if _, err := os.Stat(mc); err != nil {
		t.Skip("no ../shared/data")
	}
	d, rep, err := Load(Options{InputFile: mc, CustomDatasetType: TypeMooncake, Tokenizer: qwen(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 12031 || len(d.Conversations) != 12031 || !d.HasTimestamps() {
		t.Errorf("mooncake: %v", rep.Lines)
	}
	t.Log(strings.Join(rep.Lines, "\n"))
	d, rep, err = Load(Options{InputFile: filepath.Join(dir, "AzureLLMInferenceTrace_conv.csv"), CustomDatasetType: TypeAzure, Tokenizer: qwen(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 19366 || // the README says 19,365; the file has 19,366 data rows
		!d.HasTimestamps() {
		t.Errorf("azure: %v", rep.Lines)
	}
	t.Log(strings.Join(rep.Lines, "\n"))
}

// TestDriftLlama3 measures prompt length drift under Llama 3's tokenizer
// (read from ../shared when present; its licence keeps it out of testdata).
func TestDriftLlama3(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "shared", "data", "tokenizers", "llama3", "tokenizer.json")
	if _, err := os.Stat(path); err != nil {
		t.Skip("no ../shared/data/tokenizers/llama3")
	}
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := Load(Options{InputFile: "testdata/mooncake_head200.jsonl", CustomDatasetType: TypeMooncake, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 7, 120} {
		tr := &d.Conversations[i].Turns[0]
		if got := len(tok.Encode(tr.Content())); got < tr.InputTokens-1 || got > tr.InputTokens+1 {
			t.Errorf("row %d: %d tokens, want %d±1", i+1, got, tr.InputTokens)
		}
	}
}

// AIPerf's rankings lines: named "query" and "passages" groups of texts.
func TestJSONLRankings(t *testing.T) {
	t.Parallel()
	f := writeFile(t, "r.jsonl", `{"texts":[{"name":"query","contents":["What is AI?"]},{"name":"passages","contents":["AI is artificial intelligence.","Bananas are yellow."]}]}
`)
	d, _, err := Load(Options{InputFile: f, CustomDatasetType: TypeSingleTurn})
	if err != nil {
		t.Fatal(err)
	}
	want := Turn{Text: "What is AI?", Passages: []string{"AI is artificial intelligence.", "Bananas are yellow."}}
	if diff := cmp.Diff(want, d.Conversations[0].Turns[0]); diff != "" {
		t.Errorf("rankings turn (-want +got):\n%s", diff)
	}
	// Any other name is text, as AIPerf's named fields are: the contents go
	// out one a line, in order.
	d, _, err = Load(Options{InputFile: writeFile(t, "n.jsonl", `{"texts":[{"name":"text_field_A","contents":["Hello","World"]},{"name":"text_field_B","contents":["Hi there"]}]}`+"\n"), CustomDatasetType: TypeSingleTurn})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Conversations[0].Turns[0]; got.Text != "Hello\nWorld\nHi there" || got.Passages != nil {
		t.Errorf("named texts became %+v, want their contents one a line", got)
	}
	for _, bad := range []struct{ line, want string }{
		{`{"texts":[{"name":"passages","contents":["x"]}]}`, `"texts" has no contents (besides passages)`},
		{`{"texts":[1]}`, `"texts" must be a list of strings`},
	} {
		_, _, err := Load(Options{InputFile: writeFile(t, "b.jsonl", bad.line+"\n"), CustomDatasetType: TypeSingleTurn})
		if err == nil || !strings.Contains(err.Error(), ":1: "+bad.want) {
			t.Errorf("%s: error %v, want line 1 %q", bad.line, err, bad.want)
		}
	}
}
