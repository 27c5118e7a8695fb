package hub

import (
	"net/http"
	"testing"
)

// FuzzContentRange: a server's Content-Range is taken only when it is a
// range within the length it states.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-7/100", "bytes 92-99/100", "bytes */100", "bytes 5-2/10", "bytes 0-10/10", "items 0-1/2", "bytes -1-3/9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cr string) {
		first, last, size, err := contentRange(&http.Response{Header: http.Header{"Content-Range": {cr}}})
		if err == nil && !(0 <= first && first <= last && last < size) {
			t.Fatalf("%q: %d-%d/%d taken", cr, first, last, size)
		}
	})
}

// TestContentRange reads the ranges servers send and refuses the rest.
func TestContentRange(t *testing.T) {
	for cr, ok := range map[string]bool{"bytes 92-99/100": true, "bytes */100": false, "bytes 0-10/10": false, "": false} {
		_, _, _, err := contentRange(&http.Response{Header: http.Header{"Content-Range": {cr}}})
		if (err == nil) != ok {
			t.Errorf("%q: %v", cr, err)
		}
	}
}
