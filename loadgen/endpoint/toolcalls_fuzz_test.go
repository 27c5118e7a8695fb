package endpoint

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzToolCallsUpTo decodes a stream of chat chunks (one a line) and
// checks what a reply's calls become: CallsUpTo(k) is the first k of
// Calls, with the count of them all, and Text is the text and then every
// call's name and arguments.
func FuzzToolCallsUpTo(f *testing.F) {
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]}}]}` + "\n" +
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}` + "\n" +
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}}]}`))
	f.Add([]byte(`{"choices":[{"delta":{"content":"hi","tool_calls":[{"index":7,"function":{"name":"x"}},{"index":3,"id":"c"}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := (&Endpoint{Kind: Chat}).NewDecoder()
		var out Output
		for _, line := range bytes.Split(data, []byte("\n")) {
			if _, err := d.Event(nil, line, &out); err != nil {
				return
			}
		}
		all := out.Tools.Calls()
		var want []byte
		for k := range len(all) + 2 {
			some, total := out.Tools.CallsUpTo(k)
			if total != len(all) || !slices.Equal(some, all[:min(k, len(all))]) {
				t.Fatalf("CallsUpTo(%d) = %v of %d, Calls %v", k, some, total, all)
			}
		}
		for _, p := range out.Tools.pieces {
			if p.field != toolID {
				want = append(want, out.Tools.buf[p.start:p.end]...)
			}
		}
		if got := out.Tools.Text("t"); got != "t"+string(want) {
			t.Fatalf("Text %q, want %q", got, "t"+string(want))
		}
	})
}
