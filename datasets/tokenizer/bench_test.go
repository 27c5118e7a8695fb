package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// benchText returns the benchmark corpora: prose is the Apache License text
// shipped next to the embedded tokenizer (about 11 KB of English), code is
// this package's Go source.
func benchText(b *testing.B, kind string) string {
	b.Helper()
	var files []string
	switch kind {
	case "prose":
		files = []string{"LICENSE.qwen3"}
	case "code":
		var err error
		if files, err = filepath.Glob("*.go"); err != nil {
			b.Fatal(err)
		}
	}
	var sb strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(data)
	}
	return sb.String()
}

func BenchmarkCount(b *testing.B) {
	for _, tk := range []struct {
		name string
		tok  func(testing.TB) *Tokenizer
	}{{"qwen3", qwen3}, {"llama3", llama3}} {
		for _, kind := range []string{"prose", "code"} {
			b.Run(tk.name+"/"+kind, func(b *testing.B) {
				tok, text := tk.tok(b), benchText(b, kind)
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					tok.Count(text)
				}
			})
		}
	}
}

// BenchmarkCountNoCache measures the merge loop alone: every piece misses.
func BenchmarkCountNoCache(b *testing.B) {
	text := benchText(b, "prose")
	fresh, err := parseEmbedded()
	if err != nil {
		b.Fatal(err)
	}
	fresh.cache.off = true
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		fresh.Count(text)
	}
}

func BenchmarkEncode(b *testing.B) {
	tok, text := qwen3(b), benchText(b, "prose")
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		tok.Encode(text)
	}
}

// BenchmarkCountParallel runs Count on every core at once, as metric shards
// do, to show the sharded cache does not serialize them.
func BenchmarkCountParallel(b *testing.B) {
	tok, text := qwen3(b), benchText(b, "prose")
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tok.Count(text)
		}
	})
}

func BenchmarkLoad(b *testing.B) {
	b.Run("qwen3-table", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := readTable(qwen3Table); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("qwen3-embedded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseEmbedded(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("llama3-file", func(b *testing.B) {
		llama3(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Load(llama3Path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCountLongWord counts one unbroken word of a repeated letter
// (a pathological response: one pre-token as long as the text), one of
// random letters (no window repeats), and the same number of bytes as
// ordinary words. B/inbyte is the memory allocated per input byte.
func BenchmarkCountLongWord(b *testing.B) {
	tok := qwen3(b)
	for _, size := range []int{1 << 20, 4 << 20} {
		for _, kind := range []string{"word", "random", "words"} {
			var text string
			switch kind {
			case "word":
				text = strings.Repeat("a", size)
			case "random":
				text = longPieces(size)["random lowercase"][:size]
			case "words":
				text = strings.Repeat("aaaaaaa ", size/8)
			}
			b.Run(fmt.Sprintf("%s/%dMiB", kind, size>>20), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					tok.Count(text)
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(size), "B/inbyte")
			})
		}
	}
}
