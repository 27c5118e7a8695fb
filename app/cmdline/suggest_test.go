package cmdline

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestNearest(t *testing.T) {
	cands := []string{"concurrency", "request-rate", "request-count", "url", "output", "profile", "merge", "compare"}
	for _, tc := range []struct{ in, want string }{
		{"concurency", "concurrency"},
		{"concurrancy", "concurrency"},
		{"request-cont", "request-count"},
		{"requestrate", "request-rate"},
		{"ulr", "url"},
		{"outptu", "output"},
		{"profil", "profile"},
		{"prof", "profile"}, // a prefix
		{"merg", "merge"},
		{"xyzzy", ""},
		{"temperature", ""},
	} {
		if got := nearest(tc.in, cands); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// testCommands are commands shaped like surge's: profile with its real
// flags, a results command with flags and folders.
func testCommands() []*cli.Command {
	return []*cli.Command{
		{Name: "profile", Flags: ProfileFlags(&Config{})},
		{Name: "report", Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}},
			&cli.StringFlag{Name: "format"},
			&cli.BoolFlag{Name: "json"},
		}},
	}
}

func TestCommandArgsAnswersMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the error's text
	}{
		{[]string{"profil"}, `unknown command "profil" (did you mean profile?)`},
		{[]string{"reprot", "x"}, `unknown command "reprot" (did you mean report?)`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"; the commands are profile, report`},
		{[]string{"profile", "--concurency", "4"}, "unknown flag --concurency (did you mean --concurrency?)"},
		{[]string{"profile", "--request-cont=4"}, "unknown flag --request-cont (did you mean --request-count?)"},
		{[]string{"profile", "--streaming", "--isl", "64", "--no-such-thing-at-all"}, "unknown flag --no-such-thing-at-all"},
		{[]string{"report", "DIR", "--outptu", "x"}, "unknown flag --outptu (did you mean --output?)"},
		{[]string{"report", "--formt", "png", "DIR"}, "unknown flag --formt (did you mean --format?)"},
	} {
		_, err := CommandArgs(append([]string{"surge"}, tc.args...), testCommands())
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err %v, want a usage error", tc.args, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %q, want it to contain %q", tc.args, err, tc.want)
		}
	}
}

// TestFlagsAfterArguments: the results commands read their flags wherever
// they are, and their folders after a "--" (a folder named like a flag
// stays a folder).
func TestFlagsAfterArguments(t *testing.T) {
	for _, tc := range []struct{ args, want []string }{
		{[]string{"report", "A", "-o", "r.html"}, []string{"report", "-o", "r.html", "--", "A"}},
		{[]string{"report", "A", "--format=png", "B", "--json"}, []string{"report", "--format=png", "--json", "--", "A", "B"}},
		{[]string{"report", "-o", "r.html", "A", "B"}, []string{"report", "-o", "r.html", "--", "A", "B"}},
		{[]string{"report", "A", "--", "-odd"}, []string{"report", "--", "A", "-odd"}},
		{[]string{"report", "--json"}, []string{"report", "--json"}},
		{[]string{"help", "report"}, []string{"help", "report"}},
		{[]string{"--help"}, []string{"--help"}},
	} {
		got, err := CommandArgs(append([]string{"surge"}, tc.args...), testCommands())
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if !slices.Equal(got[1:], tc.want) {
			t.Errorf("%v → %v, want %v", tc.args, got[1:], tc.want)
		}
	}
}
