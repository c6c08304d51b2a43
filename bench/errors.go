package bench

import "fmt"

// InputError is input bench cannot use: a flag value, a suite, a corpus
// with no record. Error is the package's line ("bench: …"); Msg is the
// cause alone, in the user's terms, for a command that names the input
// itself (errors.As at the edge, rather than trimming the prefix). It
// wraps Kind (ErrSuite, ErrNoRecords, or nil) and the error underneath.
type InputError struct {
	Kind error
	Msg  string
	Err  error
}

func (e *InputError) Error() string {
	if e.Kind != nil {
		return e.Kind.Error() + ": " + e.Msg
	}
	return "bench: " + e.Msg
}

// Cause is the cause alone: Msg.
func (e *InputError) Cause() string { return e.Msg }

func (e *InputError) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Kind, e.Err} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// inputError is an InputError of kind (nil for none) whose Msg is the
// formatted text; a %w in it is wrapped.
func inputError(kind error, format string, args ...any) *InputError {
	err := fmt.Errorf(format, args...)
	return &InputError{Kind: kind, Msg: err.Error(), Err: unwrapOne(err)}
}

func unwrapOne(err error) error {
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return u.Unwrap()
	case interface{ Unwrap() []error }:
		if errs := u.Unwrap(); len(errs) > 0 {
			return errs[0]
		}
	}
	return nil
}
