package datasets

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoadMooncakeFull loads the whole 12,031-row Mooncake trace and
// builds every prompt (issue requirement: under 2 s).
func BenchmarkLoadMooncakeFull(b *testing.B) {
	path := filepath.Join("..", "..", "shared", "data", "mooncake_conversation_trace.jsonl")
	if _, err := os.Stat(path); err != nil {
		b.Skip("no ../shared/data/mooncake_conversation_trace.jsonl")
	}
	tok := qwen(b)
	b.ReportAllocs()
	for b.Loop() {
		d, _, err := Load(Options{InputFile: path, CustomDatasetType: TypeMooncake, Tokenizer: tok})
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Conversations) != 12031 {
			b.Fatal(len(d.Conversations))
		}
	}
}

// BenchmarkSynthetic builds 1,000 prompts of 1,024 tokens.
func BenchmarkSynthetic(b *testing.B) {
	tok := qwen(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Synthetic(SyntheticOptions{Count: 1000, ISL: 1024, OSL: 128, Tokenizer: tok}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurnContent measures flattening a 12k-token trace prompt, which
// the load generator does once per request.
func BenchmarkTurnContent(b *testing.B) {
	d, _, err := Load(Options{InputFile: "testdata/mooncake_head200.jsonl", CustomDatasetType: TypeMooncake, Tokenizer: qwen(b)})
	if err != nil {
		b.Fatal(err)
	}
	tr := &d.Conversations[8].Turns[0]
	b.SetBytes(int64(len(tr.Content())))
	b.ReportAllocs()
	for b.Loop() {
		_ = tr.Content()
	}
}
