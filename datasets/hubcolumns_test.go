package datasets

import (
	"strings"
	"testing"
)

func TestParseColumns(t *testing.T) {
	for _, tc := range []struct {
		specs []string
		want  Columns
		err   string
	}{
		{specs: []string{"prompt=question"}, want: Columns{Prompt: "question"}},
		{specs: []string{"prompt=q, system = sys", "output_len=n,image=img", "audio=a"}, want: Columns{Prompt: "q", System: "sys", OutputLen: "n", Image: "img", Audio: "a"}},
		{specs: []string{"messages=conversations"}, want: Columns{Messages: "conversations"}},
		{specs: []string{"prompt=col=with=equals"}, want: Columns{Prompt: "col=with=equals"}},
		{specs: []string{"prompt=a b"}, want: Columns{Prompt: "a b"}},
		{specs: nil, err: "no prompt=COLUMN or messages=COLUMN"},
		{specs: []string{"image=img"}, err: "no prompt=COLUMN or messages=COLUMN"},
		{specs: []string{"prompt"}, err: `"prompt": want ROLE=COLUMN (roles: prompt, system, output_len, image, audio, messages)`},
		{specs: []string{"prompt="}, err: `"prompt=": the column name is empty`},
		{specs: []string{"prompt=a", "prompt=b"}, err: `"prompt=b": prompt is mapped twice`},
		{specs: []string{"video=v"}, err: `"video=v": unknown role "video"`},
		{specs: []string{"prompt=a,messages=m"}, err: "prompt=a and messages=m both give the user's text: map one"},
		{specs: []string{"prompt=" + strings.Repeat("x", 300)}, err: "not a column name"},
	} {
		got, err := ParseColumns(tc.specs)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.specs, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.specs, err)
		case got != tc.want:
			t.Errorf("%q: got %+v, want %+v", tc.specs, got, tc.want)
		}
	}
}

// FuzzParseColumns: any input parses or is refused without a panic; a
// mapping that parses names the user's text once and reads back from its
// String the same.
func FuzzParseColumns(f *testing.F) {
	for _, s := range []string{"prompt=question", "prompt=q,system=s,output_len=n,image=i,audio=a", "messages=conversations,image=images",
		"prompt=", "=x", "prompt=a,prompt=b", "video=v", ",,prompt = spaced name ,", "prompt=a=b", "messages=m,prompt=p", "prompt=\x00"} {
		f.Add(s, "")
		f.Add(s, "system=sys")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		c, err := ParseColumns([]string{a, b})
		if err != nil {
			if c != (Columns{}) {
				t.Errorf("%q %q: error %v with a mapping %+v", a, b, err, c)
			}
			return
		}
		if (c.Prompt == "") == (c.Messages == "") {
			t.Fatalf("%q %q: prompt %q, messages %q", a, b, c.Prompt, c.Messages)
		}
		for _, col := range c.names() {
			if col == "" || len(col) > maxColumnName || strings.Contains(col, ",") || col != strings.TrimSpace(col) {
				t.Fatalf("%q %q: column %q", a, b, col)
			}
		}
		again, err := ParseColumns([]string{c.String()})
		if err != nil || again != c {
			t.Fatalf("%q %q: %+v wrote %q, read back %+v, %v", a, b, c, c.String(), again, err)
		}
	})
}
