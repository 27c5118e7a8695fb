package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// fromContext completes c from what the command line said beyond the
// values (which flags were given) and refuses arguments no flag took.
func (c *Config) fromContext(cc *cli.Context) error {
	if cc.NArg() > 0 {
		return usagef("unexpected argument %q: surge %s takes flags only", cc.Args().First(), cc.Command.Name)
	}
	c.SmoothnessSet = cc.IsSet("arrival-smoothness")
	if c.SmoothnessSet && !cc.IsSet("arrival-pattern") {
		// As AIPerf: a smoothness alone asks for gamma arrivals.
		c.ArrivalPattern = "gamma"
	}
	return nil
}

// Log levels, AIPerf's names in its order.
var logLevels = []string{"TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "SUCCESS", "ERROR", "CRITICAL"}

// level is c's log level as an index into logLevels: -vv and -v win over
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
	return 0, usagef("--log-level %q: want one of %s", c.LogLevel, strings.Join(logLevels, ", "))
}

// logger writes surge's notes (INFO) and debug lines (DEBUG, TRACE) to
// stderr as --log-level allows.
type logger struct {
	w     io.Writer
	level int
}

func (l logger) enabled(level string) bool {
	for i, n := range logLevels {
		if n == level {
			return i >= l.level
		}
	}
	return false
}

// notef writes a note (INFO).
func (l logger) notef(format string, args ...any) {
	if l.enabled("INFO") {
		fmt.Fprintf(l.w, format+"\n", args...)
	}
}

// debugf writes a debug line (DEBUG).
func (l logger) debugf(format string, args ...any) {
	if l.enabled("DEBUG") {
		fmt.Fprintf(l.w, "debug: "+format+"\n", args...)
	}
}

// resolveAIPerf applies the AIPerf flags that shape how surge runs rather
// than what it sends: the log level (a verbose run on a terminal shows
// --ui simple, as AIPerf's does, so its lines are not hidden under the
// dashboard) and AIPerf's flags surge does not implement (refused, or one
// note each).
func (c *Config) resolveAIPerf(log io.Writer) (logger, error) {
	lvl, err := c.level()
	if err != nil {
		return logger{}, err
	}
	l := logger{w: log, level: lvl}
	if l.enabled("DEBUG") && c.UI == "" && c.StdoutTTY {
		c.UI = "simple"
	}
	notes, err := c.foreignNotes()
	if err != nil {
		return logger{}, err
	}
	for _, n := range notes {
		l.notef("%s", n)
	}
	return l, nil
}
