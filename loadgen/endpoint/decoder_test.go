package endpoint

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A decoder reset between responses decodes each as a fresh one does,
// whatever the previous response left behind (a half-seen <think> tag,
// Anthropic's usage so far, a shape already matched), and a pooled one
// allocates nothing per response.
func TestDecoderReset(t *testing.T) {
	for _, tc := range streamCases {
		d := tc.ep.NewDecoder()
		var out Output
		for _, prev := range streamCases {
			if prev.ep.Kind != tc.ep.Kind || prev.ep.Reasoning != tc.ep.Reasoning || prev.ep.ResponseField != tc.ep.ResponseField {
				continue // a decoder serves one endpoint
			}
			// Leave the previous stream unfinished: its last event unread.
			d.Reset()
			out.Reset()
			decodeWith(d, prev.events[:len(prev.events)-1], &out)
			d.Reset()
			out.Reset()
			if diff := cmp.Diff(tc.want, decodeWith(d, tc.events, &out)); diff != "" {
				t.Errorf("%s, reset after %q (-want +got)\n%s", tc.name, prev.name, diff)
			}
		}
		if tc.want.Err != nil || tc.want.DecodeErr != "" {
			continue // an error the server sent is a value the record keeps
		}
		events := make([][]byte, len(tc.events))
		for i, e := range tc.events {
			events[i] = []byte(e.data)
		}
		allocs := testing.AllocsPerRun(20, func() {
			d.Reset()
			out.Reset()
			for _, e := range events {
				_, _ = d.Event(nil, e, &out)
			}
		})
		if allocs > 0 {
			t.Errorf("%s: %.0f allocations per response, want none", tc.name, allocs)
		}
	}
}
