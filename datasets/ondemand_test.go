package datasets

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/surgebench/surge/datasets/media"
)

// TestOnDemandIsTheHeldDataset: conversation i built on demand is the
// conversation i Load holds, for synthetic prompts (one and several
// turns, prefixes, a system prompt, delays scaled) and random_pool draws;
// Turns and UniformTurns agree with what is built.
func TestOnDemandIsTheHeldDataset(t *testing.T) {
	t.Parallel()
	pool := writeFile(t, "p.jsonl", "{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": \"c\"}\n")
	sessions := writeFile(t, "s.jsonl", `{"session_id": "a", "timestamp": 10, "input_length": 20, "output_length": 5, "hash_ids": [0, 1]}
{"session_id": "b", "timestamp": 20, "text": "hello there", "output_length": 3}
{"session_id": "a", "delay": 1500, "input_length": 40, "hash_ids": [0, 1, 2]}
{"timestamp": 30.5, "input_length": 25}
{"session_id": "d", "message_mode": "delta", "messages": [{"role": "user", "content": "next"}], "timestamp": 40}
{"payload": {"prompt": "Hello", "max_tokens": 50}, "timestamp": 1000}
{"input_length": 10, "hash_ids": [123], "extra": {"temperature": 0.5}, "timestamp": 1001}
{"session_id": "b", "input_length": 33, "delay": 5}
`)
	unstamped := writeFile(t, "u.jsonl", `{"input_length": 20}`+"\n"+`{"input_length": 30, "timestamp": 5}`+"\n")
	cases := []struct {
		name    string
		o       Options
		uniform int
	}{
		{"single turn", Options{Seed: 3, Synthetic: SyntheticOptions{Count: 50, ISL: 40, ISLStddev: 10, OSL: 8}}, 1},
		{"multi-turn", Options{Seed: 4, TurnDelayRatio: 0.5, Synthetic: SyntheticOptions{Count: 30, ISL: 20, Turns: 3, TurnsStddev: 1,
			TurnDelay: 100 * time.Millisecond, TurnDelayStddev: 20 * time.Millisecond}}, 0},
		{"fixed turns", Options{Seed: 4, NoTurnDelays: true, Synthetic: SyntheticOptions{Count: 10, ISL: 20, Turns: 2, TurnDelay: time.Second}}, 2},
		{"prefixes and a system prompt", Options{Seed: 5, Synthetic: SyntheticOptions{Count: 20, ISL: 30, PrefixPoolSize: 3, PrefixLength: 12, SharedSystemPromptLength: 40}}, 1},
		{"random pool", Options{Seed: 6, InputFile: pool, CustomDatasetType: TypeRandomPool, Synthetic: SyntheticOptions{Count: 40}}, 1},
		{"mooncake trace", Options{Seed: 7, InputFile: "testdata/mooncake_head200.jsonl", CustomDatasetType: TypeMooncake}, 1},
		{"mooncake sessions, texts, messages, payloads", Options{Seed: 8, InputFile: sessions, CustomDatasetType: TypeMooncake, ISLBlockSize: 16}, 0},
		{"mooncake without timestamps", Options{InputFile: unstamped, CustomDatasetType: TypeMooncake}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			held, _, err := Load(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			o := tc.o
			o.OnDemand = true
			lazy, rep, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if lazy.Source == nil || lazy.Conversations != nil || lazy.Len() != held.Len() {
				t.Fatalf("on demand: source %v, %d held, Len %d; want a source of %d", lazy.Source != nil, len(lazy.Conversations), lazy.Len(), held.Len())
			}
			if !strings.Contains(rep.Lines[0], "built as they are sent") {
				t.Errorf("report %q", rep.Lines[0])
			}
			if got := lazy.Source.UniformTurns(); got != tc.uniform {
				t.Errorf("UniformTurns %d, want %d", got, tc.uniform)
			}
			if held.HasTimestamps() != lazy.HasTimestamps() {
				t.Errorf("HasTimestamps: held %v, on demand %v", held.HasTimestamps(), lazy.HasTimestamps())
			}
			for i := range held.Len() {
				c := lazy.Conversation(i)
				at, ok := lazy.Timestamp(i)
				if wat, wok := held.Timestamp(i); at != wat || ok != wok {
					t.Errorf("conversation %d: Timestamp %v %v, held %v %v", i, at, ok, wat, wok)
				}
				if diff := cmp.Diff(held.Conversation(i), c, samePrompt); diff != "" {
					t.Fatalf("conversation %d (-held +on demand):\n%s", i, diff)
				}
				if n := lazy.Turns(i); n != len(c.Turns) || n != held.Turns(i) {
					t.Errorf("conversation %d: Turns %d, built %d", i, n, len(c.Turns))
				}
			}
		})
	}
}

// TestOnDemandWithoutEnd: with no count, conversations on demand go on
// (OnDemandLen of them, none the same as another), each built alone in
// the time of one, however far in.
func TestOnDemandWithoutEnd(t *testing.T) {
	t.Parallel()
	d, rep, err := LoadContext(context.Background(), Options{Seed: 1, OnDemand: true, Synthetic: SyntheticOptions{ISL: 64, OSL: 16}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != OnDemandLen || !strings.Contains(rep.Lines[0], "none repeated") {
		t.Fatalf("Len %d, report %q", d.Len(), rep.Lines[0])
	}
	tok := qwen(t)
	seen := map[string]int{}
	for _, i := range []int{0, 1, 2, 99_999_999_999, OnDemandLen - 1} {
		start := time.Now()
		c := d.Conversation(i)
		if el := time.Since(start); el > time.Second {
			t.Errorf("conversation %d took %s", i, el)
		}
		text := c.Turns[0].Content()
		if n := len(tok.Encode(text)); n < 63 || n > 65 || c.Turns[0].InputTokens != 64 {
			t.Errorf("conversation %d: %d tokens, InputTokens %d", i, n, c.Turns[0].InputTokens)
		}
		if j, dup := seen[text]; dup {
			t.Errorf("conversations %d and %d are the same prompt", j, i)
		}
		seen[text] = i
	}
}

// TestHeldCountsAreBounded: a count too large to hold is refused, naming
// the way out; media cannot be built on demand.
func TestHeldCountsAreBounded(t *testing.T) {
	t.Parallel()
	pool := writeFile(t, "p.jsonl", "{\"text\": \"a\"}\n")
	cases := []struct {
		o    Options
		want string
	}{
		{Options{Synthetic: SyntheticOptions{Count: MaxHeldConversations + 1, ISL: 10}}, "Synthetic.Count 4194305 is over the 4194304 conversations held in memory"},
		{Options{InputFile: pool, CustomDatasetType: TypeRandomPool, Synthetic: SyntheticOptions{Count: 1 << 40}}, "Synthetic.Count 1099511627776 random_pool draws are over"},
		{Options{OnDemand: true, Synthetic: SyntheticOptions{ISL: 10, Images: media.ImageOptions{BatchSize: 1, WidthMean: 8, HeightMean: 8}}}, "Synthetic.Images are drawn in order"},
		{Options{Synthetic: SyntheticOptions{Count: 1, ISL: 10, Turns: 1 << 20}}, "Synthetic.Turns and its stddev must be at most 65536"},
	}
	for _, tc := range cases {
		start := time.Now()
		_, _, err := Load(tc.o)
		var oe *OptionError
		if !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want %q…", err, tc.want)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("refusing took %s", el)
		}
	}
}

// TestContentPrefix: a turn's content prefix is the start of its content,
// for generated prompts of blocks, prompts of parts, text and messages.
func TestContentPrefix(t *testing.T) {
	t.Parallel()
	trace := writeFile(t, "t.jsonl", `{"input_length": 1200, "hash_ids": [4, 9, 1]}`+"\n"+`{"input_length": 300}`+"\n"+
		`{"messages": [{"role": "user", "content": "hello there"}]}`+"\n"+`{"text_input": "plain text"}`+"\n")
	azure := writeFile(t, "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,9000,44\n")
	var turns []Turn
	for _, o := range []Options{
		{InputFile: trace, CustomDatasetType: TypeMooncake},
		{InputFile: azure, CustomDatasetType: TypeAzure},
		{Synthetic: SyntheticOptions{Count: 2, ISL: 5000}},
	} {
		d, _, err := Load(o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range d.Len() {
			turns = append(turns, d.Conversation(i).Turns...)
		}
	}
	for k, tr := range turns {
		full := tr.Content()
		for _, n := range []int{0, 1, 7, 100, 2049, 5000, len(full), len(full) + 5} {
			want := full[:min(n, len(full))]
			if got := tr.ContentPrefix(n); got != want {
				t.Errorf("turn %d, prefix of %d: %d bytes, want %d (%q…)", k, n, len(got), len(want), want[:min(len(want), 20)])
			}
		}
	}
}

// samePrompt compares generated prompts by their text.
var samePrompt = cmp.Comparer(func(a, b *Prompt) bool {
	return a == nil && b == nil || a != nil && b != nil && a.String() == b.String()
})
