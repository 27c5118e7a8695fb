package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

// qwen returns the embedded default tokenizer.
func qwen(t testing.TB) Tokenizer {
	t.Helper()
	tok, err := defaultTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// writeFile writes content to a file in a fresh temp dir and returns its path.
func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// summary is one line per turn: conversation, turn index, lengths, timing
// and a hash of the content, for golden files.
func summary(d *Dataset) string {
	var b strings.Builder
	for _, c := range d.Conversations {
		for i := range c.Turns {
			t := &c.Turns[i]
			sum := sha256.Sum256([]byte(t.Content()))
			parts := len(t.Parts)
			if t.Prompt != nil {
				parts = t.Prompt.blocks()
			}
			fmt.Fprintf(&b, "%s/%d in=%d max=%d ts=%v(%v) delay=%v parts=%d sha=%s", c.ID, i, t.InputTokens, t.MaxTokens,
				t.Timestamp, t.HasTimestamp, t.Delay, parts, hex.EncodeToString(sum[:6]))
			if t.Thread != nil {
				// A context laid out as messages: their roles, then the turn's.
				b.WriteString(" thread=")
				for _, m := range t.Thread {
					b.WriteString(m.Role[:1])
					if len(m.ToolCalls) > 0 {
						b.WriteString("*")
					}
				}
				fmt.Fprintf(&b, " role=%s %s", t.Role, t.ToolCallID)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", p, diff)
	}
}

// blockText spells block j of the turn's generated prompt.
func blockText(t *Turn, j int) string {
	id, n := t.Prompt.block(j)
	var b strings.Builder
	t.Prompt.src.write(&b, id, n, math.MaxInt)
	return b.String()
}
