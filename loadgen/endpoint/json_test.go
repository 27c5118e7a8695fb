package endpoint

import (
	"math/rand/v2"
	"testing"
)

// plainEndSlow is plainEnd one byte at a time.
func plainEndSlow(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// TestPlainEnd checks the eight-bytes-at-a-time scan against the plain
// loop on strings built from the bytes that matter (the three kinds of
// stop byte, their neighbours, high bytes), at every start.
func TestPlainEnd(t *testing.T) {
	t.Parallel()
	alphabet := []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 'a', 0x7f, 0x80, 0xa2, 0xdc, 0xff, 0x01, 0x02}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			b[j] = 'a'
			if rng.IntN(6) == 0 {
				b[j] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		for i := 0; i <= len(b); i++ {
			if got, want := plainEnd(b, i), plainEndSlow(b, i); got != want {
				t.Fatalf("plainEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
}

func TestNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"0": 0, "7": 7, "123456789012345678": 123456789012345678,
		"-3": -3, "2.9": 2, "1e3": 1000, "null": 0} {
		s := scanner{b: []byte(in)}
		if got, err := s.number(); err != nil || got != want || s.i != len(in) {
			t.Errorf("number(%q) = %d, %v (at %d), want %d", in, got, err, s.i, want)
		}
	}
	for _, in := range []string{"-", "01", "1.", "+1", "x"} {
		s := scanner{b: []byte(in)}
		if _, err := s.number(); err == nil && s.i == len(in) {
			t.Errorf("number(%q) accepted it", in)
		}
	}
}
