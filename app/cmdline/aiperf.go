package cmdline

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/metrics/export"
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
	if err := CheckNumbers(cc, numberLimits); err != nil {
		return err
	}
	c.SmoothnessSet = cc.IsSet("arrival-smoothness")
	c.AgenticConfig.given(cc.IsSet)
	c.applyDefaults(cc.IsSet)
	if c.SmoothnessSet && !cc.IsSet("arrival-pattern") {
		// As AIPerf: a smoothness alone asks for gamma arrivals.
		c.ArrivalPattern = "gamma"
	}
	return nil
}

// Log levels, AIPerf's names in its order.
var logLevels = []string{"TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "SUCCESS", "ERROR", "CRITICAL"}

// Level is c's log level as an index into AIPerf's levels (TRACE 0 …
// CRITICAL 7): -vv and -v win over --log-level, as AIPerf's do.
func (c *Config) Level() (int, error) {
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
// stderr as --log-level allows, each wrapped at spaces to Width columns
// (0: not wrapped), never cut.
type Logger struct {
	W     io.Writer
	Level int
	Width int
}

// Enabled reports whether lines of level (AIPerf's name) are written.
func (l Logger) Enabled(level string) bool {
	for i, n := range logLevels {
		if n == level {
			return i >= l.Level
		}
	}
	return false
}

// Notef writes a note (INFO).
func (l Logger) Notef(format string, args ...any) { l.printf("INFO", "", format, args...) }

// Warnf writes a warning (WARNING).
func (l Logger) Warnf(format string, args ...any) { l.printf("WARNING", "", format, args...) }

// Debugf writes a debug line (DEBUG).
func (l Logger) Debugf(format string, args ...any) { l.printf("DEBUG", "debug: ", format, args...) }

// printf writes one line of level, its outside strings (a server's
// answer, a file's name) through the sanitiser: a control character in
// them is shown escaped, lines kept. A Logger without a writer writes
// nothing.
func (l Logger) printf(level, prefix, format string, args ...any) {
	if l.W == nil || !l.Enabled(level) {
		return
	}
	line := prefix + sanitize.Text(fmt.Sprintf(format, args...))
	if l.Width > 0 {
		fmt.Fprint(l.W, export.Wrap(line, l.Width, 2))
		return
	}
	fmt.Fprint(l.W, line+"\n")
}

// ModelLabel names the models for titles: "a" or "a,b".
func (c *Config) ModelLabel() string {
	if len(c.Models) > 1 {
		return strings.Join(c.Models, ",")
	}
	return c.Model
}
