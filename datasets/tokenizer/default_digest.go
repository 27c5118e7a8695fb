package tokenizer

import "encoding/hex"

// defaultDigestHex is the embedded tokenizer's Digest, precomputed so that
// a run's fingerprint does not load the tokenizer when nothing else needs
// it, nor hash its vocabulary again when it is loaded (Default's Digest
// returns it). TestDefaultDigest keeps it true.
const defaultDigestHex = "03af41ae14429b51a4e438c99989fbaec30c64a2defb059ca449b8ff7aafcd12"

// DefaultDigest returns Default().Digest() without parsing the embedded
// tokenizer.
func DefaultDigest() [32]byte {
	var d [32]byte
	if _, err := hex.Decode(d[:], []byte(defaultDigestHex)); err != nil {
		panic("tokenizer: defaultDigestHex is not 32 bytes of hex")
	}
	return d
}
