package tokenizer

import (
	_ "embed" // for the embedded Qwen3 tokenizer
	"fmt"
	"sync"
)

// qwen3Table is Qwen3's tokenizer as a table (see table.go), built from
// qwen3.json.gz (Qwen3's tokenizer.json; Apache-2.0, see NOTICE) and kept
// equal to it by TestEmbeddedTable, which rewrites it with -update.
//
//go:embed qwen3.tok
var qwen3Table []byte

// DefaultName is the Name of the tokenizer Default returns.
const DefaultName = "qwen3 (embedded)"

var defaultOnce = sync.OnceValues(loadEmbedded)

// loadEmbedded reads the embedded Qwen3 tokenizer's table.
func loadEmbedded() (*Tokenizer, error) {
	t, err := readTable(qwen3Table)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded qwen3: %w", err)
	}
	t.name = DefaultName
	d := DefaultDigest()
	t.digest = &d
	return t, nil
}

// Default returns the embedded Qwen3 tokenizer, used when no --tokenizer is
// given (for example to build synthetic prompts of exact token lengths). It
// is read on the first call (tens of milliseconds) and shared afterwards.
func Default() (*Tokenizer, error) { return defaultOnce() }
