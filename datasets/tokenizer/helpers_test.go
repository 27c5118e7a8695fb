package tokenizer

import (
	"sync"
	"testing"
)

// llama3Path is the gzip copy of the Llama 3 tokenizer kept for tests (see
// testdata/LLAMA3_NOTICE).
const llama3Path = "testdata/llama3/tokenizer.json.gz"

var (
	qwen3Once  = sync.OnceValues(Default)
	llama3Once = sync.OnceValues(func() (*Tokenizer, error) { return Load(llama3Path) })
)

func qwen3(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := qwen3Once()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func llama3(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := llama3Once()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
