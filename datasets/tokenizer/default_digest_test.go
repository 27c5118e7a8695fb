package tokenizer

import (
	"encoding/hex"
	"testing"
)

func TestDefaultDigest(t *testing.T) {
	t.Parallel()
	tok, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := DefaultDigest(), tok.hashVocab(); got != want {
		t.Fatalf("DefaultDigest %x, the embedded tokenizer digests to %x: set defaultDigestHex = %q", got, want, hex.EncodeToString(want[:]))
	}
}
