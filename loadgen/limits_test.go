package loadgen

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/surgebench/surge/loadgen/schedule"
)

// TestMaxResponseBytes: a response past the byte limit ends as an error
// record naming the limit, streamed or whole, endless or not; one within
// it is read as ever.
func TestMaxResponseBytes(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/endless/v1/chat/completions": // never ends on its own
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; r.Context().Err() == nil && i < 1e6; i++ {
				if _, err := io.WriteString(w, tokenEvent("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")); err != nil {
					return
				}
			}
		case "/within/v1/chat/completions": // a stream of ~limit/2
			w.Header().Set("Content-Type", "text/event-stream")
			for range limit / 2 / len(tokenEvent("x")) {
				_, _ = io.WriteString(w, tokenEvent("x"))
			}
			_, _ = io.WriteString(w, finishEvents)
		case "/whole/v1/chat/completions": // one JSON answer past the limit
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"choices":[{"message":{"content":%q}}]}`, strings.Repeat("a", 2*limit))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		path    string
		stream  bool
		wantErr bool
	}{{"endless", true, true}, {"within", true, false}, {"whole", false, true}} {
		// Past its cap of 8: the cap guard, which would end it first, is off.
		_, sink := runOnce(t, srv.URL+"/"+tc.path, chat(tc.stream), []Stage{{Limit: schedule.Constant(1), Count: 2}}, WithMaxResponseBytes(limit), WithoutCapGuard())
		if len(sink.recs) != 2 {
			t.Fatalf("%s: %d records, want 2", tc.path, len(sink.recs))
		}
		for _, r := range sink.recs {
			if !tc.wantErr {
				if r.Err != nil || len(r.TokenNs) == 0 {
					t.Errorf("%s: error %+v, %d tokens; want a good record", tc.path, r.Err, len(r.TokenNs))
				}
				continue
			}
			if r.Err == nil || r.Err.Type != ErrResponseTooLarge || !strings.Contains(r.Err.Message, "64 KiB") {
				t.Errorf("%s: error %+v, want %s naming 64 KiB", tc.path, r.Err, ErrResponseTooLarge)
			}
			if len(r.Text) > limit {
				t.Errorf("%s: kept %d bytes of text past the %d-byte limit", tc.path, len(r.Text), limit)
			}
		}
	}
}

func TestByteSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{64 << 20: "64 MiB", 1 << 30: "1 GiB", 3 << 10: "3 KiB", 1536: "1536 bytes", 1000: "1000 bytes"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
