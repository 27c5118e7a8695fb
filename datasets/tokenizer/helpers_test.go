package tokenizer

import (
	"os"
	"sync"
	"testing"
)

// llama3Path is the Llama 3 tokenizer in the shared data folder beside the
// checkout. It is not copied into the repository: the Meta Llama 3
// Community License asks for its full agreement text to travel with every
// copy, and that text is not available here. Tests needing it skip in a
// clone without the shared folder.
const llama3Path = "../../../shared/data/tokenizers/llama3/tokenizer.json"

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
	if _, err := os.Stat(llama3Path); err != nil {
		t.Skipf("Llama 3 tokenizer not present (%v): the Llama 3 checks need the shared data folder", err)
	}
	tok, err := llama3Once()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
