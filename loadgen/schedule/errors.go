package schedule

import "fmt"

// FieldError is bad input to one parameter of this package, named as the
// parameter is ("rate", "smoothness", "start offset"), never as a flag: the
// caller knows which of its own options fed that parameter and says so (the
// app names the flag). Error reads "<Field> <Reason>", e.g. "rate must be
// > 0, got 0".
type FieldError struct {
	Field  string
	Reason string
	// Err is the cause, when there is one (ErrNoTimestamps).
	Err error
}

// Error returns the field and the reason.
func (e *FieldError) Error() string { return e.Field + " " + e.Reason }

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErrorf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
