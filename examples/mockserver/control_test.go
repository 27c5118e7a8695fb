package mockserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestControlEndpoints: each control path answers a POST and counts it;
// another method is 405 and not counted.
func TestControlEndpoints(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	ts := httptest.NewServer(s)
	defer ts.Close()
	for path, n := range map[string]int{PathResetPrefixCache: 2, PathFlushCache: 1, PathStartProfile: 3, PathStopProfile: 1} {
		for range n {
			resp, err := http.Post(ts.URL+path, "application/json", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("POST %s: %s", path, resp.Status)
			}
		}
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %s, want 405", path, resp.Status)
		}
	}
	st := s.Stats()
	if st.ResetPrefixCache != 2 || st.FlushCache != 1 || st.StartProfile != 3 || st.StopProfile != 1 {
		t.Errorf("stats %+v", st)
	}
}
