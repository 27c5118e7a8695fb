package stats

import (
	"math"
	"slices"
)

// MannWhitney is the result of the Mann–Whitney U test (Wilcoxon rank-sum)
// of two independent samples a and b, two-sided: do values from one tend to
// be larger than values from the other?
type MannWhitney struct {
	// U is a's statistic: the number of pairs (x from a, y from b) with
	// x > y, ties counting one half (scipy.stats.mannwhitneyu's statistic).
	U float64 `json:"u"`
	// P is the two-sided p-value.
	P float64 `json:"p"`
	// Exact says P comes from U's exact distribution (small samples, no
	// ties) rather than the normal approximation.
	Exact bool `json:"exact"`
	// BGreater is P(y > x) + P(y = x)/2 for x drawn from a and y from b:
	// 0.5 when neither tends larger, 1 when every b exceeds every a (the
	// common-language effect size).
	BGreater float64 `json:"b_greater"`
}

// exactLimit is the largest n1·n2 for which the exact distribution is
// used (when there are no ties); beyond it the normal approximation is
// within a small fraction of the exact p-value.
const exactLimit = 2500

// MannWhitneyU tests a against b. The normal approximation (larger
// samples, or any ties) corrects the variance for ties and applies the
// continuity correction, as scipy.stats.mannwhitneyu(method="asymptotic")
// does; small samples without ties use U's exact distribution, as
// method="exact". An empty sample gives P = NaN.
func MannWhitneyU(a, b []float64) MannWhitney {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return MannWhitney{U: math.NaN(), P: math.NaN(), BGreater: math.NaN()}
	}
	type obs struct {
		v   float64
		inA bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	// Midranks; tieTerm accumulates t³ − t over tie groups.
	var rankSumA, tieTerm float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1 … j, averaged
		for k := i; k < j; k++ {
			if all[k].inA {
				rankSumA += rank
			}
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j
	}
	f1, f2 := float64(n1), float64(n2)
	u1 := rankSumA - f1*(f1+1)/2
	r := MannWhitney{U: u1, BGreater: 1 - u1/(f1*f2)}
	if tieTerm == 0 && n1*n2 <= exactLimit {
		r.P, r.Exact = exactP(u1, n1, n2), true
		return r
	}
	n := f1 + f2
	mu := f1 * f2 / 2
	sigma := math.Sqrt(f1 * f2 / 12 * ((n + 1) - tieTerm/(n*(n-1))))
	if sigma == 0 {
		r.P = 1 // every value equal
		return r
	}
	// Two-sided: the larger of U1 and U2, continuity corrected.
	u := math.Max(u1, f1*f2-u1)
	z := (u - mu - 0.5) / sigma
	r.P = math.Min(1, 2*normalSF(z))
	return r
}

// exactP is the two-sided exact p-value of U = u for samples of n1 and n2
// without ties: 2·P(U ≥ max(u, n1n2 − u)), capped at 1. The counts of
// arrangements come from the recurrence c(m, n, k) = c(m−1, n, k−n) +
// c(m, n−1, k), computed in probabilities to stay finite.
func exactP(u float64, n1, n2 int) float64 {
	maxU := n1 * n2
	// dist[m][k] for the current n, built up over n = 0 … n2.
	dist := make([][]float64, n1+1)
	for m := range dist {
		dist[m] = make([]float64, maxU+1)
		dist[m][0] = 1 // n = 0: U is 0 for any m
	}
	for n := 1; n <= n2; n++ {
		next := make([][]float64, n1+1)
		next[0] = make([]float64, maxU+1)
		next[0][0] = 1
		for m := 1; m <= n1; m++ {
			next[m] = make([]float64, maxU+1)
			// The largest value is a's (prob m/(m+n)): it exceeds all n
			// of b's; or it is b's (prob n/(m+n)).
			pa, pb := float64(m)/float64(m+n), float64(n)/float64(m+n)
			for k := 0; k <= m*n; k++ {
				var v float64
				if k >= n {
					v += pa * next[m-1][k-n]
				}
				v += pb * dist[m][k]
				next[m][k] = v
			}
		}
		dist = next
	}
	hi := math.Max(u, float64(maxU)-u)
	var tail float64
	for k := int(math.Ceil(hi - 1e-9)); k <= maxU; k++ {
		tail += dist[n1][k]
	}
	return math.Min(1, 2*tail)
}
