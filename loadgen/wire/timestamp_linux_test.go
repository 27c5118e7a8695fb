//go:build linux && (amd64 || arm64)

package wire

import "testing"

func TestTimestampParse(t *testing.T) {
	t.Parallel()
	// cmsghdr{len 32, SOL_SOCKET 1, SCM_TIMESTAMPNS 35} + timespec{1 s, 2 ns}
	ok := []byte{32, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 35, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}
	other := append([]byte{20, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 99, 0, 0, 0, 7, 7, 7, 7, 0, 0, 0, 0}, ok...)
	for _, tc := range []struct {
		name string
		b    []byte
		want int64
	}{
		{"timestampns", ok, 1e9 + 2},
		{"after another message", other, 1e9 + 2},
		{"truncated", ok[:20], 0},
		{"empty", nil, 0},
		{"length past the buffer", append([]byte{200}, ok[1:]...), 0},
	} {
		if got := timestamp(tc.b); got != tc.want {
			t.Errorf("%s: timestamp = %d, want %d", tc.name, got, tc.want)
		}
	}
}
