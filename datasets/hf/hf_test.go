package hf

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets/hf/hftest"
	"github.com/surgebench/surge/datasets/tokenizer/hub"
	"github.com/surgebench/surge/internal/bounded"
)

func hubOpts(t *testing.T, h *hftest.Hub) hub.Options {
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "")
	return hub.Options{Endpoint: h.URL, CacheDir: t.TempDir(), Timeout: 10 * time.Second}
}

const card = `---
license: mit
configs:
- config_name: en
  default: true
  data_files:
  - split: train
    path: en/train-*.jsonl
  - split: test
    path: "en/test.csv"
- config_name: fr
  data_files: "fr/*.parquet"
- config_name: mixed
  data_dir: mixed
  data_files:
    validation: ["v*.json"]
---
# A dataset
`

type pqRow struct {
	Q string `parquet:"question"`
	N int64  `parquet:"n"`
}

// TestResolve: each way the Hub lays out a dataset's splits picks the
// right files, in order; a bad subset or split names what there is.
func TestResolve(t *testing.T) {
	h := hftest.New(t)
	h.PageSize = 3 // the listing comes in pages
	h.Add("org/carded", "main", "README.md", []byte(card))
	h.Add("org/carded", "main", "en/train-00001.jsonl", []byte(`{"q":"b"}`))
	h.Add("org/carded", "main", "en/train-00000.jsonl", []byte(`{"q":"a"}`))
	h.Add("org/carded", "main", "en/test.csv", []byte("q\nc\n"))
	h.Add("org/carded", "main", "fr/data.parquet", hftest.Parquet(t, []pqRow{{"x", 1}}, 0))
	h.Add("org/carded", "main", "mixed/v1.json", []byte(`[{"q":"v"}]`))
	h.Add("org/named", "main", "README.md", []byte("# no header\n"))
	h.Add("org/named", "main", "data/train-00000-of-00001.parquet", hftest.Parquet(t, []pqRow{{"x", 1}}, 0))
	h.Add("org/named", "main", "data/validation.jsonl", []byte(`{"q":"v"}`))
	h.Add("org/named", "main", "notes.txt", []byte("x"))
	h.Add("org/plain", "main", "prompts.jsonl", []byte(`{"q":"p"}`))
	h.Add("org/folders", "main", "sub1/test.jsonl", []byte(`{"q":"p"}`))
	h.Add("org/folders", "main", "sub2/test.jsonl", []byte(`{"q":"p"}`))
	h.Add("org/scripted", "main", "scripted.py", []byte("# a loading script"))
	h.Add("org/scripted", hftest.ParquetRevision(), "clean/test/0000.parquet", hftest.Parquet(t, []pqRow{{"x", 1}}, 0))
	h.Add("org/scripted", hftest.ParquetRevision(), "clean/partial-train/0000.parquet", hftest.Parquet(t, []pqRow{{"x", 1}}, 0))
	h.Add("org/scripted", hftest.ParquetRevision(), "other/test/0000.parquet", hftest.Parquet(t, []pqRow{{"x", 1}}, 0))
	h.Add("org/tarred", "main", "audio/test.tar", []byte("x"))
	o := hubOpts(t, h)
	for _, tc := range []struct {
		src       Source
		files     string
		rev, subs string
		err       string
	}{
		{src: Source{Repo: "org/carded"}, files: "en/train-00000.jsonl en/train-00001.jsonl", rev: "main", subs: "en"},
		{src: Source{Repo: "org/carded", Split: "test"}, files: "en/test.csv", rev: "main", subs: "en"},
		{src: Source{Repo: "org/carded", Subset: "fr"}, files: "fr/data.parquet", rev: "main", subs: "fr"},
		{src: Source{Repo: "org/carded", Subset: "mixed", Split: "validation"}, files: "mixed/v1.json", rev: "main", subs: "mixed"},
		{src: Source{Repo: "org/carded", Subset: "de"}, err: `hf dataset org/carded: no subset "de" (name one of its subsets (en, fr, mixed))`},
		{src: Source{Repo: "org/carded", Subset: "fr", Split: "test"}, err: `subset "fr" has no split "test" (give one of its splits (train))`},
		{src: Source{Repo: "org/named"}, files: "data/train-00000-of-00001.parquet", rev: "main"},
		{src: Source{Repo: "org/named", Split: "validation"}, files: "data/validation.jsonl", rev: "main"},
		{src: Source{Repo: "org/named", Split: "val"}, files: "data/validation.jsonl", rev: "main"},
		{src: Source{Repo: "org/named", Split: "test"}, err: `no split "test" (give one of its splits (train, validation))`},
		{src: Source{Repo: "org/plain"}, files: "prompts.jsonl", rev: "main"},
		{src: Source{Repo: "org/folders", Subset: "sub2", Split: "test"}, files: "sub2/test.jsonl", rev: "main", subs: "sub2"},
		{src: Source{Repo: "org/folders", Subset: "sub3", Split: "test"}, err: `no subset "sub3": its dataset card names no configs and no folder sub3/ holds data (give one of its folders as the subset (sub1, sub2))`},
		{src: Source{Repo: "org/scripted", Subset: "clean", Split: "test"}, files: "clean/test/0000.parquet", rev: ParquetRevision, subs: "clean"},
		{src: Source{Repo: "org/scripted", Subset: "clean"}, files: "clean/partial-train/0000.parquet", rev: ParquetRevision, subs: "clean"},
		{src: Source{Repo: "org/scripted", Split: "test"}, err: `its Parquet conversion has several subsets (name one of them as the subset (clean, other))`},
		{src: Source{Repo: "org/tarred", Split: "test"}, err: `hf dataset org/tarred: org/tarred keeps its data in tar files (audio/test.tar), which surge does not read; and its Parquet conversion (refs/convert/parquet) cannot be listed`},
		{src: Source{Repo: "org/missing"}, err: `hf dataset org/missing: listing its files: org/missing@main: ` + h.URL + ` has no file listing for it (HTTP 404`},
	} {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.src.Repo, tc.src.Subset, tc.src.Split), func(t *testing.T) {
			p, err := Resolve(context.Background(), tc.src, o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				var he *Error
				if !errors.As(err, &he) {
					t.Errorf("%T is not an *Error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range p.Files {
				got = append(got, f.Path)
			}
			if strings.Join(got, " ") != tc.files || p.Revision != tc.rev || p.Subset != tc.subs {
				t.Errorf("files %v at %s subset %q, want %s at %s subset %q (%s)", got, p.Revision, p.Subset, tc.files, tc.rev, tc.subs, p.How)
			}
		})
	}
}

// TestReadFormats: every format's rows come out as JSON values, in file
// order, each numbered within its file.
func TestReadFormats(t *testing.T) {
	h := hftest.New(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("{\"q\":\"g1\"}\n{\"q\":\"g2\"}\n"))
	_ = zw.Close()
	files := map[string][]byte{
		"a.json":     []byte("\ufeff [ {\"q\": \"j1\", \"n\": 1, \"f\": 1.5, \"l\": [1, \"x\"]},\n {\"q\": \"j2\", \"n\": null} ]"),
		"b.jsonl":    []byte("{\"q\":\"l1\",\"n\":2}\n\n{\"q\":\"l2\",\"m\":{\"k\":true}}\n"),
		"c.json":     []byte("{\"q\":\"jl1\"}\n{\"q\":\"jl2\"}"),
		"d.csv":      []byte("\ufeffq,n\n\"c,1\",3\nc2,4\n"),
		"e.tsv":      []byte("q\tn\nt1\t5\n"),
		"f.jsonl.gz": gz.Bytes(),
		"g.parquet":  hftest.Parquet(t, []pqRow{{"p1", 6}, {"p2", 7}, {"p3", 8}}, 2),
	}
	want := map[string]string{
		"a.json":     `1:map[f:1.5 l:[1 x] n:1 q:j1] 2:map[n:<nil> q:j2]`,
		"b.jsonl":    `1:map[n:2 q:l1] 2:map[m:map[k:true] q:l2]`,
		"c.json":     `1:map[q:jl1] 2:map[q:jl2]`,
		"d.csv":      `1:map[n:3 q:c,1] 2:map[n:4 q:c2]`,
		"e.tsv":      `1:map[n:5 q:t1]`,
		"f.jsonl.gz": `1:map[q:g1] 2:map[q:g2]`,
		"g.parquet":  `1:map[n:6 question:p1] 2:map[n:7 question:p2] 3:map[n:8 question:p3]`,
	}
	o := hubOpts(t, h)
	for name, b := range files {
		h.Add("org/formats", "main", name, b)
	}
	plan := &Plan{Source: Source{Repo: "org/formats"}, Revision: "main"}
	for name := range files {
		plan.Files = append(plan.Files, hub.Entry{Path: name})
	}
	sortEntries(plan.Files)
	got := map[string][]string{}
	err := Read(context.Background(), plan, o, ReadOptions{}, func(file string, n int, r Row) error {
		got[file] = append(got[file], fmt.Sprintf("%d:%v", n, map[string]any(r)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		if g := strings.Join(got[name], " "); g != w {
			t.Errorf("%s: got %s, want %s", name, g, w)
		}
	}
	// Integers are int64, fractions float64, whatever the format.
	_ = Read(context.Background(), &Plan{Source: plan.Source, Revision: "main", Files: []hub.Entry{{Path: "a.json"}}}, o, ReadOptions{},
		func(_ string, _ int, r Row) error {
			if _, ok := r["n"].(int64); !ok {
				t.Errorf("n is %T", r["n"])
			}
			if _, ok := r["f"].(float64); !ok {
				t.Errorf("f is %T", r["f"])
			}
			return ErrStop
		})
}

// TestReadStopsEarly: a reader that has its rows fetches no later file,
// and a JSON Lines file left before its end is not cached (a later read
// fetches it again), while one read whole is.
func TestReadStopsEarly(t *testing.T) {
	h := hftest.New(t)
	var big strings.Builder
	for i := range 1000 { // 1000 rows of 200 bytes: more than a read buffer
		fmt.Fprintf(&big, "{\"q\":\"row %04d %s\"}\n", i, strings.Repeat("x", 180))
	}
	h.Add("org/big", "main", "train-0.jsonl", []byte(big.String()))
	h.Add("org/big", "main", "train-1.jsonl", []byte(big.String()))
	o := hubOpts(t, h)
	plan, err := Resolve(context.Background(), Source{Repo: "org/big"}, o)
	if err != nil {
		t.Fatal(err)
	}
	var progress int64
	o.Progress = func(done, _ int64) { progress = done }
	read := func(rows int) int {
		n := 0
		err := Read(context.Background(), plan, o, ReadOptions{}, func(_ string, _ int, _ Row) error {
			if n++; n == rows {
				return ErrStop
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := h.Resolves.Load()
	if n := read(10); n != 10 {
		t.Fatalf("read %d rows", n)
	}
	if h.Resolves.Load()-before != 1 || progress == 0 {
		t.Errorf("10 rows fetched %d files (progress %d)", h.Resolves.Load()-before, progress)
	}
	// Not cached: fetched again.
	before = h.Resolves.Load()
	read(10)
	if h.Resolves.Load()-before != 1 {
		t.Errorf("second read fetched %d files, want the first again", h.Resolves.Load()-before)
	}
	// Read past the first file: it is kept, and fetched no more.
	read(1500)
	before = h.Resolves.Load()
	if n := read(1000); n != 1000 || h.Resolves.Load() != before {
		t.Errorf("a whole file read again fetched %d files", h.Resolves.Load()-before)
	}
	// Offline, the cached file reads; the uncached one is a clear error.
	t.Setenv("HF_HUB_OFFLINE", "1")
	if n := read(1000); n != 1000 {
		t.Errorf("offline read %d rows", n)
	}
	err = Read(context.Background(), plan, o, ReadOptions{}, func(string, int, Row) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "hf dataset org/big, train-1.jsonl: downloading it: org/big@main: not in the Hugging Face cache") ||
		!strings.Contains(err.Error(), "(run once with the network") {
		t.Errorf("offline miss: %v", err)
	}
	// The listing offline comes from the cache.
	p2, err := Resolve(context.Background(), Source{Repo: "org/big"}, o)
	if err != nil || len(p2.Files) != 1 || p2.Files[0].Path != "train-0.jsonl" {
		t.Errorf("offline listing: %+v %v", p2, err)
	}
	if _, err := Resolve(context.Background(), Source{Repo: "org/never"}, o); err == nil || !strings.Contains(err.Error(), "HF_HUB_OFFLINE is set (run once with the network") {
		t.Errorf("offline listing of an uncached dataset: %v", err)
	}
}

// TestReadParquetColumns: only the columns asked for are decoded; a
// missing one names those there are.
func TestReadParquetColumns(t *testing.T) {
	h := hftest.New(t)
	h.Add("org/pq", "main", "train.parquet", hftest.Parquet(t, []pqRow{{"a", 1}, {"b", 2}}, 1))
	o := hubOpts(t, h)
	plan := &Plan{Source: Source{Repo: "org/pq"}, Revision: "main", Files: []hub.Entry{{Path: "train.parquet"}}}
	var got []string
	if err := Read(context.Background(), plan, o, ReadOptions{Columns: []string{"question"}}, func(_ string, n int, r Row) error {
		got = append(got, fmt.Sprint(n, map[string]any(r)))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "1 map[question:a] 2 map[question:b]" {
		t.Errorf("rows %v", got)
	}
	err := Read(context.Background(), plan, o, ReadOptions{Columns: []string{"prompt"}}, func(string, int, Row) error { return nil })
	if err == nil || err.Error() != `hf dataset org/pq, train.parquet: no column "prompt" (its columns are question, n)` {
		t.Errorf("missing column: %v", err)
	}
}

// TestBadFiles: malformed rows and files name the dataset, the file and
// the row.
func TestBadFiles(t *testing.T) {
	h := hftest.New(t)
	h.Add("org/bad", "main", "a.jsonl", []byte("{\"q\":1}\n{\"q\":\n"))
	h.Add("org/bad", "main", "b.json", []byte(`[{"q":1}, 7]`))
	h.Add("org/bad", "main", "c.parquet", []byte("not parquet at all"))
	h.Add("org/bad", "main", "d.csv", []byte("a,b\n1\n"))
	h.Add("org/bad", "main", "e.arrow", []byte("x"))
	h.Add("org/bad", "main", "f.jsonl.gz", []byte("not gzip"))
	h.Add("org/bad", "main", "g.json", []byte("{\n  \"data\": [{\"q\": 1}]\n}\n"))
	o := hubOpts(t, h)
	for file, want := range map[string]string{
		"a.jsonl":    "hf dataset org/bad, a.jsonl row 2: line 2: malformed JSON: unexpected EOF (surge reads JSON Lines files of one row an object)",
		"g.json":     "hf dataset org/bad, g.json row 1: one JSON object over several lines, not a JSON array of rows or JSON Lines",
		"b.json":     "hf dataset org/bad, b.json row 2: element 2 is not a JSON object",
		"c.parquet":  "hf dataset org/bad, c.parquet: not a Parquet file",
		"d.csv":      "hf dataset org/bad, d.csv row 1: record on line 2: wrong number of fields",
		"e.arrow":    "hf dataset org/bad, e.arrow: not a JSON, JSON Lines, CSV or Parquet file (surge reads those formats only)",
		"f.jsonl.gz": "hf dataset org/bad, f.jsonl.gz row 1: not gzip",
	} {
		plan := &Plan{Source: Source{Repo: "org/bad"}, Revision: "main", Files: []hub.Entry{{Path: file}}}
		err := Read(context.Background(), plan, o, ReadOptions{}, func(string, int, Row) error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s", file, err, want)
		}
	}
}

// TestGated: a private dataset without a token is a 401 whose error says
// to set HF_TOKEN; with the token it reads.
func TestGated(t *testing.T) {
	h := hftest.New(t)
	h.Add("org/private", "main", "train.jsonl", []byte(`{"q":"secret"}`))
	h.Gate("org/private", "hf_good")
	o := hubOpts(t, h)
	_, err := Resolve(context.Background(), Source{Repo: "org/private"}, o)
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "(set HF_TOKEN to a token with access") {
		t.Errorf("no token: %v", err)
	}
	o.Token = "hf_wrong"
	if _, err = Resolve(context.Background(), Source{Repo: "org/private"}, o); err == nil || !strings.Contains(err.Error(), "HTTP 403") || strings.Contains(err.Error(), "hf_wrong") {
		t.Errorf("wrong token: %v", err)
	}
	o.Token = "hf_good"
	p, err := Resolve(context.Background(), Source{Repo: "org/private"}, o)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := Read(context.Background(), p, o, ReadOptions{}, func(string, int, Row) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("with the token: %d rows, %v", n, err)
	}
}

func TestParseCard(t *testing.T) {
	for _, tc := range []struct{ card, want string }{
		{"no header", "[]"},
		{"---\nconfigs:\n- config_name: a\n  data_files: x/*.csv\n---\n", "[a:map[train:[x/*.csv]]]"},
		{"---\nconfigs:\n- data_files:\n  - a.json\n  - b.json\n---\n", "[default:map[train:[a.json b.json]]]"},
		{"---\nconfigs:\n- config_name: s\n  data_files:\n  - split: test\n    path: [t1.csv, t2.csv]\n---\n", "[s:map[test:[t1.csv t2.csv]]]"},
		{"---\n: not yaml [\n---\n", "[]"},
	} {
		cs, err := parseCard([]byte(tc.card))
		if err != nil {
			t.Errorf("%q: %v", tc.card, err)
			continue
		}
		var got []string
		for _, c := range cs {
			got = append(got, fmt.Sprintf("%s:%v", c.Name, c.Files))
		}
		if g := "[" + strings.Join(got, " ") + "]"; g != tc.want {
			t.Errorf("%q: got %s, want %s", tc.card, g, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"data/train-*", "data/train-00000-of-00002.parquet", true},
		{"data/train-*", "data/sub/train-0.parquet", false},
		{"**/*.parquet", "a/b/c.parquet", true},
		{"**/*.parquet", "c.parquet", true},
		{"en/test.csv", "en/test.csv", true},
		{"./en/test.csv", "en/test.csv", true},
		{"en/[ab].csv", "en/b.csv", true},
		{"en/*", "fr/a", false},
	} {
		if got := match(tc.pat, tc.name); got != tc.want {
			t.Errorf("match(%q, %q) = %v", tc.pat, tc.name, got)
		}
	}
}

// TestParquetByRanges: a Parquet file is read by range requests, its
// footer first, then only the row groups the rows asked for need; it is
// not kept. A mirror that answers no range request gets the file asked
// whole (and kept), and reads the same rows.
func TestParquetByRanges(t *testing.T) {
	rows := make([]pqRow, 256)
	for i := range rows {
		rows[i] = pqRow{Q: fmt.Sprintf("q%02d %s", i, strings.Repeat("x", 64<<10)), N: int64(i)}
	}
	file := hftest.Parquet(t, rows, 4) // 64 row groups of 256 KiB
	for _, noRanges := range []bool{false, true} {
		h := hftest.New(t)
		h.NoRanges = noRanges
		h.Add("org/pq", "main", "train.parquet", file)
		o := hubOpts(t, h)
		o.RangesAbove = 1 << 20 // the file is larger: read by ranges
		plan := &Plan{Source: Source{Repo: "org/pq"}, Revision: "main", Files: []hub.Entry{{Path: "train.parquet"}}}
		var got []int64
		err := Read(context.Background(), plan, o, ReadOptions{Columns: []string{"n"}}, func(_ string, _ int, r Row) error {
			got = append(got, r["n"].(int64))
			if len(got) == 5 {
				return ErrStop
			}
			return nil
		})
		if err != nil || fmt.Sprint(got) != "[0 1 2 3 4]" {
			t.Fatalf("no ranges %v: %v %v", noRanges, got, err)
		}
		sent := h.Bytes.Load()
		switch {
		case noRanges && sent < int64(len(file)):
			t.Errorf("a mirror without ranges sent %d of %d bytes, want the whole file", sent, len(file))
		case !noRanges && (sent >= int64(len(file))/2 || h.Ranges.Load() == 0):
			t.Errorf("5 rows of one column read %d of %d bytes in %d range requests: want a few blocks", sent, len(file), h.Ranges.Load())
		}
	}
}

// TestParquetJunkAndHugeRows: a file that is not Parquet is refused from
// its last bytes (a 2 GiB one is not downloaded), and a row over
// MaxRowBytes is refused, naming the bound, before its row group is read.
func TestParquetJunkAndHugeRows(t *testing.T) {
	h := hftest.New(t)
	junk := bytes.Repeat([]byte("junk"), 1<<18) // 1 MiB: the tail says enough
	h.Add("org/pq", "main", "junk.parquet", junk)
	type big struct {
		Q string `parquet:"question,plain"`
	}
	h.Add("org/pq", "main", "big.parquet", hftest.Parquet(t, []big{{strings.Repeat("y", 80<<20)}}, 0))
	o := hubOpts(t, h)
	for file, want := range map[string]string{
		"junk.parquet": "hf dataset org/pq, junk.parquet: not a Parquet file: its last bytes are not PAR1",
		"big.parquet":  "over the 64 MiB limit",
	} {
		before := h.Bytes.Load()
		plan := &Plan{Source: Source{Repo: "org/pq"}, Revision: "main", Files: []hub.Entry{{Path: file}}}
		err := Read(context.Background(), plan, o, ReadOptions{Columns: []string{"question"}}, func(string, int, Row) error { return nil })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
		if sent := h.Bytes.Load() - before; sent > 2<<20 {
			t.Errorf("%s: %s read of it", file, bounded.Bytes(sent))
		}
	}
}
