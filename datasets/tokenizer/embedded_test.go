package tokenizer

import (
	"bytes"
	"compress/gzip"
	_ "embed" // Qwen3's tokenizer.json, the table's source
	"flag"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// qwen3Gzip is Qwen3's tokenizer.json (whitespace removed, otherwise
// unchanged), gzip-compressed; Apache-2.0, see NOTICE. The binary carries
// the table built from it (default.go).
//
//go:embed qwen3.json.gz
var qwen3Gzip []byte

var update = flag.Bool("update", false, "rewrite qwen3.tok from qwen3.json.gz")

// parseEmbedded decompresses and parses the embedded tokenizer.json.
func parseEmbedded() (*Tokenizer, error) {
	zr, err := gzip.NewReader(bytes.NewReader(qwen3Gzip))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded qwen3: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded qwen3: %w", err)
	}
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded qwen3: %w", err)
	}
	t.name = DefaultName
	return t, nil
}

// TestEmbeddedTable: the table Default reads is the tokenizer
// qwen3.json.gz describes, field for field (with -update it is rewritten
// from it).
func TestEmbeddedTable(t *testing.T) {
	t.Parallel()
	want, err := parseEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		var b bytes.Buffer
		if err := want.writeTable(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("qwen3.tok", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote qwen3.tok (%d bytes)", b.Len())
		return
	}
	got, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if diff := tokenizerDiff(want, got); diff != "" {
		t.Fatalf("the table differs from qwen3.json.gz (-json +table), rewrite it with -update:\n%s", diff)
	}
	if want.Digest() != got.hashVocab() {
		t.Error("digests differ")
	}
	if got.Digest() != got.hashVocab() {
		t.Error("the embedded tokenizer's precomputed digest is not its digest")
	}
	text := "Hello, world! <think>plan</think> 12345 naïve café — ünïcödé\n\n  spaces"
	if w, g := want.Encode(text), got.Encode(text); !cmp.Equal(w, g) {
		t.Errorf("Encode(%q): json %v, table %v", text, w, g)
	}
}

// tokenizerDiff is cmp.Diff(want, got) for tokenizers, leaving out the
// cache (filled as it counts) and a precomputed digest. Their arrays are
// compared as bytes: cmp, element by element, took 20 s over Qwen3's.
func tokenizerDiff(want, got *Tokenizer) string {
	var diff string
	for _, a := range []struct {
		name      string
		want, got []byte
	}{{"pair slots", want.pairs.slots, got.pairs.slots}, {"offsets", want.offs, got.offs},
		{"known", want.known, got.known}, {"text", want.text, got.text}} {
		if !bytes.Equal(a.want, a.got) {
			diff += fmt.Sprintf("%s differ: %d bytes, %d bytes\n", a.name, len(a.want), len(a.got))
		}
	}
	return diff + cmp.Diff(want, got,
		cmp.AllowUnexported(Tokenizer{}, pairTable{}, addedMatcher{}, addedToken{}),
		cmp.Comparer(func(a, b splitter) bool { return (a == nil) == (b == nil) }), // by pattern
		cmpopts.IgnoreFields(Tokenizer{}, "cache", "digest", "known", "text", "offs"),
		cmpopts.IgnoreFields(pairTable{}, "slots"))
}

func TestReadTableRejectsDamage(t *testing.T) {
	t.Parallel()
	raw := qwen3Table
	for name, data := range map[string][]byte{
		"wrong magic":   append([]byte("other-format 1\n"), raw[len(tableMagic):]...),
		"truncated":     raw[:len(raw)/2],
		"trailing data": append(bytes.Clone(raw), 0),
		"empty":         []byte(tableMagic),
		"nothing":       nil,
	} {
		if _, err := readTable(data); err == nil {
			t.Errorf("%s: readTable accepted it", name)
		}
	}
}
