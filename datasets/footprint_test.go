package datasets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// heapInUse is the heap's objects, live and not yet swept.
func heapInUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// measureLoad loads o and reports the heap's growth at its highest while
// loading and what stays once loading is done, both over what was in use
// before.
func measureLoad(t *testing.T, o Options) (peak, live int64, d *Dataset) {
	t.Helper()
	runtime.GC()
	base := heapInUse()
	var high atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			high.Store(max(high.Load(), heapInUse()))
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	d, _, err := Load(o)
	high.Store(max(high.Load(), heapInUse()))
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	live = heapInUse() - base
	runtime.KeepAlive(d)
	return high.Load() - base, live, d
}

// TestFootprintMatchesTheLoad loads traces (generated here) and checks
// the heap they take against the estimate made before: the peak while
// loading and what the dataset keeps within the estimate plus 25%, and
// the estimate not wildly above either (it refuses runs) where it comes
// from the input's lengths (by a file's size alone it is a bound). The first is
// docs/datasets-limits.md's case: 2,000 rows at the token limit, a
// 120 KB file that asked for 8 GiB of prompt text before prompts were
// kept as their blocks.
//
// Not parallel: it measures the process's heap.
func TestFootprintMatchesTheLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("measures loads of a few MB")
	}
	// The corpus table, the tokenizer and its bounded cache of pieces
	// (a few MB, filled by ShareGPT's counting) are the process's, built
	// once: not the load's.
	if _, err := newPrompter(nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(Options{InputFile: "testdata/sharegpt_dummy.json", PublicDataset: PublicShareGPT}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, lines int, line func(i int) string) string {
		var b strings.Builder
		for i := range lines {
			b.WriteString(line(i))
			b.WriteByte('\n')
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ids := func(from, n int) string {
		var b strings.Builder
		for k := range n {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprint(&b, from+k)
		}
		return b.String()
	}
	mooncake := func(file string) Options { return Options{InputFile: file, CustomDatasetType: TypeMooncake} }
	cases := []struct {
		name string
		o    Options
	}{
		{"2,000 rows at the token limit", mooncake(write("long.jsonl", 2000, func(i int) string {
			return fmt.Sprintf(`{"timestamp": %d, "input_length": %d, "output_length": 8}`, i, MaxRequestTokens)
		}))},
		{"300 rows of 4,096 hash ids", mooncake(write("ids.jsonl", 300, func(i int) string {
			return fmt.Sprintf(`{"timestamp": %d, "input_length": %d, "output_length": 8, "hash_ids": [%s]}`, i, 4096*512, ids(i*100, 4096))
		}))},
		{"50,000 short rows in sessions", mooncake(write("short.jsonl", 50000, func(i int) string {
			return fmt.Sprintf(`{"session_id": "s%d", "timestamp": %d, "input_length": 700, "output_length": 8, "hash_ids": [%d, %d]}`, i%5000, i, i%7, i)
		}))},
		{"50,000 short rows in sessions, on demand", Options{OnDemand: true, InputFile: filepath.Join(dir, "short.jsonl"), CustomDatasetType: TypeMooncake}},
		{"2,000 rows at the token limit, on demand", Options{OnDemand: true, InputFile: filepath.Join(dir, "long.jsonl"), CustomDatasetType: TypeMooncake}},
		{"20,000 single-turn texts, by the file's size", Options{InputFile: write("texts.jsonl", 20000, func(i int) string {
			return fmt.Sprintf(`{"text": "question %d: what is the capital of the country numbered %d?", "output_length": 20}`, i, i)
		}), CustomDatasetType: TypeSingleTurn}},
		{"multi-turn chats, by the file's size", Options{InputFile: write("chats.jsonl", 5000, func(i int) string {
			return fmt.Sprintf(`{"session_id": "s%d", "turns": [{"text": "hello %d"}, {"text": "and then?", "delay": 100}, {"text": "bye %d", "role": "user"}]}`, i, i, i)
		}), CustomDatasetType: TypeMultiTurn}},
		{"ShareGPT, by the file's size", Options{InputFile: "testdata/sharegpt_dummy.json", PublicDataset: PublicShareGPT}},
		{"a WEKA folder, by its files' size", Options{InputFile: "testdata/weka", CustomDatasetType: TypeWeka}},
		{"20,000 synthetic prompts of 3,000 tokens", Options{Synthetic: SyntheticOptions{Count: 20000, ISL: 3000}}},
		{"20,000 synthetic prompts on demand", Options{OnDemand: true, Synthetic: SyntheticOptions{Count: 20000, ISL: 3000}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			est, err := Estimate(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			peak, live, d := measureLoad(t, o)
			t.Logf("estimate: held %s, peak %s, %s a request; measured: live %s, peak %s (%d rows)",
				Bytes(est.Held), Bytes(est.Peak), Bytes(est.PerRequest), Bytes(live), Bytes(peak), est.Rows)
			if est.Exact && est.Rows != int64(d.Len()) && est.Conversations != int64(d.Len()) && d.Source == nil {
				t.Errorf("estimate counts %d rows, %d conversations; the load has %d", est.Rows, est.Conversations, d.Len())
			}
			if float64(peak) > 1.25*float64(est.Peak) {
				t.Errorf("loading peaked at %s, over the estimate %s + 25%%", Bytes(peak), Bytes(est.Peak))
			}
			if float64(live) > 1.25*float64(est.Held) {
				t.Errorf("the dataset holds %s, over the estimate %s + 25%%", Bytes(live), Bytes(est.Held))
			}
			if est.Exact && est.Peak > 4*max(peak, 1<<20) {
				t.Errorf("the estimate %s is over four times the peak %s", Bytes(est.Peak), Bytes(peak))
			}
		})
	}
}

// TestFootprintOfSyntheticPrompts: held prompts grow with their count,
// prompts built on demand do not; a request's need follows the longest
// prompt and the history of its conversation.
func TestFootprintOfSyntheticPrompts(t *testing.T) {
	t.Parallel()
	est := func(o Options) *Footprint {
		f, err := Estimate(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	small := est(Options{Synthetic: SyntheticOptions{Count: 1000, ISL: 512}})
	big := est(Options{Synthetic: SyntheticOptions{Count: 1_000_000, ISL: 512}})
	lazy := est(Options{OnDemand: true, Synthetic: SyntheticOptions{ISL: 512}})
	lazyBig := est(Options{OnDemand: true, Synthetic: SyntheticOptions{Count: 1 << 40, ISL: 512}})
	if big.Held < 500*small.Held || lazy.Held != lazyBig.Held || lazy.Held > small.Held {
		t.Errorf("held: %s for 1,000, %s for a million; on demand %s and %s: want held to grow with the count, on demand not",
			Bytes(small.Held), Bytes(big.Held), Bytes(lazy.Held), Bytes(lazyBig.Held))
	}
	long := est(Options{OnDemand: true, Synthetic: SyntheticOptions{ISL: MaxRequestTokens}})
	if long.PerRequest < 2*12<<20 || long.PerRequest > 3*24<<20 {
		t.Errorf("a request of %d tokens needs %s: want its text and body, 2 × 12–24 MB", MaxRequestTokens, Bytes(long.PerRequest))
	}
	chat := est(Options{OnDemand: true, Synthetic: SyntheticOptions{ISL: 1000, OSL: 500, Turns: 4}})
	one := est(Options{OnDemand: true, Synthetic: SyntheticOptions{ISL: 1000, OSL: 500}})
	if chat.PerRequest < 3*one.PerRequest {
		t.Errorf("a 4-turn conversation's last request needs %s, one turn %s: want the history counted", Bytes(chat.PerRequest), Bytes(one.PerRequest))
	}
	d, err := Synthetic(SyntheticOptions{Count: 20000, ISL: 3000})
	if err != nil {
		t.Fatal(err)
	}
	if f := est(Options{Synthetic: SyntheticOptions{Count: 20000, ISL: 3000}}); f.Conversations != int64(d.Len()) || f.PromptTokens != 20000*3000 {
		t.Errorf("estimate of %d conversations, %d tokens", f.Conversations, f.PromptTokens)
	}
	if !strings.Contains(lazy.Describe(), "held") {
		t.Errorf("Describe: %q", lazy.Describe())
	}
}

// TestBudget: a need over the budget is refused with its numbers; the
// default budget is three quarters of the machine's memory.
func TestBudget(t *testing.T) {
	t.Parallel()
	f := &Footprint{Source: "trace.jsonl", Held: 2e9, Peak: 3e9, PerRequest: 40e6}
	if err := f.Check(10, 4e9); err != nil {
		t.Errorf("3 GB within a 4 GB budget: %v", err)
	}
	if err := f.Check(100, 0); err != nil {
		t.Errorf("no budget: %v", err)
	}
	err := f.Check(100, 4e9)
	var be *BudgetError
	if !errors.As(err, &be) || be.Need != 6e9 {
		t.Fatalf("got %v, want a *BudgetError of 6 GB", err)
	}
	const want = "trace.jsonl needs ≈ 6 GB of memory (2 GB held, 3 GB while loading, 100 requests in flight × 40 MB); the budget is 4 GB"
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err, want)
	}
	for n, s := range map[int64]string{0: "0 B", 999: "999 B", 1500: "1.5 kB", 9.4e9: "9.4 GB", 12_345_678: "12.3 MB"} {
		if got := Bytes(n); got != s {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, s)
		}
	}
	if n, ok := parseMemInfo([]byte("MemFree:  1 kB\nMemTotal:       16314932 kB\n")); !ok || n != 16314932<<10 {
		t.Errorf("parseMemInfo: %d, %v", n, ok)
	}
	for _, bad := range []string{"", "MemTotal: 12\n", "MemTotal: x kB\n", "MemTotal: -4 kB\n"} {
		if _, ok := parseMemInfo([]byte(bad)); ok {
			t.Errorf("parseMemInfo(%q) read a total", bad)
		}
	}
	if runtime.GOOS == "linux" {
		b, ok := DefaultMemoryBudget()
		total, _ := memTotal()
		if !ok || b <= 0 || b > total {
			t.Errorf("default budget %d (%v), MemTotal %d", b, ok, total)
		}
	}
}

// FuzzEstimateLine: the estimate's quick look at a line never fails on
// any bytes, and on a row the parser accepts with its keys at the top it
// reads the parser's lengths.
func FuzzEstimateLine(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}`,
		`{"session_id": "a", "delay": 5, "input_length": 3}`, `{"input_length": 10, "hash_ids": []}`,
		`{"input_length":`, `{"hash_ids": [1, 2`, `{"session_id": "unterminated`, `"input_length": -`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, nok := jsonInt(b, `"input_length"`)
		ids := jsonArrayLen(b, `"hash_ids"`)
		_, _ = jsonString(b, `"session_id"`)
		if ids < 0 {
			t.Fatalf("%d hash ids", ids)
		}
		r, err := ParseMooncakeLine("f", 1, b, 1<<30)
		if err != nil || !r.generated() || r.Extra != nil || bytes.Count(b, []byte(`"input_length"`)) != 1 || bytes.Count(b, []byte(`"hash_ids"`)) > 1 {
			return
		}
		if !nok || n != int64(r.InputLength) || ids != int64(len(r.HashIDs)) {
			t.Fatalf("%q: read input_length %d (%v), %d hash ids; the parser %d, %d", b, n, nok, ids, r.InputLength, len(r.HashIDs))
		}
	})
}
