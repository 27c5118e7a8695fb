package compare

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/fingerprint"
)

// Check says whether runs measured the same workload, from their
// fingerprints.
type Check struct {
	// Comparable is false when two runs' workload hashes differ.
	Comparable bool `json:"comparable"`
	// Reasons say why they are not comparable: which part of the workload
	// differs, and for the configuration which settings.
	Reasons []string `json:"reasons"`
	// Notes are what could not be checked, or what differs without
	// making the runs incomparable (the server, surge's version).
	Notes []string `json:"notes"`
}

// maxConfigDiffs bounds the settings a reason lists.
const maxConfigDiffs = 8

// Fingerprints checks every run against the first: a differing workload
// hash makes them incomparable; a run without a fingerprint (AIPerf's
// export, an older surge) cannot be checked and is noted.
func Fingerprints(runs []*artifact.Run) Check {
	c := Check{Comparable: true, Reasons: []string{}, Notes: []string{}}
	if len(runs) == 0 {
		return c
	}
	fp := func(r *artifact.Run) map[string]any {
		if r.Summary == nil {
			return nil
		}
		return r.Summary.Fingerprint
	}
	base := runs[0]
	fa := fp(base)
	for _, r := range runs[1:] {
		fb := fp(r)
		wa, _ := fa["workload"].(string)
		wb, _ := fb["workload"].(string)
		if wa == "" || wb == "" {
			for _, x := range []struct {
				r *artifact.Run
				w string
			}{{base, wa}, {r, wb}} {
				note := fmt.Sprintf("%s has no workload fingerprint (an AIPerf export or an older surge): whether it measured the same workload cannot be checked", x.r.Name)
				if x.w == "" && !slices.Contains(c.Notes, note) {
					c.Notes = append(c.Notes, note)
				}
			}
			continue
		}
		if wa != wb {
			c.Comparable = false
			var parts []string
			for _, k := range []string{"config", "dataset", "tokenizer"} {
				if fa[k] != fb[k] {
					parts = append(parts, k)
				}
			}
			reason := fmt.Sprintf("%s and %s ran different workloads (workload %s vs %s; differing: %s)", base.Name, r.Name, wa, wb, strings.Join(parts, ", "))
			if d := configDiff(base, r); d != "" {
				reason += "; settings: " + d
			}
			c.Reasons = append(c.Reasons, reason)
		}
		if sa, sb := str(fa["server"]), str(fb["server"]); sa != sb {
			c.Notes = append(c.Notes, fmt.Sprintf("%s and %s measured different servers (server %s vs %s)", base.Name, r.Name, orUnknown(sa), orUnknown(sb)))
		}
		if va, vb := str(fa["surge_version"]), str(fb["surge_version"]); va != vb {
			c.Notes = append(c.Notes, fmt.Sprintf("%s and %s were measured by different surge versions (%s vs %s)", base.Name, r.Name, orUnknown(va), orUnknown(vb)))
		}
	}
	return c
}

// configDiff lists the workload settings two runs' input_config differ in:
// "isl: 32 vs 48, concurrency: "4" vs "8"".
func configDiff(a, b *artifact.Run) string {
	if a.Summary == nil || b.Summary == nil {
		return ""
	}
	ca, cb := fingerprint.Flatten(a.Summary.InputConfig), fingerprint.Flatten(b.Summary.InputConfig)
	keys := map[string]bool{}
	for k := range ca {
		keys[k] = true
	}
	for k := range cb {
		keys[k] = true
	}
	var diffs []string
	for _, k := range sortedKeys(keys) {
		if !fingerprint.InWorkload(k) || reflect.DeepEqual(ca[k], cb[k]) {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s: %s vs %s", k, show(ca[k]), show(cb[k])))
	}
	if len(diffs) > maxConfigDiffs {
		diffs = append(diffs[:maxConfigDiffs], fmt.Sprintf("and %d more", len(diffs)-maxConfigDiffs))
	}
	return strings.Join(diffs, ", ")
}

func show(v any) string {
	if v == nil {
		return "(unset)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func str(v any) string { s, _ := v.(string); return s }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
