package tokenizer

import (
	"bytes"
	"compress/gzip"
	_ "embed" // for the embedded Qwen3 tokenizer
	"fmt"
	"io"
	"sync"
)

// qwen3Gzip is Qwen3's tokenizer.json (whitespace removed, otherwise
// unchanged), gzip-compressed; Apache-2.0, see NOTICE.
//
//go:embed qwen3.json.gz
var qwen3Gzip []byte

// DefaultName is the Name of the tokenizer Default returns.
const DefaultName = "qwen3 (embedded)"

var defaultOnce = sync.OnceValues(parseEmbedded)

// parseEmbedded decompresses and parses the embedded Qwen3 tokenizer.
func parseEmbedded() (*Tokenizer, error) {
	zr, err := gzip.NewReader(bytes.NewReader(qwen3Gzip))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded qwen3: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded qwen3: %w", err)
	}
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded qwen3: %w", err)
	}
	t.name = DefaultName
	return t, nil
}

// Default returns the embedded Qwen3 tokenizer, used when no --tokenizer is
// given (for example to build synthetic prompts of exact token lengths). It
// is parsed on the first call (about a quarter of a second) and shared
// afterwards.
func Default() (*Tokenizer, error) { return defaultOnce() }
