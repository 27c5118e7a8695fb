package hf

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzParseCard: any dataset card parses or is refused, never panics; a
// config has a name.
func FuzzParseCard(f *testing.F) {
	f.Add([]byte(card))
	f.Add([]byte("---\nconfigs:\n- data_files: [a, b]\n---\n"))
	f.Add([]byte("---\nconfigs:\n- config_name: x\n  data_files: {train: a.csv, test: [b.csv]}\n---\n"))
	f.Add([]byte("---\nconfigs: 7\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := parseCard(b)
		if err != nil {
			return
		}
		for _, c := range cs {
			if c.Name == "" {
				t.Fatalf("a config with no name from %q", b)
			}
		}
	})
}

// FuzzReadRows: any bytes read as JSON, JSON Lines, CSV or TSV give rows
// or an error, never a panic; every row is an object.
func FuzzReadRows(f *testing.F) {
	for _, s := range []string{`[{"a": 1}, {"b": [1.5, "x"]}]`, "{\"a\":1}\n\n{\"a\":null}\n", "a,b\n1,2\n", "a\tb\n1\t\"2\n", `[1]`, `{"a":`, "\ufeff[]", ""} {
		for fm := JSON; fm <= TSV; fm++ {
			f.Add([]byte(s), uint8(fm))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, fm uint8) {
		format := Format(fm%4) + JSON
		each := func(r Row) error {
			if r == nil {
				t.Fatalf("a nil row from %q", b)
			}
			return nil
		}
		var err error
		if format == CSV || format == TSV {
			err = readCSV(bytes.NewReader(b), format, each)
		} else {
			err = readJSON(bytes.NewReader(b), format, each)
		}
		if err != nil && errors.Is(err, ErrStop) {
			t.Fatal("ErrStop from a reader")
		}
	})
}

// FuzzSplitOf: a path's split is one of the Hub's three or none.
func FuzzSplitOf(f *testing.F) {
	for _, s := range []string{"data/train-00000-of-00002.parquet", "test/x.csv", "dev.jsonl", "a/b/c", "TRAINING/validation_1.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		switch s := splitOf(p); s {
		case "", "train", "validation", "test":
		default:
			t.Fatalf("%q: split %q", p, s)
		}
		_ = match(p, strings.ToLower(p))
	})
}
