package profile

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/internal/apptest"
)

// TestRemoteInputFile runs --input-file https://…: the first run
// downloads it into the cache, the next reads the cached copy its source
// says is current; both send its prompts.
func TestRemoteInputFile(t *testing.T) {
	t.Setenv("SURGE_CACHE_DIR", t.TempDir())
	var body strings.Builder
	for i := range 5 {
		fmt.Fprintf(&body, `{"text": "remote prompt %d"}`+"\n", i)
	}
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write([]byte(body.String()))
	}))
	defer src.Close()
	mock := apptest.MockForTest(t)
	for i, want := range []string{"downloaded", "unchanged at its source"} {
		dir := t.TempDir()
		c := apptest.RunConfig(mock, dir)
		c.InputFile, c.CustomDatasetType, c.RequestCount = src.URL+"/data/prompts.jsonl", "single_turn", 5
		var out, log bytes.Buffer
		if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, log.String())
		}
		if !strings.Contains(log.String(), "input file: "+src.URL+"/data/prompts.jsonl") || !strings.Contains(log.String(), want) {
			t.Errorf("run %d: log says:\n%s", i, log.String())
		}
		if n := len(apptest.RecordLines(t, dir)); n != 5 {
			t.Errorf("run %d: %d records", i, n)
		}
	}
}
