package hf

import "fmt"

// Error is a dataset that cannot be read as asked: it names the dataset,
// the file when one is at fault (and the row), what is wrong and the fix,
// in one line.
type Error struct {
	// Dataset is the repository ("org/name").
	Dataset string
	// File is the repository file at fault ("" when none is); Row its
	// row, counted from 1 (0 when none is).
	File string
	Row  int
	// Msg says what is wrong, Fix what to do.
	Msg, Fix string
	// Err is the cause, if any.
	Err error
}

// Error reads "hf dataset ORG/NAME, FILE row N: MSG (FIX)".
func (e *Error) Error() string {
	s := "hf dataset " + e.Dataset
	if e.File != "" {
		s += ", " + e.File
	}
	if e.Row > 0 {
		s += fmt.Sprintf(" row %d", e.Row)
	}
	s += ": " + e.Msg
	if e.Fix != "" {
		s += " (" + e.Fix + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
