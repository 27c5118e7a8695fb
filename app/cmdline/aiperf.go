package cmdline

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// FromContext completes c from what the command line said beyond the
// values (which flags were given) and refuses arguments no flag took.
func (c *Config) FromContext(cc *cli.Context) error {
	if cc.NArg() > 0 {
		return Usagef("unexpected argument %q: surge %s takes flags only", cc.Args().First(), cc.Command.Name)
	}
	if err := c.applyConfigFile(cc); err != nil {
		return err
	}
	c.SmoothnessSet = cc.IsSet("arrival-smoothness")
	c.applyDefaults(cc.IsSet)
	if c.SmoothnessSet && !cc.IsSet("arrival-pattern") {
		// As AIPerf: a smoothness alone asks for gamma arrivals.
		c.ArrivalPattern = "gamma"
	}
	return nil
}

// Log levels, AIPerf's names in its order.
var logLevels = []string{"TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "SUCCESS", "ERROR", "CRITICAL"}

// Level is c's log level as an index into logLevels: -vv and -v win over
// --log-level, as AIPerf's do.
func (c *Config) level() (int, error) {
	name := strings.ToUpper(strings.TrimSpace(c.LogLevel))
	switch {
	case c.ExtraVerbose:
		name = "TRACE"
	case c.Verbose:
		name = "DEBUG"
	case name == "":
		name = "INFO"
	}
	for i, l := range logLevels {
		if l == name {
			return i, nil
		}
	}
	return 0, Usagef("--log-level %q: want one of %s", c.LogLevel, strings.Join(logLevels, ", "))
}

// Logger writes surge's notes (INFO) and debug lines (DEBUG, TRACE) to
// stderr as --log-level allows.
type Logger struct {
	W     io.Writer
	Level int
}

func (l Logger) enabled(level string) bool {
	for i, n := range logLevels {
		if n == level {
			return i >= l.Level
		}
	}
	return false
}

// Notef writes a note (INFO).
func (l Logger) Notef(format string, args ...any) {
	if l.enabled("INFO") {
		fmt.Fprintf(l.W, format+"\n", args...)
	}
}

// Warnf writes a warning (WARNING).
func (l Logger) Warnf(format string, args ...any) {
	if l.enabled("WARNING") {
		fmt.Fprintf(l.W, format+"\n", args...)
	}
}

// Debugf writes a debug line (DEBUG).
func (l Logger) Debugf(format string, args ...any) {
	if l.enabled("DEBUG") {
		fmt.Fprintf(l.W, "debug: "+format+"\n", args...)
	}
}

// ResolveAIPerf applies the AIPerf flags that shape how surge runs rather
// than what it sends: the log level (a verbose run on a terminal shows
// --ui simple, as AIPerf's does, so its lines are not hidden under the
// dashboard) and AIPerf's flags surge does not implement (refused, or one
// note each).
func (c *Config) ResolveAIPerf(log io.Writer) (Logger, error) {
	lvl, err := c.level()
	if err != nil {
		return Logger{}, err
	}
	l := Logger{W: log, Level: lvl}
	if l.enabled("DEBUG") && c.UI == "" && c.StdoutTTY {
		c.UI = "simple"
	}
	notes, err := c.foreignNotes()
	if err != nil {
		return Logger{}, err
	}
	for _, n := range notes {
		l.Notef("%s", n)
	}
	return l, nil
}

// ResolveTargets reconciles the lists the flags fill with the single
// values a caller may set (Model, URL): each list holds at least its
// single value, and the single value is the list's first. Empty items (a
// bare flag, "a,,b") are dropped; several URLs must all be servers.
func (c *Config) ResolveTargets() error {
	c.Models = nonEmpty(c.Models)
	if len(c.Models) == 0 && c.Model != "" {
		c.Models = []string{c.Model}
	}
	if len(c.Models) > 0 {
		c.Model = c.Models[0]
	}
	if slices.ContainsFunc(c.URLs, func(u string) bool { return strings.TrimSpace(u) == "" }) {
		return Usagef("--url needs a server URL (or mock; leave it out for the embedded mock server)")
	}
	c.URLs = nonEmpty(c.URLs)
	if len(c.URLs) == 0 && c.URL != "" {
		c.URLs = []string{c.URL}
	}
	if len(c.URLs) > 0 {
		c.URL = c.URLs[0]
	}
	for _, u := range c.URLs {
		if u == "mock" && len(c.URLs) > 1 {
			return Usagef("--url mock starts the embedded mock server: it cannot share the requests with other --url servers")
		}
		if _, err := loadgen.RequestURL(u, endpoint.Chat.Path()); u != "mock" && err != nil {
			return Usagef("--url: %w", err)
		}
	}
	switch c.ModelSelection {
	case "", "round_robin", "random":
	case "weighted":
		return Usagef("--model-selection-strategy weighted needs a weight per model, which AIPerf takes from a config file: use round_robin or random")
	default:
		return Usagef("--model-selection-strategy %q: want round_robin or random", c.ModelSelection)
	}
	return nil
}

// ModelLabel names the models for titles: "a" or "a,b".
func (c *Config) ModelLabel() string {
	if len(c.Models) > 1 {
		return strings.Join(c.Models, ",")
	}
	return c.Model
}

func nonEmpty(items []string) []string {
	out := items[:0:0]
	for _, it := range items {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

// assignModels gives every turn of ds one of several models, as AIPerf's
// --model-selection-strategy does: round_robin sends the n-th prompt (the
// dataset's turns in order) to model n mod count, random draws one for
