package tokenizer

// The byte-level alphabet of GPT-2 (bytes_to_unicode in OpenAI's encoder.py,
// also used by Hugging Face's ByteLevel pre-tokenizer): every byte maps to a
// printable rune so that vocabularies can be stored as text. Printable
// Latin-1 bytes map to themselves; the other 68 bytes map, in order, to
// U+0100 onwards (so the space 0x20 becomes 'Ġ', U+0120).
var byteToRune, runeToByte = byteLevelTables()

func byteLevelTables() ([256]rune, map[rune]byte) {
	var b2r [256]rune
	r2b := make(map[rune]byte, 256)
	printable := func(b int) bool {
		return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
	}
	n := 0
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !printable(b) {
			r = rune(256 + n)
			n++
		}
		b2r[b] = r
		r2b[r] = byte(b)
	}
	return b2r, r2b
}

// byteLevelDecode turns a vocabulary key written in the byte-level alphabet
// back into the raw bytes it stands for; ok is false when s holds a rune
// outside that alphabet.
func byteLevelDecode(s string) (raw []byte, ok bool) {
	raw = make([]byte, 0, len(s))
	for _, r := range s {
		b, found := runeToByte[r]
		if !found {
			return nil, false
		}
		raw = append(raw, b)
	}
	return raw, true
}
