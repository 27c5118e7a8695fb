package datasets

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// traceMeans reads a sample's recorded input and output lengths the plain
// way (independently of the loaders) and returns their means and count.
func traceMeans(t *testing.T, kind, path string) (isl, osl float64, n int) {
	t.Helper()
	add := func(in, out float64) { isl += in; osl += out; n++ }
	switch kind {
	case TypeBurstGPT:
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs[1:] {
			in, _ := strconv.Atoi(r[2])
			out, _ := strconv.Atoi(r[3])
			add(float64(in), float64(out))
		}
	case TypeWeka:
		files, _ := filepath.Glob(filepath.Join(path, "*.json"))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var tr struct {
				Requests []struct {
					Type     string
					In, Out  float64
					Requests []struct{ In, Out float64 }
				}
			}
			if err := json.Unmarshal(b, &tr); err != nil {
				t.Fatal(err)
			}
			for _, r := range tr.Requests {
				if r.Type != "subagent" {
					add(r.In, r.Out)
				}
				for _, c := range r.Requests {
					add(c.In, c.Out)
				}
			}
		}
	default:
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r struct {
				InputLength  float64 `json:"input_length"`
				OutputLength float64 `json:"output_length"`
				InputTokens  float64 `json:"input_tokens"`
				OutputTokens float64 `json:"output_tokens"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			add(r.InputLength+r.InputTokens, r.OutputLength+r.OutputTokens)
		}
	}
	return isl / float64(n), osl / float64(n), n
}

// TestTraceFormats loads each trace sample and checks AIPerf's row count,
// timestamps, and that the prompts sent have the trace's mean input and
// output lengths within 1% (tokenized with the embedded tokenizer, the
// one the prompts were built for), and a golden summary of every turn.
func TestTraceFormats(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	for _, tc := range []struct {
		kind, path           string
		rows, convs, turns   int
		golden               string
		headline, extraLines string
	}{
		{TypeBailian, "testdata/bailian_sample.jsonl", 39, 12, 39, "bailian_sample.txt", "", ""},
		{TypeBurstGPT, "testdata/burstgpt_sample.csv", 60, 60, 60, "burstgpt_sample.txt", "", ""},
		{TypeBaseten, "testdata/baseten_sample.jsonl", 17, 7, 17, "baseten_sample.txt", "", ""},
		{TypeWeka, "testdata/weka", 24, 5, 24, "weka_sample.txt", "", ""},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			d, rep, err := Load(Options{InputFile: tc.path, CustomDatasetType: tc.kind, Tokenizer: tok, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Rows != tc.rows || rep.Conversations != tc.convs || rep.Turns != tc.turns || !d.HasTimestamps() || d.Type != tc.kind {
				t.Fatalf("rows %d conversations %d turns %d timestamps %v: %v", rep.Rows, rep.Conversations, rep.Turns, d.HasTimestamps(), rep.Lines)
			}
			golden(t, tc.golden, summary(d)+strings.Join(rep.Lines, "\n")+"\n")
			isl, osl, n := traceMeans(t, tc.kind, tc.path)
			if n != tc.rows {
				t.Fatalf("the sample has %d rows, the loader counted %d", n, tc.rows)
			}
			var sent, caps float64
			for _, c := range d.Conversations {
				for i := range c.Turns {
					tr := &c.Turns[i]
					sent += float64(len(tok.Encode(tr.Content())))
					caps += float64(tr.MaxTokens)
				}
			}
			sent /= float64(tc.turns)
			caps /= float64(tc.turns)
			t.Logf("%s: ISL mean %.2f sent vs %.2f in the trace (%+.3f%%), OSL mean %.2f vs %.2f (%+.3f%%)",
				tc.kind, sent, isl, 100*(sent-isl)/isl, caps, osl, 100*(caps-osl)/osl)
			if math.Abs(sent-isl) > 0.01*isl || math.Abs(caps-osl) > 0.01*osl {
				t.Errorf("means off by more than 1%%: ISL %.2f vs %.2f, OSL %.2f vs %.2f", sent, isl, caps, osl)
			}
		})
	}
}

// TestBailianSessions: parent_chat_id chains become conversations ordered
// by turn; every turn is standalone (its length counts its history); the
// think time is the arrival gap; equal hash ids are equal text.
func TestBailianSessions(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	path := writeFile(t, "b.jsonl", `{"chat_id": 7, "parent_chat_id": 5, "timestamp": 3.5, "input_length": 70, "output_length": 9, "type": "text", "turn": 2, "hash_ids": [1, 2, 3, 4, 9]}
{"chat_id": 5, "parent_chat_id": -1, "timestamp": 1.25, "input_length": 40, "output_length": 12, "type": "text", "turn": 1, "hash_ids": [1, 2, 3]}
{"chat_id": 8, "parent_chat_id": -1, "timestamp": 2, "input_length": 33, "output_length": 0, "type": "image", "turn": 1, "hash_ids": [1]}
{"chat_id": 9, "parent_chat_id": 77, "timestamp": 4, "input_length": 16, "output_length": 4, "type": "text", "turn": 3}
`)
	d, rep, err := Load(Options{InputFile: path, Tokenizer: tok, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeBailian {
		t.Fatalf("guessed %s", rep.Type)
	}
	var ids []string
	for _, c := range d.Conversations {
		ids = append(ids, c.ID+":"+strconv.Itoa(len(c.Turns)))
	}
	// 7's parent 5 is the root; 9's parent is missing, so 9 is its own root.
	if got := strings.Join(ids, " "); got != "bailian-5:2 bailian-8:1 bailian-9:1" {
		t.Fatalf("conversations %s", got)
	}
	s := d.Conversations[0]
	if s.Turns[0].InputTokens != 40 || s.Turns[1].InputTokens != 70 || !s.Turns[0].Standalone || !s.Turns[1].Standalone {
		t.Errorf("turn order or standalone: %+v", s.Turns)
	}
	if s.Turns[0].Timestamp != 1250*time.Millisecond || s.Turns[1].Delay != 2250*time.Millisecond {
		t.Errorf("timing: ts %v delay %v", s.Turns[0].Timestamp, s.Turns[1].Delay)
	}
	// Blocks 1–3 of the first turn open the second; block 1 opens row 8's.
	first := s.Turns[0].Content()
	if !strings.HasPrefix(s.Turns[1].Content(), first[:len(first)/2]) {
		t.Errorf("the follow-up does not repeat its history's blocks")
	}
	b1 := d.Conversations[1].Turns[0].Content()
	if !strings.HasPrefix(first, b1[:8]) {
		t.Errorf("hash id 1 is not the same text in two conversations")
	}
	for _, c := range d.Conversations {
		for _, tr := range c.Turns {
			if n := len(tok.Encode(tr.Content())); n < tr.InputTokens-1 || n > tr.InputTokens+1 {
				t.Errorf("%s: %d tokens, want %d±1", c.ID, n, tr.InputTokens)
			}
		}
	}
}

// TestWekaAgents: a trace's top-level calls are one conversation, each
// subagent one of its own; think times run from the previous call's end;
// hash ids are local to a trace.
func TestWekaAgents(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	d, rep, err := Load(Options{InputFile: "testdata/weka", CustomDatasetType: TypeWeka, Tokenizer: tok, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range d.Conversations {
		ids = append(ids, c.ID)
	}
	want := "trace-01 trace-02 trace-01::sa:agent_001 trace-01::sa:agent_002 trace-02::sa:agent_001"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("conversations %q, want %q (%v)", got, want, rep.Lines)
	}
	var tr WekaTrace
	f, err := os.Open("testdata/weka/session_01.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParseWekaTrace(f, "session_01.json")
	if err != nil {
		t.Fatal(err)
	}
	tr = *p
	root := d.Conversations[0]
	r0, r1 := tr.Requests[0], tr.Requests[1]
	if got, want := root.Turns[1].Delay, millis((r1.T-(r0.T+r0.APITime))*1000); got != want || got <= 0 {
		t.Errorf("delay %v, want the idle gap %v", got, want)
	}
	if root.Turns[0].Timestamp != millis(r0.T*1000) || !root.Turns[0].Standalone {
		t.Errorf("first turn %+v", root.Turns[0])
	}
	// Growing context: each call's prompt opens with the previous call's
	// full blocks.
	for k := 1; k < 3; k++ {
		prev, cur := root.Turns[k-1].Content(), root.Turns[k].Content()
		if n := len(prev) / 2; prev[:n] != cur[:n] {
			t.Errorf("call %d does not repeat call %d's leading blocks", k, k-1)
		}
	}
	// Block 0 of trace-02 is not block 0 of trace-01 (local scope).
	if blockText(&d.Conversations[0].Turns[0], 0) == blockText(&d.Conversations[1].Turns[0], 0) {
		t.Errorf("hash id 0 is shared across traces")
	}
	if !strings.Contains(strings.Join(rep.Lines, "\n"), "calls after a tool use") {
		t.Errorf("report: %v", rep.Lines)
	}
}

// TestBasetenSessions: sessions by the repeated id, min_tokens and the
// recorded KV hints sent with each turn; open loop by default (every turn
// keeps its recorded time), closed loop on request (the think time from
// the previous request's recorded end).
func TestBasetenSessions(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "b.jsonl", basetenTwoSessions)
	d, rep, err := Load(Options{InputFile: path, Tokenizer: qwen(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != TypeBaseten || len(d.Conversations) != 2 {
		t.Fatalf("type %s, %d conversations", rep.Type, len(d.Conversations))
	}
	b, x := d.Conversations[0], d.Conversations[1]
	if b.ID != "baseten-m:2" || b.Turns[0].Timestamp != 0 || b.Turns[0].MaxTokens != 1 || b.Turns[0].Extra["min_tokens"] != 1 || b.OpenLoop {
		t.Errorf("first session %+v", b)
	}
	if x.ID != "baseten-p:x" || len(x.Turns) != 2 || x.Turns[0].Timestamp != 4*time.Second || !x.OpenLoop ||
		x.Turns[1].Timestamp != 8*time.Second || x.Turns[1].Delay != 0 || x.Turns[1].Extra["min_tokens"] != 8 || !x.Turns[1].Standalone {
		t.Errorf("session x %+v", x)
	}
	if h, _ := x.Turns[1].Extra["hash_ids"].([]int64); len(h) != 2 || x.Turns[1].Extra["block_size"] != 32 {
		t.Errorf("KV hints %v", x.Turns[1].Extra)
	}

	d, _, err = Load(Options{InputFile: path, Tokenizer: qwen(t), Replay: ReplayOptions{ClosedLoop: true}})
	if err != nil {
		t.Fatal(err)
	}
	if x := d.Conversations[1]; x.OpenLoop || x.Turns[1].Delay != 3300*time.Millisecond {
		t.Errorf("closed loop: session x %+v", x)
	}
}

// basetenTwoSessions is a Baseten trace of a session of two turns (x) and
// one of a single row.
const basetenTwoSessions = `{"timestamp_start_unix_ms": 5000, "prompt": "A", "input_tokens": 1, "output_tokens": 4, "provided_session_id": "x", "poor_man_session_id": 1, "duration_e2e_ms": 700}
{"timestamp_start_unix_ms": 1000, "prompt": "B", "input_tokens": 1, "output_tokens": 0, "provided_session_id": null, "poor_man_session_id": 2}
{"timestamp_start_unix_ms": 9000, "prompt": "A more", "input_tokens": 2, "output_tokens": 8, "provided_session_id": "x", "total_hashes": [1, 2], "block_size": 32}
`

// TestTraceBadInput: every format's errors name file:line.
func TestTraceBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind, name, content, want string
	}{
		{TypeBailian, "b.jsonl", `{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 5, "output_length": 1, "turn": 1}` + "\n" + `{"chat_id": 2, "parent_chat_id": -1, "timestamp": 0, "input_length": 5, "output_length": 1}`, `b.jsonl:2: missing required field "turn"`},
		{TypeBailian, "b.jsonl", `{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 5, "output_length": 1, "turn": 1}` + "\n\n" + `{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 5, "output_length": 1, "turn": 1}`, `b.jsonl:3: chat_id 1 already used on line 1`},
		{TypeBailian, "b.jsonl", `{"chat_id": 1, "parent_chat_id": -1, "timestamp": -2, "input_length": 5, "output_length": 1, "turn": 1}`, `b.jsonl:1: timestamp -2: must not be negative`},
		{TypeBurstGPT, "g.csv", "Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT,3,4\n2,ChatGPT,x,4\n", `g.csv:3: Request tokens "x": want a non-negative integer`},
		{TypeBurstGPT, "g.csv", "Timestamp,Model,Response tokens\n1,a,3\n", `g.csv:1: header: missing column "Request tokens"`},
		{TypeBurstGPT, "g.csv", "Timestamp,Model,Request tokens,Response tokens\n1,\"a,3,4\n", `g.csv:2: malformed CSV`},
		{TypeBaseten, "t.jsonl", `{"timestamp_start_unix_ms": 1, "prompt": "a", "input_tokens": 1}`, `t.jsonl:1: missing required field "output_tokens"`},
		{TypeBaseten, "t.jsonl", `{"timestamp_start_unix_ms": 1, "prompt": "a", "input_tokens": 1, "output_tokens": 1, "provided_session_id": [1]}`, `t.jsonl:1: provided_session_id: want a string`},
		{TypeWeka, "w.json", "{\"id\": \"a\", \"models\": [], \"block_size\": 64, \"hash_id_scope\": \"local\",\n \"requests\": [\n  {\"t\": 0, \"type\": \"n\", \"model\": \"m\", \"in\": 5, \"out\": 1},\n  {\"t\": 1, \"type\": \"n\", \"model\": \"m\", \"in\": 5}\n]}", `w.json:4: requests[1]: missing required field "out"`},
		{TypeWeka, "w.json", "{\"id\": \"a\", \"models\": [], \"block_size\": 64, \"hash_id_scope\": \"global\", \"requests\": []}", `w.json: hash_id_scope "global": only "local"`},
		{TypeWeka, "w.json", "{\"id\": \"a\",\n \"color\": 1}", `w.json:2: unknown field "color"`},
		{TypeWeka, "w.json", "{\"id\": \"a\", \"models\": [], \"block_size\": 64, \"hash_id_scope\": \"local\",\n \"requests\": [\n  {\"t\": 0, \"type\": \"n\", \"model\": \"m\", \"in\": 5, \"out\": 1, \"agent_id\": \"x\"}]}", `w.json:3: requests[0]: field "agent_id" is not allowed in a "n" request`},
		{TypeInputsJSON, "i.json", "{\"data\": [\n{\"session_id\": \"a\", \"payloads\": [{\"x\": 1}]},\n{\"session_id\": \"b\", \"payloads\": [[1]]}]}", `i.json:3: payloads[0]: want a JSON object`},
		{TypeInputsJSON, "i.json", "{\"data\": [\n{\"session_id\": \"a\",\n \"payloads\": [{\"x\": 1}]},\n{\"payloads\": [1,", `i.json:4: malformed JSON: unexpected end of file`},
		{TypeRawPayload, "r.jsonl", "{\"messages\": []}\n[]\n", `r.jsonl:2: want a JSON object`},
		{TypeRawPayload, "r.jsonl", "{\"messages\": []}\n{\"a\": \n", `r.jsonl:2: malformed JSON`},
	} {
		t.Run(tc.kind+"/"+tc.want, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := Load(Options{InputFile: path, CustomDatasetType: tc.kind, Tokenizer: qwen(t)})
			if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, tc.want)) {
				t.Errorf("got %v, want %s…", err, tc.want)
			}
			checkInputError(t, err, path)
		})
	}
}

// TestRawPayload: a file sends each line as a conversation, a directory
// each *.jsonl file as one, its lines the turns; bodies go byte for byte.
func TestRawPayload(t *testing.T) {
	t.Parallel()
	one := `{"model": "m",  "messages": [{"role": "user", "content": "hi"}], "max_tokens": 12}`
	two := `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"again"}]}`
	file := writeFile(t, "p.jsonl", one+"\n\n"+two+"\n")
	d, rep, err := Load(Options{InputFile: file, CustomDatasetType: TypeRawPayload})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 2 || len(d.Conversations) != 2 || string(d.Conversations[0].Turns[0].Body) != one ||
		d.Conversations[0].Turns[0].MaxTokens != 12 || d.Conversations[1].ID != "line-3" {
		t.Fatalf("file: %v %+v", rep.Lines, d.Conversations)
	}
	if got := d.Conversations[1].Turns[0].Content(); got != "hi\nyo\nagain" {
		t.Errorf("content %q", got)
	}
	dir := t.TempDir()
	for name, content := range map[string]string{"b.jsonl": one + "\n" + two + "\n", "a.jsonl": two + "\n", "notes.txt": "x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, rep, err = Load(Options{InputFile: dir, CustomDatasetType: TypeRawPayload})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 3 || len(d.Conversations) != 2 || d.Conversations[0].ID != "a.jsonl" || len(d.Conversations[1].Turns) != 2 ||
		string(d.Conversations[1].Turns[1].Body) != two || !d.Conversations[1].Turns[1].Standalone {
		t.Fatalf("directory: %v %+v", rep.Lines, d.Conversations)
	}
}
