package datasets

import (
	"regexp"
	"strings"
	"testing"
)

// TestCacheBustMarker: AIPerf's marker shape, the blank line on the side
// of the content, equal for equal seed and key and apart otherwise.
func TestCacheBustMarker(t *testing.T) {
	t.Parallel()
	p := CacheBustMarker(CacheBustFirstTurnPrefix, 1, "a")
	if !regexp.MustCompile(`^\[rid:[0-9a-f]{12}\]\n\n$`).MatchString(p) {
		t.Errorf("prefix marker %q", p)
	}
	if s := CacheBustMarker(CacheBustSystemSuffix, 1, "a"); s != "\n\n"+strings.TrimSpace(p) {
		t.Errorf("suffix marker %q, prefix %q", s, p)
	}
	if CacheBustMarker(CacheBustFirstTurnPrefix, 1, "a") != p || CacheBustMarker(CacheBustFirstTurnPrefix, 1, "b") == p || CacheBustMarker(CacheBustFirstTurnPrefix, 2, "a") == p {
		t.Errorf("markers are not the seed's and key's")
	}
	for _, ok := range []string{"", "none", "System_Prefix", "first_turn_suffix"} {
		if _, err := ParseCacheBust(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if _, err := ParseCacheBust("everywhere"); err == nil {
		t.Errorf("a bad target was taken")
	}
}

// TestMarkConversation: each target puts the marker where AIPerf's worker
// does, in every shape a first turn has, and leaves the original alone.
func TestMarkConversation(t *testing.T) {
	t.Parallel()
	const m = "[rid:x]\n\n"
	const sm = "\n\n[rid:x]"
	msgs := func() []map[string]any {
		return []map[string]any{{"role": "system", "content": "sys"}, {"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}
	}
	for _, tc := range []struct {
		name   string
		conv   Conversation
		target string
		marker string
		check  func(c *Conversation) bool
	}{
		{"system prompt", Conversation{SystemPrompt: "be brief", Turns: []Turn{{Text: "q"}}}, CacheBustSystemPrefix, m,
			func(c *Conversation) bool { return c.SystemPrompt == m+"be brief" && c.Turns[0].Text == "q" }},
		{"no system prompt: the first turn", Conversation{Turns: []Turn{{Text: "q", InputTokens: 3}}}, CacheBustSystemSuffix, sm,
			func(c *Conversation) bool { return c.Turns[0].Text == "q"+sm && c.Turns[0].InputTokens == 10 }},
		{"text", Conversation{Turns: []Turn{{Text: "q"}, {Text: "r"}}}, CacheBustFirstTurnPrefix, m,
			func(c *Conversation) bool { return c.Turns[0].Text == m+"q" && c.Turns[1].Text == "r" }},
		{"parts", Conversation{Turns: []Turn{{Parts: []string{"a", "b"}}}}, CacheBustFirstTurnSuffix, sm,
			func(c *Conversation) bool { return c.Turns[0].Content() == "ab"+sm }},
		{"messages: system", Conversation{Turns: []Turn{{Messages: msgs()}}}, CacheBustSystemPrefix, m,
			func(c *Conversation) bool { return c.Turns[0].Messages[0]["content"] == m+"sys" }},
		{"messages: user parts", Conversation{Turns: []Turn{{Messages: msgs()}}}, CacheBustFirstTurnPrefix, m,
			func(c *Conversation) bool {
				parts := c.Turns[0].Messages[1]["content"].([]any)
				return len(parts) == 2 && parts[0].(map[string]any)["text"] == "[rid:x]"
			}},
	} {
		before := tc.conv
		before.Turns = append([]Turn(nil), tc.conv.Turns...)
		got := MarkConversation(&tc.conv, tc.target, tc.marker, 7)
		if !tc.check(got) {
			t.Errorf("%s: %+v", tc.name, got)
		}
		if tc.conv.SystemPrompt != before.SystemPrompt || tc.conv.Turns[0].Text != before.Turns[0].Text || tc.conv.Turns[0].Content() != before.Turns[0].Content() {
			t.Errorf("%s: the original changed: %+v", tc.name, tc.conv)
		}
		if msgs := tc.conv.Turns[0].Messages; msgs != nil {
			if msgs[0]["content"] != "sys" || len(msgs[1]["content"].([]any)) != 1 {
				t.Errorf("%s: the original messages changed: %v", tc.name, msgs)
			}
		}
	}
	if err := CheckCacheBust(&Dataset{Conversations: []Conversation{{ID: "x", Turns: []Turn{{Body: []byte("{}")}}}}}); err == nil {
		t.Errorf("a recorded body took a marker")
	}
}

// TestMarkTracePrompt: a trace's turn, kept as shared blocks, takes the
// marker in a copy spelt out for the session; a later turn that carries
// its whole context opens with it too, in its thread when it has one;
// the shared prompt and thread are kept.
func TestMarkTracePrompt(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "trace.jsonl", `{"timestamp": 0, "input_length": 40, "output_length": 4, "hash_ids": [0, 1]}`+"\n")
	d, _, err := Load(Options{InputFile: path, CustomDatasetType: TypeMooncake, ISLBlockSize: 20})
	if err != nil {
		t.Fatal(err)
	}
	first := d.Conversation(0).Turns[0]
	if first.Prompt == nil {
		t.Fatal("the trace's turn is not kept as blocks")
	}
	text := first.Content()
	thread := []Message{{Role: "user", Parts: []string{text}}, {Role: "assistant", Text: "ok"}}
	c := &Conversation{Turns: []Turn{first,
		{Prompt: first.Prompt, Standalone: true, InputTokens: 40},
		{Thread: thread, Text: "next", Standalone: true},
		{Text: "with history"}}}
	const m = "[rid:x]\n\n"
	got := MarkConversation(c, CacheBustFirstTurnPrefix, m, 5)
	for i, want := range []string{m + text, m + text, m + text + "\nok\nnext", "with history"} {
		if s := got.Turns[i].Content(); s != want {
			t.Errorf("turn %d: %q, want %q", i, s, want)
		}
	}
	if got.Turns[0].InputTokens != first.InputTokens+5 || got.Turns[1].InputTokens != 45 {
		t.Errorf("input tokens %d, %d", got.Turns[0].InputTokens, got.Turns[1].InputTokens)
	}
	if c.Turns[0].Prompt == nil || c.Turns[0].Content() != text || thread[0].Parts[0] != text {
		t.Errorf("the shared prompt or thread changed")
	}
}
