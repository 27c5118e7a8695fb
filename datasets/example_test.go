package datasets_test

import (
	"fmt"

	"github.com/surgebench/surge/datasets"
)

// ExampleLoad replays the first 200 rows of the Mooncake trace: prompts are
// built from shared prefix blocks, timestamps come from the trace.
func ExampleLoad() {
	d, rep, err := datasets.Load(datasets.Options{
		InputFile:         "testdata/mooncake_head200.jsonl",
		CustomDatasetType: datasets.TypeMooncake,
		Seed:              42,
	})
	if err != nil {
		fmt.Println(err) // an *datasets.InputError: exit 2
		return
	}
	for _, line := range rep.Lines {
		fmt.Println(line)
	}
	t := d.Conversations[0].Turns[0]
	fmt.Println(t.InputTokens, t.MaxTokens, t.HasTimestamp)
	// Output:
	// dataset: mooncake_trace testdata/mooncake_head200.jsonl: 200 rows → 200 conversations, 200 turns (timestamped: replayable with --fixed-schedule)
	// dataset: 5537 prompt blocks of 512 tokens (equal hash ids, equal text), spelled out as each request is sent
	// 6758 500 true
}

// ExampleSynthetic builds prompts of exactly 128 tokens under the embedded
// Qwen3 tokenizer.
func ExampleSynthetic() {
	d, err := datasets.Synthetic(datasets.SyntheticOptions{Count: 2, ISL: 128, OSL: 32, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range d.Conversations {
		fmt.Println(c.ID, c.Turns[0].InputTokens, c.Turns[0].MaxTokens)
	}
	// Output:
	// synthetic-0 128 32
	// synthetic-1 128 32
}
