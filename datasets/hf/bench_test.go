package hf

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets/hf/hftest"
	"github.com/surgebench/surge/datasets/tokenizer/hub"
)

// benchRows is the rows each benchmark file holds.
const benchRows = 10_000

func benchPlan(b *testing.B, name string, data []byte) (*Plan, hub.Options) {
	h := hftest.New(b)
	h.Add("org/bench", "main", name, data)
	o := hub.Options{Endpoint: h.URL, CacheDir: b.TempDir(), Timeout: time.Minute}
	b.Setenv("HF_HUB_OFFLINE", "")
	plan := &Plan{Source: Source{Repo: "org/bench"}, Revision: "main", Files: []hub.Entry{{Path: name}}}
	return plan, o
}

func benchRead(b *testing.B, plan *Plan, o hub.Options, ro ReadOptions) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		err := Read(context.Background(), plan, o, ro, func(string, int, Row) error { n++; return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadParquet reads a cached 10,000-row Parquet file, two of its
// three columns decoded.
func BenchmarkReadParquet(b *testing.B) {
	type row struct {
		Q      string `parquet:"question"`
		Answer string `parquet:"answer"`
		N      int64  `parquet:"n"`
	}
	rows := make([]row, benchRows)
	for i := range rows {
		rows[i] = row{Q: fmt.Sprintf("question %d %s", i, strings.Repeat("lorem ipsum ", 16)), Answer: strings.Repeat("a", 400), N: int64(i)}
	}
	plan, o := benchPlan(b, "train.parquet", hftest.Parquet(b, rows, 1000))
	benchRead(b, plan, o, ReadOptions{Columns: []string{"question", "n"}})
}

// BenchmarkReadJSONL reads a cached 10,000-line JSON Lines file.
func BenchmarkReadJSONL(b *testing.B) {
	var s strings.Builder
	for i := range benchRows {
		fmt.Fprintf(&s, "{\"question\": \"question %d %s\", \"answer\": \"%s\", \"n\": %d}\n", i, strings.Repeat("lorem ipsum ", 16), strings.Repeat("a", 400), i)
	}
	plan, o := benchPlan(b, "train.jsonl", []byte(s.String()))
	benchRead(b, plan, o, ReadOptions{})
}
