package mockserver

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestStreamErrorShapes: with every stream failing after 2 tokens, each
// shape sends its engine's failure, with [DONE] after it where the engine
// sends one, and the stats count the failures apart from completions.
func TestStreamErrorShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		shape, want string
		done        bool
		tokens      int
	}{
		{"", `data: {"error": {"message": "mock: injected stream failure", "type": "InternalServerError", "param": null, "code": 500}}`, true, 2},
		{ShapeLlamaCpp, `error: {"code":500,"message":"mock: injected stream failure","type":"server_error"}`, true, 2},
		{ShapeSGLang, `"type": "SERVICE_UNAVAILABLE", "param": null, "code": 503}}`, true, 2},
		{ShapeTGI, `data: {"error":{"message":"mock: injected stream failure","http_status_code":422}}`, false, 2},
		{ShapeAbort, `"finish_reason":"abort"}]}`, true, 2},
		{ShapeOllama, `"delta":{"content":""},"finish_reason":null}]}`, false, 2},
		{ShapeEmpty, `"delta":{"content":""},"logprobs":null,"finish_reason":"stop"}]}`, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.shape, func(t *testing.T) {
			t.Parallel()
			s, ts := newTestServer(t, Config{StreamErrorRate: 1, StreamErrorShape: tc.shape, StreamErrorAfter: 2, TokensPerChunk: 3})
			resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8,"stream":true}`))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body := string(b)
			if resp.StatusCode != 200 || !strings.Contains(body, tc.want) {
				t.Fatalf("status %d, body lacks %q:\n%s", resp.StatusCode, tc.want, body)
			}
			if strings.HasSuffix(body, doneEvent) != tc.done {
				t.Errorf("ends with [DONE]: %v, want %v:\n%s", !tc.done, tc.done, body)
			}
			if got := strings.Count(body, `"content":"`) - strings.Count(body, `"content":""`); got != min(tc.tokens, 1) {
				t.Errorf("%d text chunks before the failure, want %d (2 tokens, the first chunk cut to them)", got, min(tc.tokens, 1))
			}
			st := s.Stats()
			if st.StreamErrors != 1 || st.Completed != 0 || st.GeneratedTokens != uint64(tc.tokens) {
				t.Errorf("stats: %d stream errors, %d completed, %d tokens; want 1, 0, %d", st.StreamErrors, st.Completed, st.GeneratedTokens, tc.tokens)
			}
		})
	}
}

// TestStreamErrorRateIsSeeded: which streams fail depends on the seed
// and the arrival order alone, and a whole body never fails so.
func TestStreamErrorRateIsSeeded(t *testing.T) {
	t.Parallel()
	fails := func(seed uint64) []bool {
		s := New(Config{StreamErrorRate: 0.3, Seed: seed})
		out := make([]bool, 200)
		for n := range out {
			out[n] = s.failsInStream(uint64(n + 1))
		}
		return out
	}
	a, b, c := fails(7), fails(7), fails(8)
	n := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d: seed 7 fails %v, then %v", i, a[i], b[i])
		}
		if a[i] {
			n++
		}
	}
	if n < 40 || n > 80 || slices.Equal(a, c) {
		t.Errorf("%d of 200 failed at 0.3 (or seeds 7 and 8 chose alike)", n)
	}
	s, ts := newTestServer(t, Config{StreamErrorRate: 1})
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if st := s.Stats(); st.StreamErrors != 0 || st.Completed != 1 {
		t.Errorf("a whole body: %d stream errors, %d completed", st.StreamErrors, st.Completed)
	}
}
