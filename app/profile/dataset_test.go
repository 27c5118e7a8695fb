package profile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMultiTurnFileSendsWholeSessions: a 2×2 multi_turn file with
// --request-count 4 sends both sessions whole, in order (it once sent
// s1t0, s1t1, s2t0, s1t0).
func TestMultiTurnFileSendsWholeSessions(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&apptest.Server{Tokens: 3})
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "mt.jsonl")
	if err := os.WriteFile(file, []byte(`{"session_id": "s1", "turns": [{"text": "a"}, {"text": "b"}]}
{"session_id": "s2", "turns": [{"text": "c"}, {"text": "d"}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := apptest.RunConfig(srv.URL, filepath.Join(dir, "out"))
	c.Concurrency, c.RequestCount, c.InputFile, c.CustomDatasetType = "1", 4, file, "multi_turn"
	if _, err := runConfig(t.Context(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	// Records reach the file as their shards write them: order them by send.
	lines := apptest.RecordLines(t, c.ArtifactDir)
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
	// inputs.json: one entry per session, payloads[turn] as sent (the
	// second turn carries the first and the server's reply).
	b, err := os.ReadFile(filepath.Join(c.ArtifactDir, FileInputs))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Data []struct {
			SessionID string `json:"session_id"`
			Payloads  []struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			} `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatalf("inputs.json: %v", err)
	}
	var got []string
	for _, d := range in.Data {
		for i, p := range d.Payloads {
			last := p.Messages[len(p.Messages)-1]
			got = append(got, fmt.Sprintf("%s[%d]=%d:%s", d.SessionID, i, len(p.Messages), last.Content))
		}
	}
	if want := []string{"s1[0]=1:a", "s1[1]=3:b", "s2[0]=1:c", "s2[1]=3:d"}; !slices.Equal(got, want) {
		t.Errorf("inputs.json holds %v, want %v", got, want)
	}
}

// sessionsOf runs c and returns its requests as "conversation/turn", in
// send order.
func sessionsOf(t *testing.T, c cmdline.Config) []string {
	t.Helper()
	if _, err := runConfig(t.Context(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := apptest.RecordLines(t, c.ArtifactDir)
	slices.SortFunc(lines, func(a, b map[string]any) int {
		return cmp.Compare(a["metadata"].(map[string]any)["request_start_ns"].(float64), b["metadata"].(map[string]any)["request_start_ns"].(float64))
	})
	var out []string
	for _, l := range lines {
		md := l["metadata"].(map[string]any)
		out = append(out, fmt.Sprintf("%v/%v", md["conversation_id"], md["turn_index"]))
	}
	return out
}

// TestSyntheticConversations: --conversation-turn-mean makes synthetic
// multi-turn sessions, --conversation-num bounds the run by sessions,
// --num-dataset-entries reuses a few conversations in the order
// --dataset-sampling-strategy gives.
func TestSyntheticConversations(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&apptest.Server{Tokens: 2})
	defer srv.Close()
	dir := t.TempDir()
	c := apptest.RunConfig(srv.URL, filepath.Join(dir, "a"))
	c.Concurrency, c.RequestCount, c.ConversationNum, c.TurnsMean, c.SamplingStrategy = "1", 0, 3, 2, "sequential"
	got := sessionsOf(t, c)
	want := []string{"synthetic-0/0", "synthetic-0/1", "synthetic-1/0", "synthetic-1/1", "synthetic-2/0", "synthetic-2/1"}
	if !slices.Equal(got, want) {
		t.Errorf("3 sessions of 2 turns sent %v, want %v", got, want)
	}

	c = apptest.RunConfig(srv.URL, filepath.Join(dir, "b"))
	c.Concurrency, c.RequestCount, c.ConversationNum, c.NumDatasetEntries, c.SamplingStrategy = "1", 0, 5, 2, "sequential"
	if got, want := sessionsOf(t, c), []string{"synthetic-0/0", "synthetic-1/0", "synthetic-0/0", "synthetic-1/0", "synthetic-0/0"}; !slices.Equal(got, want) {
		t.Errorf("5 sessions over 2 entries sent %v, want %v", got, want)
	}

	// Shuffle (synthetic's default) takes every entry once per pass.
	c = apptest.RunConfig(srv.URL, filepath.Join(dir, "c"))
	c.Concurrency, c.RequestCount, c.NumDatasetEntries, c.Seed = "1", 8, 4, 3
	got = sessionsOf(t, c)
	for pass := range 2 {
		seen := map[string]bool{}
		for _, s := range got[pass*4 : pass*4+4] {
			seen[s] = true
		}
		if len(seen) != 4 {
			t.Errorf("shuffle pass %d sent %v, want each of the 4 entries once", pass, got[pass*4:pass*4+4])
		}
	}
}

func TestConversationFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set  func(c *cmdline.Config)
		want string
	}{
		{func(c *cmdline.Config) { c.SamplingStrategy = "roundrobin" }, `--dataset-sampling-strategy "roundrobin": want sequential, random or shuffle`},
		{func(c *cmdline.Config) { c.ConversationNum = 2; c.UserCentricRate, c.NumUsers = 5, 2 }, "--conversation-num does not bound user-centric runs"},
		{func(c *cmdline.Config) { c.TurnDelayRatio = -1 }, "--conversation-turn-delay-ratio must be ≥ 0"},
		{func(c *cmdline.Config) { c.NumDatasetEntries = -3 }, "--num-dataset-entries must be ≥ 1"},
	} {
		c := apptest.RunConfig("http://127.0.0.1:1", t.TempDir())
		tc.set(&c)
		_, err := prepareConfig(c, io.Discard)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want a usage error %q", err, tc.want)
		}
	}
}
