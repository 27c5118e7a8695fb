package datasets

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/surgebench/surge/datasets/tokenizer/hub"
)

// TestShareGPTDownload: --public-dataset sharegpt with no file downloads
// AIPerf's file once from the Hub (its datasets/<repo>/resolve/<revision>/
// <file> path, the token sent), caches it, reports progress, and says
// clearly what to do when the Hub cannot be reached.
func TestShareGPTDownload(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // no old surge cache copy
	t.Setenv("HF_HUB_OFFLINE", "")
	body := `[
 {"id": "one", "conversations": [{"from": "human", "value": "Tell me about the sea please"}, {"from": "gpt", "value": "The sea is large and deep and blue."},
  {"from": "human", "value": "And the tides, how do they work?"}, {"from": "gpt", "value": "The moon pulls the water, twice a day."}]},
 {"id": "two", "conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello there, how can I help?"}]}
]`
	var hits atomic.Int64
	var auth atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		if r.URL.Path != "/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/ShareGPT_V3_unfiltered_cleaned_split.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
		_, _ = w.Write([]byte(body))
	}))
	defer ts.Close()
	cache := t.TempDir()
	var got int64
	o := Options{PublicDataset: PublicShareGPT, Tokenizer: qwen(t),
		Hub:      hub.Options{Endpoint: ts.URL, CacheDir: cache, Token: "hf_test_token"},
		Progress: func(done, _ int64) { got = done }}
	d, rep, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if got != int64(len(body)) || auth.Load() != "Bearer hf_test_token" || !strings.HasPrefix(rep.Source, cache) {
		t.Errorf("progress %d of %d, auth %v, source %s", got, len(body), auth.Load(), rep.Source)
	}
	// Entry "one" keeps both pairs as turns; "two" fails the filter.
	if len(d.Conversations) != 1 || len(d.Conversations[0].Turns) != 2 || d.Conversations[0].Turns[1].Text != "And the tides, how do they work?" {
		t.Fatalf("conversations %+v (%v)", d.Conversations, rep.Lines)
	}
	n := hits.Load()
	if _, _, err := Load(o); err != nil || hits.Load() != n {
		t.Errorf("second load: %v, %d more requests", err, hits.Load()-n)
	}
	// A Hub that cannot be reached: the error says what to do.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	o.Hub = hub.Options{Endpoint: closed.URL, CacheDir: t.TempDir()}
	_, _, err = Load(o)
	if err == nil || !strings.Contains(err.Error(), "PublicDataset sharegpt: cannot get ShareGPT_V3_unfiltered_cleaned_split.json") ||
		!strings.Contains(err.Error(), "set HF_ENDPOINT") || !strings.Contains(err.Error(), "pass it as the input file") {
		t.Errorf("offline: %v", err)
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	if _, _, err = Load(o); err == nil || !strings.Contains(err.Error(), "downloads are off") {
		t.Errorf("HF_HUB_OFFLINE: %v", err)
	}
}
