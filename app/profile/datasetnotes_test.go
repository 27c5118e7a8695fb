package profile

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/surgebench/surge/app/cmdline"
)

// TestDatasetNotesFitTheWidth: the start-up notes of a dataset's load
// (here a WEKA trace's, three of them) are wrapped at
// spaces to the console's width, never cut.
func TestDatasetNotesFitTheWidth(t *testing.T) {
	t.Parallel()
	c := cmdline.Config{Model: "m", InputFile: filepath.Join("..", "..", "datasets", "testdata", "weka"), CustomDatasetType: "weka"}
	s := specFor(t, c)
	s.Columns = 60
	var log strings.Builder
	if _, err := loadDataset(context.Background(), s, nil, 1, &log); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("want notes that wrap, got:\n%s", log.String())
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > s.Columns && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("%d columns, over %d: %q", n, s.Columns, l)
		}
	}
	if joined := strings.Join(strings.Fields(log.String()), " "); !strings.Contains(joined, "13 calls after a tool use (sent as tool results)") {
		t.Errorf("a note lost words:\n%s", log.String())
	}
}
