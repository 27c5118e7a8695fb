package datasets

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// basetenParquetSample is the Baseten schema as a Parquet writer sees it
// (output_tokens as int32 and the session ids optional, to exercise the
// reader's conversions).
type basetenParquetSample struct {
	StartMs           int64   `parquet:"timestamp_start_unix_ms"`
	Prompt            string  `parquet:"prompt"`
	InputTokens       int64   `parquet:"input_tokens"`
	OutputTokens      int32   `parquet:"output_tokens"`
	TotalHashes       []int64 `parquet:"total_hashes,list"`
	ProvidedSessionID *string `parquet:"provided_session_id,optional"`
	PoorManSessionID  *int64  `parquet:"poor_man_session_id,optional"`
	DurationE2EMs     *int64  `parquet:"duration_e2e_ms,optional"`
	BlockSize         *int32  `parquet:"block_size,optional"`
}

// writeBasetenParquet writes rows in row groups of 5.
func writeBasetenParquet(t testing.TB, rows []basetenParquetSample) string {
	t.Helper()
	var b bytes.Buffer
	w := parquet.NewGenericWriter[basetenParquetSample](&b, parquet.MaxRowsPerRowGroup(5))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.parquet")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBasetenParquet: the sample written as Parquet loads to the very
// dataset its JSON Lines form does; bad columns name their row.
func TestBasetenParquet(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/baseten_sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []basetenParquetSample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var j struct {
			StartMs      int64   `json:"timestamp_start_unix_ms"`
			Prompt       string  `json:"prompt"`
			InputTokens  int64   `json:"input_tokens"`
			OutputTokens int32   `json:"output_tokens"`
			Hashes       []int64 `json:"total_hashes"`
			Provided     *string `json:"provided_session_id"`
			PoorMan      *int64  `json:"poor_man_session_id"`
			E2E          *int64  `json:"duration_e2e_ms"`
			BlockSize    *int32  `json:"block_size"`
		}
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, basetenParquetSample{j.StartMs, j.Prompt, j.InputTokens, j.OutputTokens, j.Hashes, j.Provided, j.PoorMan, j.E2E, j.BlockSize})
	}
	path := writeBasetenParquet(t, rows)
	want, wrep, err := Load(Options{InputFile: "testdata/baseten_sample.jsonl", CustomDatasetType: TypeBaseten})
	if err != nil {
		t.Fatal(err)
	}
	got, grep, err := Load(Options{InputFile: path}) // the type guessed from .parquet
	if err != nil {
		t.Fatal(err)
	}
	if grep.Type != TypeBaseten || grep.Rows != wrep.Rows || summary(got) != summary(want) {
		t.Errorf("Parquet load differs: %v\n%s\nvs JSONL %v\n%s", grep.Lines, summary(got), wrep.Lines, summary(want))
	}

	rows[7].InputTokens = -3
	if _, _, err := Load(Options{InputFile: writeBasetenParquet(t, rows)}); err == nil || !strings.Contains(err.Error(), "trace.parquet: row 8: input_tokens must not be negative") {
		t.Errorf("bad row: %v", err)
	}
	notParquet := writeFile(t, "x.parquet", "PAR1 this is not one")
	if _, _, err := Load(Options{InputFile: notParquet}); err == nil || !strings.Contains(err.Error(), "x.parquet: not a Parquet file") {
		t.Errorf("not Parquet: %v", err)
	}
}

func FuzzBasetenParquet(f *testing.F) {
	s := "x"
	seed, err := os.ReadFile(writeBasetenParquet(f, []basetenParquetSample{{StartMs: 5, Prompt: "hi", InputTokens: 1, OutputTokens: 2, ProvidedSessionID: &s}}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("PAR1PAR1"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "f.parquet")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		rows, err := readBasetenParquet(file, "f.parquet")
		checkInputError(t, err, "f.parquet")
		for _, r := range rows {
			if r.StartMs < 0 || r.InputTokens < 0 || r.OutputTokens < 0 {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}
