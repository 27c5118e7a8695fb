package main

import (
	"cmp"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMultiTurnFileSendsWholeSessions: a 2×2 multi_turn file with
// --request-count 4 sends both sessions whole, in order (it once sent
// s1t0, s1t1, s2t0, s1t0).
func TestMultiTurnFileSendsWholeSessions(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&e2eServer{tokens: 3})
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "mt.jsonl")
	if err := os.WriteFile(file, []byte(`{"session_id": "s1", "turns": [{"text": "a"}, {"text": "b"}]}
{"session_id": "s2", "turns": [{"text": "c"}, {"text": "d"}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e2eConfig(srv.URL, filepath.Join(dir, "out"))
	c.Concurrency, c.RequestCount, c.InputFile, c.CustomDatasetType = "1", 4, file, "multi_turn"
	if _, err := Run(t.Context(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	// Records reach the file as their shards write them: order them by send.
	lines := jsonlLines(t, c.ArtifactDir)
	slices.SortFunc(lines, func(a, b map[string]any) int {
		return cmp.Compare(a["metadata"].(map[string]any)["request_start_ns"].(float64), b["metadata"].(map[string]any)["request_start_ns"].(float64))
	})
	var sent []string
	for _, l := range lines {
		md := l["metadata"].(map[string]any)
		sent = append(sent, fmt.Sprintf("%vt%v", md["conversation_id"], md["turn_index"]))
	}
	if want := []string{"s1t0", "s1t1", "s2t0", "s2t1"}; !slices.Equal(sent, want) {
		t.Errorf("sent %v, want %v", sent, want)
	}
}
