package datasets

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// chiSquare is Pearson's statistic of observed counts against expected.
func chiSquare(obs []int, exp []float64) float64 {
	x := 0.0
	for i := range obs {
		d := float64(obs[i]) - exp[i]
		x += d * d / exp[i]
	}
	return x
}

// uniformChiSquare bins values in [lo, hi] into k equal bins and returns
// the statistic against a uniform draw; out counts values outside.
func uniformChiSquare(vals []int, lo, hi, k int) (x float64, out int) {
	obs := make([]int, k)
	n := hi - lo + 1
	for _, v := range vals {
		if v < lo || v > hi {
			out++
			continue
		}
		obs[(v-lo)*k/n]++
	}
	exp := make([]float64, k)
	for b := range exp {
		// Bin b holds the values v with (v-lo)*k/n == b.
		first, last := (b*n+k-1)/k, ((b+1)*n+k-1)/k-1
		exp[b] = float64(len(vals)) * float64(last-first+1) / float64(n)
	}
	return chiSquare(obs, exp), out
}

// TestRangeRatioUniform: ISL and OSL are uniform on [mean·(1−R),
// mean·(1+R)], vLLM's and SGLang's --random-range-ratio. The chi-square
// critical value for 9 degrees of freedom at p = 0.001 is 27.88; the seed
// is fixed, so the statistic is too.
func TestRangeRatioUniform(t *testing.T) {
	t.Parallel()
	d, err := Synthetic(SyntheticOptions{Count: 3000, ISL: 400, OSL: 100, RangeRatio: 0.5, Seed: 7, Tokenizer: qwen(t)})
	if err != nil {
		t.Fatal(err)
	}
	var isl, osl []int
	for _, c := range d.Conversations {
		isl = append(isl, c.Turns[0].InputTokens)
		osl = append(osl, c.Turns[0].MaxTokens)
	}
	for _, tc := range []struct {
		name   string
		vals   []int
		lo, hi int
	}{{"ISL", isl, 200, 600}, {"OSL", osl, 50, 150}} {
		x, out := uniformChiSquare(tc.vals, tc.lo, tc.hi, 10)
		t.Logf("%s: chi-square %.2f over 10 bins (critical 27.88), %d outside [%d, %d]", tc.name, x, out, tc.lo, tc.hi)
		// A prompt can come out a token short (no clean cut): allow a few
		// just below the range, none above.
		if x > 27.88 || out > len(tc.vals)/200 {
			t.Errorf("%s: not uniform on [%d, %d]: chi-square %.2f, %d outside", tc.name, tc.lo, tc.hi, x, out)
		}
	}
	if lo, hi := rangeBounds(3, 0.9); lo != 1 || hi != 6 {
		t.Errorf("rangeBounds(3, 0.9) = %d, %d; want 1, 6 (at least 1)", lo, hi)
	}
	for _, bad := range []SyntheticOptions{
		{Count: 1, ISL: 10, RangeRatio: 1},
		{Count: 1, ISL: 10, RangeRatio: -0.1},
		{Count: 1, ISL: 10, RangeRatio: 0.2, ISLStddev: 3},
		{Count: 1, ISL: 10, RangeRatio: math.NaN()},
	} {
		if _, err := Synthetic(bad); err == nil || !strings.HasPrefix(err.Error(), "Synthetic.RangeRatio") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestSeqDist: AIPerf's three --seq-dist forms read the same; the pairs
// are drawn by weight (chi-square, 2 degrees of freedom, critical 13.82 at
// p = 0.001) and their lengths spread by their stddevs.
func TestSeqDist(t *testing.T) {
	t.Parallel()
	want := []SeqPair{{ISL: 100, OSL: 10, Weight: 20}, {ISL: 300, ISLStddev: 30, OSL: 30, OSLStddev: 3, Weight: 50}, {ISL: 500, OSL: 50, Weight: 30}}
	for _, s := range []string{
		"100,10:20;300|30,30|3:50;500,50:30",
		" 100 , 10 : 20 ; 300|30,30|3:50;500,50:30; ",
		"[(100,10):20,(300|30,30|3):50, (500,50):30]",
		`{"pairs": [{"isl": 100, "osl": 10, "prob": 20}, {"isl": 300, "isl_stddev": 30, "osl": 30, "osl_stddev": 3, "prob": 50}, {"isl": 500, "osl": 50, "prob": 30}]}`,
	} {
		d, err := ParseSeqDist(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if diff := cmp.Diff(want, d.Pairs, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q (-want +got):\n%s", s, diff)
		}
	}
	for s, msg := range map[string]string{
		"100,10:20;500,50:30":       "weights sum to 50",
		"100,10:0.2;500,50:0.8":     "weights sum to 1",
		"100,10":                    "cannot read",
		"0,10:100":                  "must be positive",
		"[(100,10):50 x (5,5):50]":  "bracket form: cannot read",
		`{"pairs": [{"isl": 100}]}`: `needs "isl", "osl" and "prob"`,
		"":                          "empty",
		"100,10:150;5,5:-50":        "cannot read",
	} {
		if _, err := ParseSeqDist(s); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", s, err, msg)
		}
	}

	sd, err := ParseSeqDist("100,10:20;300|30,30:50;500,50:30")
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	d, err := Synthetic(SyntheticOptions{Count: n, SeqDist: sd, Seed: 11, Tokenizer: qwen(t)})
	if err != nil {
		t.Fatal(err)
	}
	obs := make([]int, 3)
	var mid []float64
	for _, c := range d.Conversations {
		tr := c.Turns[0]
		switch tr.MaxTokens {
		case 10:
			obs[0]++
		case 30:
			obs[1]++
			mid = append(mid, float64(tr.InputTokens))
		case 50:
			obs[2]++
		default:
			t.Fatalf("OSL %d is no pair's", tr.MaxTokens)
		}
	}
	x := chiSquare(obs, []float64{0.2 * n, 0.5 * n, 0.3 * n})
	mean, sdev := meanStddev(mid)
	t.Logf("pairs drawn %v of %d: chi-square %.2f (critical 13.82); middle pair ISL %.1f±%.1f (want 300±30)", obs, n, x, mean, sdev)
	if x > 13.82 || math.Abs(mean-300) > 3 || math.Abs(sdev-30) > 3 {
		t.Errorf("draws do not follow the distribution: %v, χ² %.2f, ISL %.1f±%.1f", obs, x, mean, sdev)
	}
	if _, err := Synthetic(SyntheticOptions{Count: 1, SeqDist: sd, RangeRatio: 0.1}); err == nil || !strings.HasPrefix(err.Error(), "Synthetic.SeqDist") {
		t.Errorf("seq dist with a range ratio: %v", err)
	}
}

func meanStddev(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)-1))
}

// TestPromptCorpus: "coding" and a text file change what prompts are cut
// from, for synthetic prompts and traces alike, keeping exact lengths.
func TestPromptCorpus(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	file := writeFile(t, "c.txt", strings.Repeat("Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau.\nWords of a custom corpus are here to be cut into prompts of every length.\n", 3))
	for _, tc := range []struct {
		corpus, kind, input, word string
	}{
		{CorpusCoding, "", "", "("},
		{CorpusCoding, TypeMooncake, "testdata/mooncake_head200.jsonl", "("},
		{file, "", "", " omicron "},
		{CorpusSonnet, "", "", " the "},
	} {
		d, rep, err := Load(Options{PromptCorpus: tc.corpus, InputFile: tc.input, CustomDatasetType: tc.kind, Tokenizer: tok, Seed: 5,
			Synthetic: SyntheticOptions{Count: 20, ISL: 300, OSL: 10}})
		if err != nil {
			t.Fatalf("%s %s: %v", tc.corpus, tc.kind, err)
		}
		all := ""
		for _, c := range d.Conversations[:5] {
			tr := &c.Turns[0]
			all += tr.Content()
			if n := len(tok.Encode(tr.Content())); n < tr.InputTokens-1 || n > tr.InputTokens+1 {
				t.Errorf("%s: %d tokens, want %d±1", tc.corpus, n, tr.InputTokens)
			}
		}
		if !strings.Contains(all, tc.word) || tc.word == "(" && strings.Count(all, "(") < 3 {
			t.Errorf("%s %s: prompts do not come from the corpus (%v): %.200s", tc.corpus, tc.kind, rep.Lines, all)
		}
	}
	if _, _, err := Load(Options{PromptCorpus: "/nonexistent/corpus.txt", Synthetic: SyntheticOptions{Count: 1, ISL: 5}}); err == nil || !strings.HasPrefix(err.Error(), `PromptCorpus "/nonexistent/corpus.txt": not sonnet, coding or a readable text file`) {
		t.Errorf("missing corpus: %v", err)
	}
}

func FuzzSeqDist(f *testing.F) {
	for _, s := range []string{"256,128:40;512|20,256|10:60", "[(256,128):40,(512,256):60]",
		`{"pairs": [{"isl": 256, "isl_stddev": 10, "osl": 128, "osl_stddev": 5, "prob": 100}]}`, "1,1:100", "[(1,1):100", ";;", "1|1e9,1:100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseSeqDist(s)
		if err != nil {
			return
		}
		back, err := ParseSeqDist(d.String())
		if err != nil {
			t.Fatalf("%q parsed, its String %q does not: %v", s, d.String(), err)
		}
		if !cmp.Equal(d.Pairs, back.Pairs) {
			t.Fatalf("%q: round trip %v → %v", s, d.Pairs, back.Pairs)
		}
	})
}
