package export

import (
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics"
)

// TestConsoleSaysWhoFailedAndWhatWasResent: past 1% of requests the
// re-sends get their sentence (below, the short count); errors that were
// the client's own are said to be.
func TestConsoleSaysWhoFailedAndWhatWasResent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		s       metrics.Summary
		want    []string
		notWant []string
	}{
		{"few re-sends", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 1000}, ConnectionRetries: 5},
			[]string{"Connection retries: 5"}, []string{"Re-sent requests"}},
		{"many re-sends, none read", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 900, metrics.ErrorRequestCount: 100}, ConnectionRetries: 260},
			[]string{"Re-sent requests: 260 of 1000 (26.0%)", "it never read them", "none was sent twice", "--connection-reuse-strategy never"},
			[]string{"Connection retries:", "saw them twice"}},
		{"many re-sends, all possibly read", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 1000}, ConnectionRetries: 40, RetryDuplicates: 40},
			[]string{"Re-sent requests: 40 of 1000", "may have read them", "saw them twice", "--connection-retries 0"}, []string{"never read"}},
		{"many re-sends, some possibly read", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 1000}, ConnectionRetries: 40, RetryDuplicates: 15},
			[]string{"25 it never read; 15 it closed on after they were written"}, nil},
		{"client out of descriptors", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 10, metrics.ErrorRequestCount: 7},
			Errors: []metrics.ErrorCount{
				{Details: metrics.Error{Type: metrics.ErrClientResources, Message: "out of file descriptors"}, Count: 5},
				{Details: metrics.Error{Code: 500, Type: "server_error"}, Count: 2},
			}},
			[]string{"5 of these failed on the client's side"}, nil},
		{"server errors only", metrics.Summary{Run: map[metrics.Tag]float64{metrics.ErrorRequestCount: 2},
			Errors: []metrics.ErrorCount{{Details: metrics.Error{Code: 500, Type: "server_error"}, Count: 2}}},
			nil, []string{"client's side"}},
	} {
		var b strings.Builder
		Console(&b, "t", &tc.s)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: console lacks %q:\n%s", tc.name, w, b.String())
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: console has %q:\n%s", tc.name, w, b.String())
			}
		}
	}
}
