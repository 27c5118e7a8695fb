package datasets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDefaultCorpusTable checks the precomputed view of the corpus against
// the embedded tokenizer itself (with -update it rewrites the table), and
// that prompts built from it are the ones the tokenizer would build.
func TestDefaultCorpusTable(t *testing.T) {
	t.Parallel()
	want, err := tokenizeCorpus(qwen(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("corpus", "qwen3.cuts")
	if *update {
		if err := os.WriteFile(path, []byte(formatCuts(want)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	got, err := parseCuts(qwen3Cuts)
	if err != nil {
		t.Fatalf("%v (regenerate: go test ./datasets -run TestDefaultCorpusTable -update)", err)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(corpusTokens{}, sentence{})); diff != "" {
		t.Fatalf("%s is stale (-tokenizer +table), regenerate with -update:\n%s", path, diff)
	}
	fromTable, err := newPrompter(nil, 7)
	if err != nil {
		t.Fatal(err)
	}
	fromTok, err := layOut(want, 7)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromTok, fromTable, cmp.AllowUnexported(prompter{})); diff != "" {
		t.Errorf("prompters differ (-tokenizer +table):\n%s", diff)
	}
}

func TestParseCutsRejectsAMismatch(t *testing.T) {
	t.Parallel()
	first := func(with string) string { return strings.Replace(qwen3Cuts, "\ns ", "\ns "+with+" ", 1) }
	for name, table := range map[string]string{
		"a sentence too many": qwen3Cuts + "s 1\n",
		"a sentence short":    strings.Replace(qwen3Cuts, "\ns ", "\n# ", 1),
		"cut past the text":   first("9999"),
		"cuts out of order":   first("50 2"),
		"not a number":        first("one"),
		"unknown line":        qwen3Cuts + "x 1\n",
	} {
		if _, err := parseCuts(table); err == nil {
			t.Errorf("%s: parseCuts accepted %q", name, table)
		}
	}
}
