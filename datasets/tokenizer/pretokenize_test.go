package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/google/go-cmp/cmp"
)

func pieces(split splitter, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := split(s, i)
		if j <= i || j > len(s) {
			panic("splitter did not advance")
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// oraclePieces splits s with a backtracking regex engine that has
// lookahead (regexp2), keeping the unmatched gaps as pieces the way the
// Isolated behaviour does.
func oraclePieces(re *regexp2.Regexp, s string) []string {
	runes := []rune(s)
	var out []string
	last := 0
	m, _ := re.FindRunesMatch(runes)
	for m != nil {
		if m.Index > last {
			out = append(out, string(runes[last:m.Index]))
		}
		if m.Length > 0 {
			out = append(out, string(runes[m.Index:m.Index+m.Length]))
		}
		last = m.Index + m.Length
		m, _ = re.FindNextMatch(m)
	}
	if last < len(runes) {
		out = append(out, string(runes[last:]))
	}
	return out
}

var splitters = []struct {
	name    string
	pattern string
	split   splitter
}{
	{"qwen3", patternGPT4Digits1, gpt4Splitter(1)},
	{"llama3", patternGPT4Digits3, gpt4Splitter(3)},
	{"gpt2", patternGPT2, gpt2Split},
}

func TestSplitPieces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		splitter int
		in       string
		want     []string
	}{
		{0, "   hello", []string{"  ", " hello"}},
		{0, "a   ", []string{"a", "   "}},
		{0, "x \n\n  y", []string{"x", " \n\n", " ", " y"}},
		{0, "1234567", []string{"1", "2", "3", "4", "5", "6", "7"}},
		{1, "1234567", []string{"123", "456", "7"}},
		{1, "don't I'LL", []string{"don", "'t", " I", "'LL"}},
		{1, "\tword", []string{"\tword"}},
		{1, "end.\n\nnext", []string{"end", ".\n\n", "next"}},
		{1, " ...!", []string{" ...!"}},
		{1, "'hello", []string{"'hello"}},
		{1, "it\u017Fs '\u017F", []string{"it\u017Fs", " '", "\u017F"}},
		{1, "x'\u017F", []string{"x", "'\u017F"}},
		{2, "I'LL don't", []string{"I", "'", "LL", " don", "'t"}},
		{2, "a  12 b", []string{"a", " ", " 12", " b"}},
	}
	for _, tc := range tests {
		s := splitters[tc.splitter]
		if diff := cmp.Diff(tc.want, pieces(s.split, tc.in)); diff != "" {
			t.Errorf("%s split %q (-want +got):\n%s", s.name, tc.in, diff)
		}
	}
}

// oracleInputs mixes every character class the patterns care about.
var oracleInputs = []string{
	"Hello, world! It's 2024-06-01 and I'VE got 1234567 things to do.\n\n\tIndented\r\n  x   \n",
	"def f(x):\n    return x ** 2  # square\n\n\n",
	"你好，世界！ 123 ٣٤٥ ½ Ⅻ café e\u0301 🍕🍕 👍🏽",
	"a\u00a0b\u3000c\u2028d\u2029e\u000bf\u000cg \u00a0 h",
	"''' 's 'S 're 'RE 'rE 'll 'LL 'lL 'd 'D 'm 'M 't 'T 've 'VE 'x ''s",
	"   \n   \n\n \t \r\n\r\n  end  ",
	"!!!\n\n??? ... --- *** ~~~ ((( ))) \"\"\" <<< >>>\r\n",
	" ", "\n", "'", "1", "a", ".", " .", " a", " 1", "\t\t", "  ",
}

func TestSplitMatchesRegexOracle(t *testing.T) {
	t.Parallel()
	for _, s := range splitters {
		re := regexp2.MustCompile(s.pattern, regexp2.None)
		for _, in := range oracleInputs {
			if diff := cmp.Diff(oraclePieces(re, in), pieces(s.split, in)); diff != "" {
				t.Errorf("%s split %q (-regexp2 +scanner):\n%s", s.name, in, diff)
			}
		}
	}
}

// FuzzSplit checks the hand-written scanners against regexp2 on any valid
// UTF-8 (regexp2's (?i) does not fold U+017F like Oniguruma, so inputs
// holding it are only checked for coverage).
func FuzzSplit(f *testing.F) {
	for _, in := range oracleInputs {
		f.Add(in)
	}
	res := make([]*regexp2.Regexp, len(splitters))
	for i, s := range splitters {
		res[i] = regexp2.MustCompile(s.pattern, regexp2.None)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 4096 {
			return // the backtracking oracle slows down past this; the scanner is tested on long text elsewhere
		}
		for i, s := range splitters {
			got := pieces(s.split, in)
			if strings.Join(got, "") != in {
				t.Fatalf("%s: pieces of %q do not cover it: %q", s.name, in, got)
			}
			if !utf8.ValidString(in) || strings.ContainsRune(in, '\u017F') {
				continue
			}
			if diff := cmp.Diff(oraclePieces(res[i], in), got); diff != "" {
				t.Fatalf("%s split %q (-regexp2 +scanner):\n%s", s.name, in, diff)
			}
		}
	})
}
