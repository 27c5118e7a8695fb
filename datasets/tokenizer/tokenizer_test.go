package tokenizer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"
)

func TestSpecialTokensAreLiteral(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tok     *Tokenizer
		text    string
		special int
	}{
		{qwen3(t), "<|im_start|>user\nhi<|im_end|><|endoftext|>", 151645},
		{llama3(t), "<|begin_of_text|>hi<|eot_id|>", 128000},
	} {
		ids := tc.tok.Encode(tc.text)
		for _, id := range ids {
			if id >= 151643 && tc.tok.name == DefaultName || id >= 128000 && tc.tok.name != DefaultName {
				t.Errorf("%s: Encode(%q) = %v holds special id %d", tc.tok.Name(), tc.text, ids, id)
			}
		}
		if got := tc.tok.Decode(ids); got != tc.text {
			t.Errorf("%s: Decode(Encode(%q)) = %q", tc.tok.Name(), tc.text, got)
		}
		if got := tc.tok.Decode([]int{tc.special}); !strings.HasPrefix(got, "<|") {
			t.Errorf("%s: Decode(special %d) = %q, want its content", tc.tok.Name(), tc.special, got)
		}
	}
}

func TestNonSpecialAddedTokens(t *testing.T) {
	t.Parallel()
	tok := qwen3(t)
	got := tok.Encode("a<think>b</think>")
	want := []int{64, 151667, 65, 151668}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Encode (-want +got):\n%s", diff)
	}
}

func TestDecodeSkipsUnknownIDs(t *testing.T) {
	t.Parallel()
	tok := qwen3(t)
	hello := tok.Encode("hello")
	got := tok.Decode(append(append([]int{-1, 1 << 30}, hello...), tok.VocabSize()))
	if got != "hello" {
		t.Errorf("Decode = %q, want %q", got, "hello")
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	if got := qwen3(t).Name(); got != "qwen3 (embedded)" {
		t.Errorf("Default().Name() = %q", got)
	}
	if got := llama3(t).Name(); got != "llama3" {
		t.Errorf("Load(%s).Name() = %q, want llama3", llama3Path, got)
	}
}

// TestLoadSharedFiles loads the original (uncompressed, indented) files when
// the repository's shared data folder is next to it, by folder and by file,
// and checks they encode like the compressed copies.
func TestLoadSharedFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "..", "shared", "data", "tokenizers")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no shared data folder: %v", err)
	}
	text := "Shared files: don't   panic 1234\n\n"
	for _, tc := range []struct {
		path string
		want *Tokenizer
	}{
		{filepath.Join(dir, "qwen3"), qwen3(t)},
		{filepath.Join(dir, "llama3", FileName), llama3(t)},
	} {
		tok, err := Load(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want.Encode(text), tok.Encode(text)); diff != "" {
			t.Errorf("%s (-copy +original):\n%s", tc.path, diff)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	byteVocab := func() string {
		var parts []string
		for b := range 256 {
			parts = append(parts, fmt.Sprintf("%q: %d", string(byteToRune[b]), b))
		}
		return strings.Join(parts, ", ")
	}()
	split := func(re string) string {
		return fmt.Sprintf(`{"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": %q}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]}`, re)
	}
	tests := []struct {
		name string
		path string
		want []string // substrings of the error
		is   error
	}{
		{"missing", filepath.Join(dir, "nope.json"), []string{"nope.json"}, fs.ErrNotExist},
		{"empty folder", empty, []string{empty, "holds no tokenizer.json"}, nil},
		{"not json", write("bad.json", "{\n  \"model\": {\"type\": \"BPE\",}\n}"), []string{"bad.json", "line 2, column 27", "not valid tokenizer JSON"}, nil},
		{"wrong type", write("type.json", `{"model": {"type": "BPE", "vocab": []}}`), []string{"type.json", "line 1", "model.vocab"}, nil},
		{"no model", write("nomodel.json", `{"version": "1.0"}`), []string{"nomodel.json", `no "model"`}, nil},
		{"wordpiece", write("wp.json", `{"model": {"type": "WordPiece", "vocab": {"a": 0}}}`), []string{"wp.json", `model.type "WordPiece" is not supported`}, nil},
		{"unigram", write("uni.json", `{"model": {"type": "Unigram", "vocab": [["a", 0.5]]}}`), []string{"uni.json", "line 1"}, nil},
		{"gzip junk", write("junk.json.gz", "\x1f\x8b\x08junk"), []string{"junk.json.gz"}, nil},
		{"regex", write("re.json", `{"pre_tokenizer": `+split(`\w+`)+`, "model": {"type": "BPE", "vocab": {`+byteVocab+`}, "merges": []}}`), []string{"re.json", `Regex "\\w+" is not supported`}, nil},
		{"metaspace", write("ms.json", `{"pre_tokenizer": {"type": "Metaspace"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`), []string{"ms.json", `pre_tokenizer.type "Metaspace"`}, nil},
		{"normalizer", write("nfkc.json", `{"normalizer": {"type": "NFKC"}, "pre_tokenizer": `+split(patternGPT2)+`, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`), []string{"nfkc.json", `normalizer.type "NFKC"`}, nil},
		{"not byte level", write("nbl.json", `{"pre_tokenizer": `+split(patternGPT2)+`, "model": {"type": "BPE", "vocab": {"a": 0, " b": 1}, "merges": []}}`), []string{"nbl.json", `model.vocab[" b"]: not in the byte-level alphabet`}, nil},
		{"missing byte", write("mb.json", `{"pre_tokenizer": `+split(patternGPT2)+`, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`), []string{"mb.json", "lacks the byte-level token"}, nil},
		{"bad merge", write("merge.json", `{"pre_tokenizer": `+split(patternGPT2)+`, "model": {"type": "BPE", "vocab": {`+byteVocab+`}, "merges": ["a b", "a zz"]}}`), []string{"merge.json", `model.merges[0]: merged token "ab"`}, nil},
		{"bad merge line", write("line.json", `{"pre_tokenizer": `+split(patternGPT2)+`, "model": {"type": "BPE", "vocab": {`+byteVocab+`}, "merges": ["abc"]}}`), []string{"line.json", `model.merges[0]: "abc" is not two tokens`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.path)
			if err == nil {
				t.Fatalf("Load(%s) succeeded", tc.path)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load error %q does not contain %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("Load error %v is not %v", err, tc.is)
			}
		})
	}
}

// TestMinimalFile encodes with a hand-made file: merges in both formats and
// ignore_merges.
func TestMinimalFile(t *testing.T) {
	t.Parallel()
	var vocab []string
	for b := range 256 {
		vocab = append(vocab, fmt.Sprintf("%q: %d", string(byteToRune[b]), b))
	}
	vocab = append(vocab, `"ab": 256`, `"abc": 257`, `"bc": 258`, `"Ġab": 259`)
	for _, tc := range []struct {
		name, merges string
		ignore       bool
		in           string
		want         []int
	}{
		{"string merges", `["a b", "ab c", "Ġ ab"]`, false, "abc ab abd", []int{257, 259, 259, 100}},
		{"pair merges", `[["a","b"], ["ab","c"], ["Ġ","ab"]]`, false, "abc ab abd", []int{257, 259, 259, 100}},
		// "bc" merges first, so "abc" cannot be reached by merges...
		{"rank order", `[["b","c"], ["a","b"], ["ab","c"]]`, false, "abc", []int{97, 258}},
		// ...unless ignore_merges looks the whole piece up first.
		{"ignore merges", `[["b","c"], ["a","b"], ["ab","c"]]`, true, "abc", []int{257}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := fmt.Sprintf(`{"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "ignore_merges": %v, "vocab": {%s}, "merges": %s}}`,
				tc.ignore, strings.Join(vocab, ", "), tc.merges)
			p := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(p, []byte(file), 0o644); err != nil {
				t.Fatal(err)
			}
			tok, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tok.Encode(tc.in)); diff != "" {
				t.Errorf("Encode(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// TestConcurrentCount runs Count and Encode from many goroutines (under
// -race this checks the shared cache) and compares with one goroutine.
func TestConcurrentCount(t *testing.T) {
	t.Parallel()
	tok := llama3(t)
	cases := readReference(t)
	want := make([]int, len(cases))
	for i, c := range cases {
		want[i] = len(c.Llama3)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for r := range 20 {
				i := (g*7 + r) % len(cases)
				if n := tok.Count(cases[i].Text); n != want[i] {
					errs <- fmt.Sprintf("goroutine %d: Count(%s) = %d, want %d", g, cases[i].Name, n, want[i])
					return
				}
				if ids := tok.Encode(cases[i].Text); !slices.Equal(ids, cases[i].Llama3) && len(cases[i].Llama3) > 0 {
					errs <- fmt.Sprintf("goroutine %d: Encode(%s) differs", g, cases[i].Name)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// FuzzMerge checks that the quadratic and the heap merge loops agree.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{"hello", "aaaaaaaaaaaaaaaa", "                ", "abcabcabc", "\xff\xfe\x00", "你好世界"} {
		f.Add(s)
	}
	tok := qwen3(f)
	f.Fuzz(func(t *testing.T, s string) {
		// mergeSmall is quadratic by design and only sees short pieces; on
		// the fuzzer's long inputs it would take minutes per case.
		if len(s) < 2 || len(s) > 4096 {
			return
		}
		small := make([]int32, len(s))
		for i := range len(s) {
			small[i] = tok.byteID[s[i]]
		}
		large := slices.Clone(small)
		a := tok.pairs.mergeSmall(small, make([]int32, len(s)))
		b := tok.pairs.mergeLarge(large, &scratch{})
		if !slices.Equal(a, b) {
			t.Fatalf("merge %q: small %v, large %v", s, a, b)
		}
	})
}

// FuzzRoundTrip checks that encoding never panics, that Count agrees with
// Encode, and that Decode gives the text back (after NFC for Qwen3).
func FuzzRoundTrip(f *testing.F) {
	for _, c := range readReference(f) {
		f.Add(c.Text)
	}
	f.Add("\xff\xfe invalid \xc3")
	qwen, llama := qwen3(f), llama3(f)
	f.Fuzz(func(t *testing.T, s string) {
		ids := llama.Encode(s)
		if got := llama.Decode(ids); got != s {
			t.Fatalf("llama3: Decode(Encode(%q)) = %q", s, got)
		}
		if n := llama.Count(s); n != len(ids) {
			t.Fatalf("llama3: Count(%q) = %d, len(Encode) = %d", s, n, len(ids))
		}
		ids = qwen.Encode(s)
		if n := qwen.Count(s); n != len(ids) {
			t.Fatalf("qwen3: Count(%q) = %d, len(Encode) = %d", s, n, len(ids))
		}
		if utf8.ValidString(s) {
			if got, want := qwen.Decode(ids), norm.NFC.String(s); got != want {
				t.Fatalf("qwen3: Decode(Encode(%q)) = %q, want %q", s, got, want)
			}
		}
	})
}

// TestDigest: one vocabulary digests alike however its file is laid out; a
// changed token or normalizer changes it.
func TestDigest(t *testing.T) {
	t.Parallel()
	var vocab []string
	for b := range 256 {
		vocab = append(vocab, fmt.Sprintf("%q: %d", string(byteToRune[b]), b))
	}
	file := func(extra, normalizer, sep string) *Tokenizer {
		t.Helper()
		v := append(slices.Clone(vocab), extra)
		f := fmt.Sprintf(`{"normalizer": %s, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},%s"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {%s}, "merges": []}}`,
			normalizer, sep, strings.Join(v, ","+sep))
		p := filepath.Join(t.TempDir(), FileName)
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
		tok, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	base := file(`"ab": 256`, "null", "")
	if base.Digest() != file(`"ab": 256`, "null", "\n  ").Digest() {
		t.Errorf("whitespace changed the digest")
	}
	if base.Digest() == file(`"ac": 256`, "null", "").Digest() {
		t.Errorf("a different token digests alike")
	}
	if base.Digest() == file(`"ab": 256`, `{"type": "NFC"}`, "").Digest() {
		t.Errorf("NFC normalization digests alike")
	}
	if base.Digest() == qwen3(t).Digest() {
		t.Errorf("the minimal file and Qwen3 digest alike")
	}
}
