package client

import "errors"

// unsureError is the failure of an operation after one of its tries may
// have been applied: err is the failure it ended on (a later try that was
// not sent, one refused with a code that proves nothing of itself, a
// deadline), unsure the failure of the try whose outcome is unknown (nil
// when err is that try's, as in an *UnknownOutcomeError). It is Ambiguous
// whatever err is. errors.Is and As see into both, except that it never
// matches ErrNotSent: something was sent.
type unsureError struct {
	err    error
	unsure error
}

func (e *unsureError) Error() string {
	if e.unsure == nil {
		return e.err.Error()
	}
	return e.err.Error() + "; an attempt may have been applied: " + e.unsure.Error()
}

// Is matches what err or unsure match, ErrNotSent excepted.
func (e *unsureError) Is(target error) bool {
	return target != ErrNotSent && (errors.Is(e.err, target) || e.unsure != nil && errors.Is(e.unsure, target))
}

// As finds what err, then unsure, holds.
func (e *unsureError) As(target any) bool {
	return errors.As(e.err, target) || e.unsure != nil && errors.As(e.unsure, target)
}

// worst is err, the failure an operation ends on, made Ambiguous when a
// try before it failed with unsure, an outcome not known: an operation
// reports the most severe outcome of its tries, not its last try's alone.
func worst(err, unsure error) error {
	if err == nil || unsure == nil || Ambiguous(err) {
		return err
	}
	return &unsureError{err: err, unsure: unsure}
}

// unsureOf is err if a try that failed with it may have been applied,
// else was.
func unsureOf(err, was error) error {
	if Ambiguous(err) {
		return err
	}
	return was
}
