package cmdline

import "strings"

// nearest returns the candidate closest to s by edit distance, or "" when
// none is close enough to be what was meant: within a third of s's length
// (at least 2 edits), or one that s is a prefix of.
func nearest(s string, candidates []string) string {
	best, bestD := "", -1
	limit := max(2, len(s)/3)
	for _, c := range candidates {
		d := editDistance(s, c)
		if strings.HasPrefix(c, s) && len(s) >= 3 {
			d = min(d, limit) // a close spelling beats a mere prefix
		}
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes: flag and
// command names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// didYouMean is " (did you mean X?)" for the nearest candidate, or "".
func didYouMean(s string, candidates []string, prefix string) string {
	if n := nearest(s, candidates); n != "" {
		return " (did you mean " + prefix + n + "?)"
	}
	return ""
}

// DidYouMean is " (did you mean PREFIX+X?)" for the candidate nearest s,
// or "" when none is near: the suggestion an unknown name gets, for the
// commands that read another tool's command line.
func DidYouMean(s string, candidates []string, prefix string) string {
	return didYouMean(s, candidates, prefix)
}
