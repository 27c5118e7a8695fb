package wire

import "testing"

// FuzzTimestamp feeds control-message buffers of any shape to the parser:
// it must never panic or read past the buffer.
func FuzzTimestamp(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 32))
	f.Add([]byte{32, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 35, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 127, 1, 0, 0, 0, 35, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) { _ = timestamp(b) })
}
