package tokenizer

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"
)

// referenceCase is one entry of testdata/reference.json, written by
// testdata/gen_reference.mjs with an independent implementation.
type referenceCase struct {
	Name   string `json:"name"`
	Text   string `json:"text"`
	Qwen3  []int  `json:"qwen3"`
	Llama3 []int  `json:"llama3"`
}

func readReference(t testing.TB) []referenceCase {
	t.Helper()
	data, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []referenceCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("testdata/reference.json: %v", err)
	}
	if len(ref.Cases) < 10 {
		t.Fatalf("testdata/reference.json: only %d cases", len(ref.Cases))
	}
	return ref.Cases
}

func TestReferenceIDs(t *testing.T) {
	t.Parallel()
	cases := readReference(t)
	for _, tc := range []struct {
		name string
		tok  *Tokenizer
		want func(referenceCase) []int
		nfc  bool
	}{
		{"qwen3", qwen3(t), func(c referenceCase) []int { return c.Qwen3 }, true},
		{"llama3", llama3(t), func(c referenceCase) []int { return c.Llama3 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				want := tc.want(c)
				if want == nil {
					want = []int{}
				}
				got := tc.tok.Encode(c.Text)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: Encode(%q) mismatch (-reference +got):\n%s", c.Name, c.Text, diff)
				}
				if n := tc.tok.Count(c.Text); n != len(got) {
					t.Errorf("%s: Count = %d, len(Encode) = %d", c.Name, n, len(got))
				}
				wantText := c.Text
				if tc.nfc {
					wantText = norm.NFC.String(wantText)
				}
				if dec := tc.tok.Decode(got); dec != wantText {
					t.Errorf("%s: Decode(Encode(s)) = %q, want %q", c.Name, dec, wantText)
				}
			}
		})
	}
}
