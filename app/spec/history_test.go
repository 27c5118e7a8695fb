package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
)

// TestHistoryAndPriceFlags: --history, --no-history, --history-label and
// --cost-per-hour reach the spec as given; what they cannot do together,
// or a price that is no price, is refused naming the flag.
func TestHistoryAndPriceFlags(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	s, err := parseArgs(t, "--history", "/tmp/h.db", "--history-label", "v0.7-rc1", "--cost-per-hour", "2.5")
	if err != nil {
		t.Fatal(err)
	}
	if s.History != (History{Path: "/tmp/h.db", Label: "v0.7-rc1"}) || s.CostPerHour != 2.5 {
		t.Errorf("history %+v, price %v", s.History, s.CostPerHour)
	}
	ic := s.InputConfig()
	for path, want := range map[string]any{"output.history": "/tmp/h.db", "output.no_history": false,
		"output.history_label": "v0.7-rc1", "output.cost_per_hour_usd": 2.5} {
		if got, _ := cmdline.PathValue(ic, path); got != want {
			t.Errorf("input_config %s = %v, want %v", path, got, want)
		}
	}
	if s, err := parseArgs(t, "--no-history"); err != nil || !s.History.Off || s.CostPerHour != 0 {
		t.Errorf("--no-history: %+v, %v", s, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--history", "h.db", "--no-history"}, "--history h.db and --no-history: give one"},
		{[]string{"--no-history", "--history-label", "x"}, "which --no-history turns off"},
		{[]string{"--history", " "}, "name a database file"},
		{[]string{"--history-label", strings.Repeat("x", 201)}, "--history-label is 201 bytes long: at most 200"},
		{[]string{"--history-label", "a\nb"}, "without control characters"},
		{[]string{"--cost-per-hour", "-1"}, "--cost-per-hour must be > 0, got -1"},
		{[]string{"--cost-per-hour", "NaN"}, "--cost-per-hour must be a finite number"},
		{[]string{"--cost-per-hour", "Inf"}, "--cost-per-hour must be a finite number"},
	} {
		var ue *cmdline.UsageError
		if _, err := parseArgs(t, tc.args...); !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error %q", tc.args, err, tc.want)
		}
	}
}
