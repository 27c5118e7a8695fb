package vllmbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
)

// TestFirstPairs: vLLM keeps an entry with two messages or more, as its
// first two, whatever their roles; a bad file is an error naming where.
func TestFirstPairs(t *testing.T) {
	t.Parallel()
	in := `[{"conversations": [{"from": "gpt", "value": "p1"}, {"from": "human", "value": "r1"}, {"from": "gpt", "value": "x"}]},
	 {"conversations": [{"from": "human", "value": "only"}]},
	 {"id": "no conversations"},
	 {"conversations": [{"from": "human", "value": "p2"}, {"from": "gpt", "value": "r2"}]}]`
	var out bytes.Buffer
	if err := shareGPTFirstPairs(strings.NewReader(in), &out, "s.json"); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Conversations []struct{ From, Value string } `json:"conversations"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(got) != 2 || got[0].Conversations[0].Value != "p1" || got[0].Conversations[0].From != "human" ||
		got[0].Conversations[1].Value != "r1" || len(got[0].Conversations) != 2 || got[1].Conversations[1].Value != "r2" {
		t.Errorf("%+v", got)
	}
	for _, bad := range []string{`{}`, `[{"conversations": [{"value": 1}, {"value": "x"}]}]`, `[{"conversations": 3}]`, `[{"conversations": [{"value": "a"}, {"value": "b"}]}`, `[]`} {
		var ue *cmdline.UsageError
		if err := shareGPTFirstPairs(strings.NewReader(bad), &bytes.Buffer{}, "s.json"); err == nil || !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "s.json:") {
			t.Errorf("%s: %v, want a usage error naming s.json", bad, err)
		}
	}
}

// TestCustomLines: vLLM's {"prompt": …} lines become single_turn lines
// capped at the output length; a line without a prompt names its line.
func TestCustomLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := customLines(strings.NewReader("{\"prompt\": \"a\", \"x\": 1}\n\n{\"prompt\": \"b\"}\n"), &out, "d.jsonl", 7); err != nil {
		t.Fatal(err)
	}
	if want := "{\"output_length\":7,\"text\":\"a\"}\n{\"output_length\":7,\"text\":\"b\"}\n"; out.String() != want {
		t.Errorf("got %q", out.String())
	}
	for bad, where := range map[string]string{"{\"prompt\": \"a\"}\n{\"q\": 1}\n": "d.jsonl:2:", "[1]\n": "d.jsonl:1:", "{\"prompt\": 3}\n": "d.jsonl:1:", "": "d.jsonl:1:"} {
		if err := customLines(strings.NewReader(bad), &bytes.Buffer{}, "d.jsonl", 7); err == nil || !strings.HasPrefix(err.Error(), where) {
			t.Errorf("%q: %v, want an error at %s", bad, err, where)
		}
	}
}

// TestBurstGPTRows: the GPT-4 rows with a positive response, as vLLM
// keeps them, in surge's burst_gpt_trace columns.
func TestBurstGPTRows(t *testing.T) {
	t.Parallel()
	in := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,10,20,30,Conversation log\n6,GPT-4,11,0,11,API log\n7,GPT-4,12,21,33,API log\n"
	var out bytes.Buffer
	if err := burstGPTRows(strings.NewReader(in), &out, "b.csv"); err != nil {
		t.Fatal(err)
	}
	if want := "Timestamp,Request tokens,Response tokens\n7,12,21\n"; out.String() != want {
		t.Errorf("got %q", out.String())
	}
	for bad, where := range map[string]string{"Timestamp,Model\n": "b.csv:1:", "Timestamp,Model,Request tokens,Response tokens\n1,GPT-4,2,x\n": "b.csv:2:",
		"Timestamp,Model,Request tokens,Response tokens\n1,GPT-4,2\n": "b.csv:2:", "Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT,2,3\n": "b.csv:2:"} {
		if err := burstGPTRows(strings.NewReader(bad), &bytes.Buffer{}, "b.csv"); err == nil || !strings.HasPrefix(err.Error(), where) {
			t.Errorf("%q: %v, want an error at %s", bad, err, where)
		}
	}
}

// The readers of vLLM's dataset files take any input without a panic:
// a rewrite or a usage error.
func FuzzShareGPTFirstPairs(f *testing.F) {
	f.Add(`[{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}]}]`)
	f.Add(`[{"conversations": [1, 2]}]`)
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		if err := shareGPTFirstPairs(strings.NewReader(in), &out, "f"); err == nil && !json.Valid(out.Bytes()) {
			t.Fatalf("%q: wrote invalid JSON %q", in, out.String())
		}
	})
}

func FuzzCustomLines(f *testing.F) {
	f.Add("{\"prompt\": \"a\"}\n")
	f.Add("{\"prompt\": null}\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		_ = customLines(strings.NewReader(in), &bytes.Buffer{}, "f", 3)
	})
}

func FuzzBurstGPTRows(f *testing.F) {
	f.Add("Timestamp,Model,Request tokens,Response tokens\n1,GPT-4,2,3\n")
	f.Add("\ufeffTimestamp,Model,Request tokens,Response tokens\n\"1\",GPT-4,2,-1\n")
	f.Fuzz(func(t *testing.T, in string) {
		_ = burstGPTRows(strings.NewReader(in), &bytes.Buffer{}, "f")
	})
}
