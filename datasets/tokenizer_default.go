package datasets

import (
	"fmt"

	"github.com/surgebench/surge/datasets/tokenizer"
)

// defaultTokenizer returns the tokenizer used when none is given: the
// embedded Qwen3 of datasets/tokenizer, parsed once and shared.
func defaultTokenizer() (Tokenizer, error) {
	t, err := tokenizer.Default()
	if err != nil {
		return nil, fmt.Errorf("default tokenizer: %w", err)
	}
	return t, nil
}

// tokenizerOrDefault returns t, or the embedded default when t is nil.
func tokenizerOrDefault(t Tokenizer) (Tokenizer, error) {
	if t != nil {
		return t, nil
	}
	return defaultTokenizer()
}
