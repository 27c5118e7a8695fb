package datasets

import (
	"bufio"
	"encoding/json"
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

// BenchmarkLoadBailianLarge loads a generated 40,000-row Bailian trace
// (sessions of 1–8 turns with growing contexts, ~20 MB) and builds every
// prompt: the trace streams line by line, the file is never read whole.
func BenchmarkLoadBailianLarge(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bailian.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	next, chat := int64(1000), int64(0)
	for rows := 0; rows < 40000; {
		parent, ctx, hashes := int64(-1), 0, []int64{0, 1, 2, 3}
		for turn := 1; turn <= 1+rows%8 && rows < 40000; turn++ {
			in := ctx + 64 + rows%400
			for len(hashes) < (in+15)/16 {
				hashes = append(hashes, next)
				next++
			}
			chat++
			line, _ := json.Marshal(map[string]any{"chat_id": chat, "parent_chat_id": parent, "timestamp": float64(rows) / 10,
				"input_length": in, "output_length": 50 + rows%200, "type": "text", "turn": turn, "hash_ids": hashes[:(in+15)/16]})
			w.Write(append(line, '\n'))
			parent, ctx = chat, in+50+rows%200
			rows++
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	tok := qwen(b)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		_, rep, err := Load(Options{InputFile: path, CustomDatasetType: TypeBailian, Tokenizer: tok})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Rows != 40000 {
			b.Fatal(rep.Rows)
		}
	}
}
