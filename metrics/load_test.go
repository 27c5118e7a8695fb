package metrics

import (
	"errors"
	"strings"
	"testing"
)

// TestReadDelayWarningSaysWhoWasBusy: records read 5 ms after the kernel
// received them give the client read delay warning; the machine's load
// decides whom it blames, and without a measurement it keeps the old
// words.
func TestReadDelayWarningSaysWhoWasBusy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		load func() (MachineLoad, error)
		want string
	}{
		{"server shared the cores", func() (MachineLoad, error) { return MachineLoad{Client: 0.03, Others: 0.9, Cores: 2}, nil },
			"this machine was busy (other processes used 90% of its CPU, the client 3%): timings include that"},
		{"client saturated", func() (MachineLoad, error) { return MachineLoad{Client: 0.7, Others: 0.2, Cores: 2}, nil },
			"the client was saturated (it used 70% of the machine's CPU"},
		{"not measured", func() (MachineLoad, error) { return MachineLoad{}, errors.New("no /proc/stat") },
			"exceeds 1 ms: the client was saturated, and with read timestamps"},
	}
	for _, tc := range cases {
		c := NewCollector(WithShards(1), WithMachineLoad(tc.load))
		for i := range 20 {
			c.Add(&Record{Index: int64(i), Streamed: true, SentNs: 1e6, EndNs: 9e6, TokenNs: []int64{2e6, 5e6, 9e6},
				ReadDelayNs: []int32{5e6, 5e6, 5e6}, Usage: Usage{Present: true, CompletionTokens: 3}})
		}
		s := c.Close()
		var got []string
		for _, w := range s.Warnings {
			if strings.HasPrefix(w, "client read delay") {
				got = append(got, w)
			}
		}
		if len(got) != 1 || !strings.Contains(got[0], tc.want) {
			t.Errorf("%s: warnings %q, want one saying %q", tc.name, got, tc.want)
		}
	}
}
