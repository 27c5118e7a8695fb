package cmdline

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// helpFixture is a command whose flags are declared out of helpOrder,
// with aliases, defaults that say nothing, a list flag and usage longer
// than any line.
func helpFixture() *cli.Command {
	long := "a usage long enough to need wrapping at eighty columns, with a path like docs/multimodal.md and a quoted \"a,b\" list"
	return &cli.Command{
		Name: "profile", HelpName: "surge profile", Usage: "benchmark a server (no --url: the embedded mock server)",
		Description: "First paragraph, broken\nby hand mid-sentence.\n\nSecond paragraph.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "help-aiperf", Usage: "no group: listed last"},
			&cli.StringFlag{Category: catMedia, Name: "image-format", Value: "png", Usage: "png or jpeg"},
			&cli.IntFlag{Category: catWorkload, Name: "isl", Aliases: []string{"synthetic-input-tokens-mean"}, Value: 550, Usage: long},
			&cli.StringFlag{Category: catOutput, Name: "output-artifact-dir", Usage: "export folder"},
			&cli.StringFlag{Category: catLoad, Name: "concurrency", Usage: "requests in flight"},
			&cli.Float64Flag{Category: catLoad, Name: "benchmark-duration", Usage: "seconds (0: none)"},
			&cli.StringSliceFlag{Category: catTarget, Name: "url", Aliases: []string{"u"}, Usage: "server URL"},
			&cli.BoolFlag{Category: catTarget, Name: "streaming", Usage: long},
			&cli.StringFlag{Category: "Zeta", Name: "zeta", Usage: "a group helpOrder does not name"},
			&cli.StringFlag{Category: catTarget, Name: "hidden", Hidden: true, Usage: "never shown"},
		},
	}
}

// TestCommandHelpGolden pins the layout: groups in the order people set
// them, flags as declared, usage wrapped under the names, no default that
// says nothing, the list flag's names once.
func TestCommandHelpGolden(t *testing.T) {
	for _, width := range []int{80, 120} {
		var b bytes.Buffer
		writeCommandHelp(&b, helpFixture(), width, topicAll)
		got := b.String()
		for i, line := range strings.Split(got, "\n") {
			if n := utf8.RuneCountInString(line); n > width && strings.Contains(line, " ") {
				t.Errorf("width %d: line %d is %d columns: %q", width, i+1, n, line)
			}
			if strings.HasSuffix(line, " ") {
				t.Errorf("width %d: line %d ends in a space: %q", width, i+1, line)
			}
		}
		for _, gone := range []string{"never shown", "(default: false)", "(default: 0)", "[ --url"} {
			if strings.Contains(got, gone) {
				t.Errorf("width %d: help shows %q:\n%s", width, gone, got)
			}
		}
		golden := filepath.Join("testdata", fmt.Sprintf("help_%d.golden", width))
		if *update {
			if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("width %d: help differs from %s (go test -update):\n%s", width, golden, got)
		}
	}
}

func TestWrapText(t *testing.T) {
	for _, tc := range []struct {
		s           string
		width       int
		first, rest int
		want        string
	}{
		{"short", 80, 3, 8, "   short\n"},
		{"aaa bbb ccc", 10, 2, 4, "  aaa bbb\n    ccc\n"},
		{"names  usage", 80, 0, 0, "names  usage\n"},
		{"names  usage", 7, 0, 2, "names\n  usage\n"},
		{"averyveryverylongword x", 8, 1, 1, " averyveryverylongword\n x\n"},
		{"", 80, 3, 3, "\n"},
	} {
		if got := wrapText(tc.s, tc.width, tc.first, tc.rest); got != tc.want {
			t.Errorf("wrapText(%q, %d, %d, %d) = %q, want %q", tc.s, tc.width, tc.first, tc.rest, got, tc.want)
		}
	}
}

// TestProfileHelpTopics: surge profile --help fits 160 lines of 80
// columns with what a first run needs and names every other group, each
// group's --help GROUP shows its own options only, --help-all shows every
// one, and a group that does not exist is a usage error naming them.
func TestProfileHelpTopics(t *testing.T) {
	cmd := func() *cli.Command {
		return &cli.Command{Name: "profile", HelpName: "surge profile", Usage: "benchmark a server", Flags: ProfileFlags(&Config{})}
	}
	help := func(args ...string) (string, error) {
		c := cmd()
		rest, err := helpTopic(c, args)
		if err != nil {
			return "", err
		}
		if !slices.Contains(rest, "--help") {
			t.Fatalf("%v: --help not kept: %v", args, rest)
		}
		var b bytes.Buffer
		templ := c.CustomHelpTemplate
		if templ == "" {
			templ = cli.CommandHelpTemplate
		}
		PrintHelp(&b, templ, c)
		return b.String(), nil
	}
	short, err := help("--help")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(short, "\n"); n > 160 {
		t.Errorf("surge profile --help is %d lines, over 160:\n%s", n, short)
	}
	for _, want := range []string{"--url", "--concurrency", "--request-count", "--isl", "--input-file", "--output-artifact-dir", "--wide",
		"--help GROUP", "--help-all", "load (", "dataset (", "telemetry (", "agents ("} {
		if !strings.Contains(short, want) {
			t.Errorf("the short help lacks %q", want)
		}
	}
	if strings.Contains(short, "--arrival-smoothness") {
		t.Error("the short help shows a flag a first run does not need")
	}
	all, err := help("--help-all")
	if err != nil || !strings.Contains(all, "--arrival-smoothness") || !strings.Contains(all, "--gpu-telemetry") || strings.Contains(all, "--help GROUP") {
		t.Errorf("--help-all: %v\n%s", err, all)
	}
	load, err := help("--help", "load")
	if err != nil || !strings.Contains(load, "--arrival-smoothness") || strings.Contains(load, "\n   --isl,") || strings.Count(load, "\n") >= strings.Count(all, "\n") {
		t.Errorf("--help load: %v\n%s", err, load)
	}
	if other, err := help("-h=telemetry"); err != nil || !strings.Contains(other, "--gpu-telemetry") || strings.Contains(other, "\n   --concurrency ") {
		t.Errorf("-h=telemetry: %v\n%s", err, other)
	}
	if _, err := help("--help", "nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") || !strings.Contains(err.Error(), "load, dataset") {
		t.Errorf("--help nosuch: %v, want an error naming the groups", err)
	}
}
