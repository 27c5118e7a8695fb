package datasets

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// InputError is bad input in a dataset file: a malformed line, a missing or
// invalid field. Error returns "file:line: msg" (or "file: msg" when no
// line applies); the CLI maps it to exit status 2.
type InputError struct {
	File string
	Line int
	Msg  string
	// Err is the underlying cause, if any (an *os.PathError, a JSON error).
	Err error
}

// Error returns "file:line: msg".
func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Unwrap returns the underlying cause.
func (e *InputError) Unwrap() error { return e.Err }

// inputErrorf builds an *InputError for file:line.
func inputErrorf(file string, line int, format string, args ...any) *InputError {
	return &InputError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// jsonLineError turns an encoding/json error for one line into an
// *InputError naming the field that is wrong when json knows it.
func jsonLineError(file string, line int, err error) *InputError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &InputError{File: file, Line: line, Msg: fmt.Sprintf("malformed JSON at column %d: %s", syn.Offset, syn.Error()), Err: err}
	case errors.As(err, &typ):
		if typ.Field == "" {
			return &InputError{File: file, Line: line, Msg: fmt.Sprintf("want a JSON object, got %s", typ.Value), Err: err}
		}
		return &InputError{File: file, Line: line, Msg: fmt.Sprintf("field %q: want %s, got %s", typ.Field, jsonKind(typ.Type.String()), typ.Value), Err: err}
	case strings.Contains(err.Error(), "unexpected end of JSON input"):
		return &InputError{File: file, Line: line, Msg: "malformed JSON: unexpected end of line", Err: err}
	default:
		return &InputError{File: file, Line: line, Msg: "malformed JSON: " + err.Error(), Err: err}
	}
}

// jsonKind names a Go type the way a JSON author thinks of it.
func jsonKind(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case t == "string":
		return "a string"
	case t == "int" || t == "int64" || t == "uint64":
		return "an integer"
	case t == "float64":
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["):
		return "an object"
	default:
		return t
	}
}

// OptionError is a bad value in Options (or SyntheticOptions), named by its
// field ("ISLBlockSize", "PublicDataset", "Synthetic.ISL"), never by a
// flag: the caller knows which of its options or flags set the field and
// says so (the app names the flag). Error reads "<Option> <Reason>".
type OptionError struct {
	Option string
	Reason string
	// Err is the cause, if any.
	Err error
}

// Error returns the option and the reason.
func (e *OptionError) Error() string { return e.Option + " " + e.Reason }

// Unwrap returns the cause.
func (e *OptionError) Unwrap() error { return e.Err }

func optionErrorf(option, format string, args ...any) *OptionError {
	return &OptionError{Option: option, Reason: fmt.Sprintf(format, args...)}
}
