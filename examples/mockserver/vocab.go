package mockserver

// vocab holds the words the mock "generates". Each is plain lower-case
// ASCII, so it needs no JSON escaping, and common enough that BPE
// tokenizers (cl100k, Llama 3, Qwen) encode " word" as a single token.
var vocab = [...]string{
	" the", " river", " runs", " past", " old", " stone", " walls", " and",
	" a", " quiet", " town", " where", " people", " walk", " by", " water",
	" in", " morning", " light", " with", " small", " boats", " that", " move",
	" slowly", " over", " green", " hills", " under", " blue", " sky", " while",
	" birds", " sing", " of", " time", " long", " gone", " to", " see",
	" new", " days", " come", " as", " wind", " turns", " each", " page",
	" from", " book", " left", " open", " on", " table", " near", " door",
	" for", " one", " more", " story", " about", " home", " we", " know",
}

// splitmix64 is a fast, well-mixed hash of x (Steele et al.'s SplitMix64
// finaliser); it turns (seed, request number) into independent draws.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unitFloat maps a hash to [0, 1).
func unitFloat(h uint64) float64 {
	return float64(h>>11) / (1 << 53)
}

// appendWords appends tokens [from, to) of the sequence starting at word
// offset off.
func appendWords(b []byte, off uint64, from, to int) []byte {
	for i := from; i < to; i++ {
		b = append(b, vocab[(off+uint64(i))%uint64(len(vocab))]...)
	}
	return b
}
