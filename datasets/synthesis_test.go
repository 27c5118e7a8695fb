package datasets

import (
	"fmt"
	"strings"
	"testing"
)

// rowsOf builds generated Mooncake rows of the given lengths and ids.
func rowsOf(specs ...any) []MooncakeRow {
	var rows []MooncakeRow
	for i := 0; i < len(specs); i += 2 {
		rows = append(rows, MooncakeRow{InputLength: specs[i].(int), OutputLength: 20, HashIDs: specs[i+1].([]int64), Timestamp: 1000, HasTimestamp: true})
	}
	return rows
}

// TestSynthesizeRows: the cases of AIPerf's synthesizer tests, in its
// block size of 512: the shared prefix stretched (whole and fractional
// multipliers) or kept, the unique prompt scaled, lengths capped at max
// ISL, outputs scaled then capped, timestamps divided.
func TestSynthesizeRows(t *testing.T) {
	t.Parallel()
	shared := func(n int, last int64) []int64 {
		ids := make([]int64, 0, n+1)
		for i := range n {
			ids = append(ids, int64(i))
		}
		return append(ids, last)
	}
	for _, tc := range []struct {
		name      string
		rows      []MooncakeRow
		o         SynthesisOptions
		blocks    int
		isl       int
		osl, ts   float64
		unchanged bool
	}{
		{"prefix ×1", rowsOf(1536, []int64{1, 2, 3}, 1536, []int64{1, 2, 4}), SynthesisOptions{PrefixLen: 1}, 3, 1536, 20, 1000, true},
		{"prefix ×2", rowsOf(1024, []int64{1, 2}, 1024, []int64{1, 3}), SynthesisOptions{PrefixLen: 2}, 3, 1536, 20, 1000, false},
		{"prefix ×1.5 of 10", rowsOf(11*512, shared(10, 100), 11*512, shared(10, 200)), SynthesisOptions{PrefixLen: 1.5}, 16, 16 * 512, 20, 1000, false},
		{"prefix ×2.3 of 4", rowsOf(5*512, shared(4, 100), 5*512, shared(4, 200)), SynthesisOptions{PrefixLen: 2.3}, 11, 11 * 512, 20, 1000, false},
		{"prefix ×0.5 of 10", rowsOf(11*512, shared(10, 100), 11*512, shared(10, 200)), SynthesisOptions{PrefixLen: 0.5}, 6, 6 * 512, 20, 1000, false},
		{"prompt ×3", rowsOf(1024, []int64{1, 2}, 1024, []int64{1, 3}), SynthesisOptions{PromptLen: 3}, 4, 2048, 20, 1000, false},
		{"max isl caps the reshaped", rowsOf(5120, shared(9, 9), 5120, shared(9, 9)), SynthesisOptions{PrefixLen: 1.01, MaxISL: 5500}, 11, 5500, 20, 1000, false},
		{"output ×2.5", rowsOf(100, []int64{1}), SynthesisOptions{OutputLen: 2.5}, 1, 100, 50, 1000, false},
		{"output ×2.5 capped", rowsOf(100, []int64{1}), SynthesisOptions{OutputLen: 2.5, MaxOSL: 40}, 1, 100, 40, 1000, false},
		{"speedup 2", rowsOf(100, []int64{1}), SynthesisOptions{Speedup: 2}, 1, 100, 20, 500, false},
		{"speedup 0.5", rowsOf(100, []int64{1}), SynthesisOptions{Speedup: 0.5}, 1, 100, 20, 2000, false},
	} {
		before := fmt.Sprint(tc.rows)
		rows, lines := synthesizeRows(tc.rows, 512, &tc.o, 1)
		r := rows[len(rows)-1]
		if len(r.HashIDs) != tc.blocks || r.InputLength != tc.isl || float64(r.OutputLength) != tc.osl || r.Timestamp != tc.ts {
			t.Errorf("%s: %d blocks (%v), ISL %d, OSL %d, ts %g; want %d, %d, %g, %g", tc.name, len(r.HashIDs), r.HashIDs, r.InputLength, r.OutputLength, r.Timestamp, tc.blocks, tc.isl, tc.osl, tc.ts)
		}
		if tc.unchanged != (fmt.Sprint(rows) == before) {
			t.Errorf("%s: rows changed %v (lines %q)", tc.name, !tc.unchanged, lines)
		}
		if n := len(r.HashIDs); r.InputLength <= (n-1)*512 || r.InputLength > n*512 {
			t.Errorf("%s: %d tokens do not fit %d blocks", tc.name, r.InputLength, n)
		}
	}
	// Two rows sharing a prefix still share it, stretched.
	rows, _ := synthesizeRows(rowsOf(1024, []int64{1, 2}, 1024, []int64{1, 3}), 512, &SynthesisOptions{PrefixLen: 2}, 1)
	if a, b := rows[0].HashIDs, rows[1].HashIDs; a[0] != b[0] || a[1] != b[1] || a[2] == b[2] {
		t.Errorf("shared prefix lost: %v %v", a, b)
	}
}

// TestPrefixRoots: the rows spread over independent trees, no id shared
// between trees, each row's prefix kept within its tree.
func TestPrefixRoots(t *testing.T) {
	t.Parallel()
	var specs []any
	for range 100 {
		specs = append(specs, 1024, []int64{1, 2})
	}
	rows, _ := synthesizeRows(rowsOf(specs...), 512, &SynthesisOptions{PrefixLen: 2, PrefixRoot: 3}, 5)
	trees := map[int64]map[int64]bool{}
	for _, r := range rows {
		if len(r.HashIDs) != 4 {
			t.Fatalf("row has %d ids, want 4: %v", len(r.HashIDs), r.HashIDs)
		}
		if trees[r.HashIDs[0]] == nil {
			trees[r.HashIDs[0]] = map[int64]bool{}
		}
		for _, h := range r.HashIDs {
			trees[r.HashIDs[0]][h] = true
		}
	}
	if len(trees) != 3 {
		t.Fatalf("%d trees, want 3", len(trees))
	}
	seen := map[int64]int64{}
	for root, ids := range trees {
		for h := range ids {
			if other, ok := seen[h]; ok && other != root {
				t.Errorf("id %d in trees %d and %d", h, root, other)
			}
			seen[h] = root
		}
	}
}

// TestSynthesisLoads: a Mooncake trace synthesized loads with prompts of
// the reshaped lengths; Baseten takes the output multiplier (min_tokens
// follows) and refuses a reshape; a non-trace refuses any synthesis.
func TestSynthesisLoads(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	mc := writeFile(t, "m.jsonl", `{"timestamp": 0, "input_length": 600, "output_length": 10, "hash_ids": [1, 2]}
{"timestamp": 1000, "input_length": 600, "output_length": 10, "hash_ids": [1, 3]}
{"timestamp": 2000, "input_length": 5000, "output_length": 10}
`)
	d, rep, err := Load(Options{InputFile: mc, CustomDatasetType: TypeMooncake, Tokenizer: tok,
		Synthesis: SynthesisOptions{PrefixLen: 2, OutputLen: 3, MaxISL: 4000, Speedup: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Conversations) != 2 || !strings.Contains(strings.Join(rep.Lines, "\n"), "1 rows over 4000 input tokens left out") {
		t.Fatalf("%d conversations: %v", len(d.Conversations), rep.Lines)
	}
	for _, c := range d.Conversations {
		tr := c.Turns[0]
		if got := len(tok.Encode(tr.Content())); tr.InputTokens != 600+512 || got < tr.InputTokens-2 || got > tr.InputTokens+2 || tr.MaxTokens != 30 {
			t.Errorf("%s: ISL %d (prompt %d tokens), cap %d; want 1112 and 30", c.ID, tr.InputTokens, got, tr.MaxTokens)
		}
	}
	if d.Conversations[1].Turns[0].Timestamp.Milliseconds() != 250 {
		t.Errorf("second row at %v, want 250 ms", d.Conversations[1].Turns[0].Timestamp)
	}
	bt := writeFile(t, "b.jsonl", basetenTwoSessions)
	d, _, err = Load(Options{InputFile: bt, Synthesis: SynthesisOptions{OutputLen: 2, MaxOSL: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if x := d.Conversations[1].Turns; x[0].MaxTokens != 8 || x[0].Extra["min_tokens"] != 8 || x[1].MaxTokens != 10 || x[1].Extra["min_tokens"] != 10 {
		t.Errorf("baseten outputs ×2 capped at 10: %+v", x)
	}
	for _, tc := range []struct {
		path, kind string
		o          SynthesisOptions
		field      string
	}{
		{bt, TypeBaseten, SynthesisOptions{PrefixLen: 2}, "Synthesis.PrefixLen"},
		{bt, TypeBaseten, SynthesisOptions{Speedup: 2}, "Synthesis.Speedup"},
		{writeFile(t, "s.jsonl", `{"text": "hi"}`+"\n"), TypeSingleTurn, SynthesisOptions{MaxOSL: 3}, "Synthesis.MaxOSL"},
		{mc, TypeMooncake, SynthesisOptions{MaxISL: 10}, "Synthesis.MaxISL"},
		{mc, TypeMooncake, SynthesisOptions{PromptLen: -1}, "Synthesis.PromptLen"},
	} {
		if _, _, err := Load(Options{InputFile: tc.path, CustomDatasetType: tc.kind, Tokenizer: tok, Synthesis: tc.o}); !isOption(err, tc.field) {
			t.Errorf("%s %+v: %v, want an error on %s", tc.kind, tc.o, err, tc.field)
		}
	}
}
