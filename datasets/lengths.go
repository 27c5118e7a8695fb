package datasets

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// SeqPair is one ISL/OSL pair of a sequence-length distribution, drawn
// with probability Weight/100; lengths are normal around ISL and OSL with
// the stddevs (0: exact), at least 1.
type SeqPair struct {
	ISL, OSL             int
	ISLStddev, OSLStddev float64
	// Weight is the pair's probability in percent.
	Weight float64
}

// SeqDist is a distribution of ISL/OSL pairs (AIPerf's --seq-dist).
type SeqDist struct {
	Pairs []SeqPair
	cum   []float64 // cumulative weights, as fractions
}

// seqPairRE is one "ISL[|sd],OSL[|sd]:weight" (AIPerf's semicolon form);
// seqBracketRE the same in "(ISL[|sd],OSL[|sd]):weight" (its bracket form).
var (
	seqNum       = `(\d+)(?:\|(\d*\.?\d+))?`
	seqPairRE    = regexp.MustCompile(`^\s*` + seqNum + `\s*,\s*` + seqNum + `\s*:\s*(\d*\.?\d+)\s*$`)
	seqBracketRE = regexp.MustCompile(`\(\s*` + seqNum + `\s*,\s*` + seqNum + `\s*\)\s*:\s*(\d*\.?\d+)`)
)

// ParseSeqDist reads a sequence-length distribution in any of AIPerf's
// --seq-dist forms, weights in percent summing to 100:
//
//	"256,128:40;512|20,256|10:60"           semicolons, optional |stddev
//	"[(256,128):40,(512|20,256|10):60]"      brackets
//	{"pairs": [{"isl": 256, "isl_stddev": 10, "osl": 128, "osl_stddev": 5, "prob": 40}, …]}
func ParseSeqDist(s string) (*SeqDist, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty distribution")
	}
	var pairs []SeqPair
	switch {
	case strings.HasPrefix(s, "{"):
		var j struct {
			Pairs []struct {
				ISL       *float64 `json:"isl"`
				OSL       *float64 `json:"osl"`
				Prob      *float64 `json:"prob"`
				ISLStddev float64  `json:"isl_stddev"`
				OSLStddev float64  `json:"osl_stddev"`
			} `json:"pairs"`
		}
		if err := json.Unmarshal([]byte(s), &j); err != nil {
			return nil, fmt.Errorf("JSON form: %v", err)
		}
		if j.Pairs == nil {
			return nil, fmt.Errorf(`JSON form: want {"pairs": [...]}`)
		}
		for i, p := range j.Pairs {
			if p.ISL == nil || p.OSL == nil || p.Prob == nil {
				return nil, fmt.Errorf(`JSON form: pair %d needs "isl", "osl" and "prob"`, i)
			}
			if *p.ISL != math.Trunc(*p.ISL) || *p.OSL != math.Trunc(*p.OSL) || math.Abs(*p.ISL) > 1<<40 || math.Abs(*p.OSL) > 1<<40 {
				return nil, fmt.Errorf("JSON form: pair %d: isl and osl must be whole numbers", i)
			}
			pairs = append(pairs, SeqPair{ISL: int(*p.ISL), OSL: int(*p.OSL), ISLStddev: p.ISLStddev, OSLStddev: p.OSLStddev, Weight: *p.Prob})
		}
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		body := s[1 : len(s)-1]
		ms := seqBracketRE.FindAllStringSubmatchIndex(body, -1)
		// Everything between the pairs must be commas and spaces.
		at := 0
		for _, m := range ms {
			if strings.Trim(body[at:m[0]], " ,") != "" {
				return nil, fmt.Errorf("bracket form: cannot read %q", strings.TrimSpace(body[at:m[0]]))
			}
			at = m[1]
			p, err := seqPair(body[m[0]:m[1]], seqBracketRE)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, p)
		}
		if strings.Trim(body[at:], " ,") != "" {
			return nil, fmt.Errorf("bracket form: cannot read %q", strings.TrimSpace(body[at:]))
		}
	default:
		for _, part := range strings.Split(s, ";") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			p, err := seqPair(part, seqPairRE)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, p)
		}
	}
	return NewSeqDist(pairs)
}

// seqPair reads one pair matched by re.
func seqPair(s string, re *regexp.Regexp) (SeqPair, error) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return SeqPair{}, fmt.Errorf("cannot read %q: want ISL[|stddev],OSL[|stddev]:weight", strings.TrimSpace(s))
	}
	num := func(v string) float64 {
		if v == "" {
			return 0
		}
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	isl, err1 := strconv.Atoi(m[1])
	osl, err2 := strconv.Atoi(m[3])
	if err1 != nil || err2 != nil {
		return SeqPair{}, fmt.Errorf("%q: a length is too large", strings.TrimSpace(s))
	}
	return SeqPair{ISL: isl, ISLStddev: num(m[2]), OSL: osl, OSLStddev: num(m[4]), Weight: num(m[5])}, nil
}

// NewSeqDist checks pairs (lengths ≥ 1, stddevs ≥ 0, weights in [0, 100]
// summing to 100) and returns their distribution.
func NewSeqDist(pairs []SeqPair) (*SeqDist, error) {
	if len(pairs) == 0 {
		return nil, fmt.Errorf("no ISL/OSL pairs")
	}
	d := &SeqDist{Pairs: pairs, cum: make([]float64, len(pairs))}
	total := 0.0
	for i, p := range pairs {
		switch {
		case p.ISL <= 0 || p.OSL <= 0:
			return nil, fmt.Errorf("pair %d: ISL and OSL must be positive, got %d,%d", i+1, p.ISL, p.OSL)
		case !(p.ISLStddev >= 0) || !(p.OSLStddev >= 0) || math.IsInf(p.ISLStddev, 0) || math.IsInf(p.OSLStddev, 0):
			return nil, fmt.Errorf("pair %d: stddevs must be finite and ≥ 0", i+1)
		case !(p.Weight >= 0 && p.Weight <= 100):
			return nil, fmt.Errorf("pair %d: weight %g: want a percentage in [0, 100]", i+1, p.Weight)
		}
		total += p.Weight
		d.cum[i] = total / 100
	}
	if math.Abs(total-100) > 1e-6 {
		return nil, fmt.Errorf("weights sum to %g, want 100 (they are percentages)", total)
	}
	return d, nil
}

// draw picks a pair by weight and samples its lengths.
func (d *SeqDist) draw(rng *rand.Rand) (isl, osl int) {
	u := rng.Float64()
	i := sort.Search(len(d.cum), func(k int) bool { return d.cum[k] > u })
	p := &d.Pairs[min(i, len(d.Pairs)-1)]
	return sampleLength(rng, p.ISL, p.ISLStddev, 1), sampleLength(rng, p.OSL, p.OSLStddev, 1)
}

// maxISL is about the longest ISL a draw gives: the largest pair's
// mean plus three stddevs (capped at MaxRequestTokens).
func (d *SeqDist) maxISL() int {
	m := 0
	for _, p := range d.Pairs {
		m = max(m, p.ISL+int(math.Ceil(3*p.ISLStddev)))
	}
	return min(m, MaxRequestTokens)
}

// String writes the distribution in the semicolon form.
func (d *SeqDist) String() string {
	parts := make([]string, len(d.Pairs))
	for i, p := range d.Pairs {
		isl, osl := strconv.Itoa(p.ISL), strconv.Itoa(p.OSL)
		if p.ISLStddev > 0 {
			isl += "|" + strconv.FormatFloat(p.ISLStddev, 'g', -1, 64)
		}
		if p.OSLStddev > 0 {
			osl += "|" + strconv.FormatFloat(p.OSLStddev, 'g', -1, 64)
		}
		parts[i] = isl + "," + osl + ":" + strconv.FormatFloat(p.Weight, 'g', -1, 64)
	}
	return strings.Join(parts, ";")
}

// rangeBounds is vLLM's and SGLang's --random-range-ratio range for a mean
// length: [floor(mean·(1−r)), ceil(mean·(1+r))], at least 1.
func rangeBounds(mean int, r float64) (lo, hi int) {
	lo = max(int(math.Floor(float64(mean)*(1-r))), 1)
	hi = max(int(math.Ceil(float64(mean)*(1+r))), lo)
	return lo, hi
}

// sampleRange draws a length uniformly from rangeBounds(mean, r).
func sampleRange(rng *rand.Rand, mean int, r float64) int {
	lo, hi := rangeBounds(mean, r)
	return lo + rng.IntN(hi-lo+1)
}
