package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestInvalidUTF8IsRefused: a line that is not UTF-8 is refused with
// file:line (and the column), in every format read as text, rather than
// sent with its bytes replaced by U+FFFD; AllowInvalidUTF8 reads it.
func TestInvalidUTF8IsRefused(t *testing.T) {
	t.Parallel()
	const bad = "caf\xe9" // Latin-1 é
	cases := []struct {
		name, file, kind, content string
		line, col                 int
	}{
		{"single_turn", "s.jsonl", TypeSingleTurn, `{"text": "ok"}` + "\n" + `{"text": "` + bad + `"}` + "\n", 2, 14},
		{"multi_turn", "m.jsonl", TypeMultiTurn, `{"turns": [{"text": "a"}]}` + "\n\n" + `{"turns": [{"text": "` + bad + `"}]}` + "\n", 3, 25},
		{"mooncake", "t.jsonl", TypeMooncake, `{"timestamp": 0, "text_input": "` + bad + `"}` + "\n", 1, 36},
		{"sharegpt", "g.json", PublicShareGPT, "[\n" + `{"conversations": [{"from": "human", "value": "` + bad + ` is a word for a small restaurant that serves coffee"}, {"from": "gpt", "value": "Yes, and also light meals and pastries."}]}` + "\n]\n", 2, 51},
		{"azure CSV", "a.csv", TypeAzure, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44" + bad + "\n", 2, 38},
		{"inputs_json", "i.json", TypeInputsJSON, `{"data": [{"session_id": "s", "payloads": [{"x": "` + bad + `"}]}]}` + "\n", 1, 54},
		{"raw_payload", "r.jsonl", TypeRawPayload, `{"x": "ok"}` + "\n" + `{"x": "` + bad + `"}` + "\n", 2, 11},
		{"truncated sequence at the end", "e.jsonl", TypeSingleTurn, `{"text": "ok"}` + "\n\xe2\x82", 2, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := writeFile(t, tc.file, tc.content)
			_, _, err := Load(Options{InputFile: f, CustomDatasetType: tc.kind})
			var ie *InputError
			if !errors.As(err, &ie) || !errors.Is(err, ErrInvalidUTF8) {
				t.Fatalf("got %v, want an *InputError for invalid UTF-8", err)
			}
			if ie.File != f || ie.Line != tc.line || !strings.Contains(ie.Msg, "column "+strconv.Itoa(tc.col)+" ") {
				t.Errorf("%v: want line %d, column %d", err, tc.line, tc.col)
			}
			if strings.HasSuffix(tc.name, "at the end") || tc.kind == TypeAzure {
				return // the bytes make the row bad anyway
			}
			d, _, err := Load(Options{InputFile: f, CustomDatasetType: tc.kind, AllowInvalidUTF8: true})
			if err != nil {
				t.Fatalf("AllowInvalidUTF8: %v", err)
			}
			// What becomes of the bytes: kept in a body sent byte for byte,
			// U+FFFD in a field encoding/json decoded.
			var all strings.Builder
			for i := range d.Len() {
				for _, tr := range d.Conversation(i).Turns {
					all.WriteString(tr.Content())
					all.Write(tr.Body)
				}
			}
			want := "caf\uFFFD"
			if tc.kind == TypeRawPayload || tc.kind == TypeInputsJSON {
				want = bad
			}
			if !strings.Contains(all.String(), want) {
				t.Errorf("AllowInvalidUTF8: the content %q holds no %q", all.String(), want)
			}
		})
	}
}

// TestInvalidUTF8InAWekaFolder: the folder formats read each file through
// the same check.
func TestInvalidUTF8InAWekaFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "weka", "session_01.json"))
	if err != nil {
		t.Fatal(err)
	}
	b := strings.Replace(string(src), `"trace-01"`, "\"trace-\xff\"", 1)
	if err := os.WriteFile(filepath.Join(dir, "s.json"), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(Options{InputFile: dir, CustomDatasetType: TypeWeka})
	if !errors.Is(err, ErrInvalidUTF8) || !strings.Contains(err.Error(), "s.json:2: byte 0xff at column 15 ") {
		t.Errorf("got %v, want s.json:2, column 15", err)
	}
}

// TestUTF8CheckAcrossReads: a sequence split between two reads is whole,
// wherever the split falls; an invalid one is found wherever it falls.
func TestUTF8CheckAcrossReads(t *testing.T) {
	t.Parallel()
	text := []byte("ab\nαβγ€😀x\n€")
	for cut := range len(text) + 1 {
		u := &utf8Check{file: "f"}
		if err := u.scan(text[:cut]); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if err := u.scan(text[cut:]); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if err := u.end(); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
	}
	bad := []byte("ab\ncd€\xf0\x9f\x98z")
	for cut := range len(bad) + 1 {
		u := &utf8Check{file: "f"}
		err := u.scan(bad[:cut])
		if err == nil {
			err = u.scan(bad[cut:])
		}
		if err == nil || !strings.Contains(err.Error(), "f:2: byte 0xf0 at column 6 ") {
			t.Errorf("cut %d: %v, want line 2 column 6", cut, err)
		}
	}
}

// FuzzUTF8Check: the check agrees with utf8.Valid however the bytes are
// split into reads.
func FuzzUTF8Check(f *testing.F) {
	f.Add([]byte("héllo\nwörld"), uint8(3))
	f.Add([]byte("a\xe2\x82"), uint8(2))
	f.Add([]byte("\xed\xa0\x80"), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, step uint8) {
		u := &utf8Check{file: "f"}
		n := int(step%7) + 1
		var err error
		for i := 0; i < len(b) && err == nil; i += n {
			err = u.scan(b[i:min(i+n, len(b))])
		}
		if err == nil {
			err = u.end()
		}
		if (err == nil) != utf8.Valid(b) {
			t.Fatalf("%q in reads of %d: %v, utf8.Valid %v", b, n, err, utf8.Valid(b))
		}
	})
}
