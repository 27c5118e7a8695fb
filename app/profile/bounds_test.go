package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
)

// longTrace writes a Mooncake trace of rows lines whose every prompt is at
// the 4M-token cap: 128 KB of file that asks for gigabytes of prompts.
func longTrace(t *testing.T, rows int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	var b strings.Builder
	for i := range rows {
		fmt.Fprintf(&b, "{\"timestamp\": %d, \"input_length\": 4194304, \"output_length\": 8}\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMaxMemoryRefusesWithTheNumbers: a workload estimated to need more
// than --max-memory is refused before it loads, saying how much it needs,
// the budget and the flags that change either; within the budget it runs.
func TestMaxMemoryRefusesWithTheNumbers(t *testing.T) {
	t.Parallel()
	trace := longTrace(t, 2000)
	c := apptest.RunConfig("http://127.0.0.1:1", t.TempDir())
	c.InputFile, c.CustomDatasetType, c.MaxMemory = trace, "mooncake_trace", "64MiB"
	c.Concurrency = "64"
	_, err := prepareConfig(c, io.Discard)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "needs ≈") || !strings.Contains(err.Error(), "the budget is 67.1 MB") ||
		!strings.Contains(err.Error(), "--max-memory") || !strings.Contains(err.Error(), "--concurrency") {
		t.Errorf("got %v, want a usage error with the need, the budget and the flags", err)
	}
	c.MaxMemory, c.Concurrency = "8GiB", "4"
	if _, err := prepareConfig(c, io.Discard); err != nil {
		t.Errorf("within the budget: %v", err)
	}
	c.MaxMemory = "12 parsecs"
	if _, err := prepareConfig(c, io.Discard); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--max-memory") {
		t.Errorf("a bad size: %v", err)
	}
}

// TestInvalidUTF8IsRefusedUnlessAllowed: a dataset line that is not UTF-8
// is refused by file and line; --allow-invalid-utf8 runs it.
func TestInvalidUTF8IsRefusedUnlessAllowed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(path, []byte("{\"text\": \"fine\"}\n{\"text\": \"caf\xe9\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := apptest.MockForTest(t)
	c := apptest.RunConfig(srv, t.TempDir())
	c.InputFile, c.CustomDatasetType, c.RequestCount = path, "single_turn", 2
	_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), path+":2") || !strings.Contains(err.Error(), "--allow-invalid-utf8") {
		t.Errorf("got %v, want a usage error naming %s:2 and the flag", err, path)
	}
	c.AllowInvalidUTF8 = true
	if res, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil || res.AllFailed() {
		t.Errorf("--allow-invalid-utf8: %v", err)
	}
}
