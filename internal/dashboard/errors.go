package dashboard

import "errors"

// The kinds of the errors the dashboard returns for what the request
// named: errors.Is tells them apart, and their message is to be shown as
// is. Any other error is the dashboard's (or its store's) own failure.
var (
	// ErrNotFound marks errors about things that do not exist.
	ErrNotFound = errors.New("not found")
	// ErrBadInput marks errors in what the request asked.
	ErrBadInput = errors.New("bad input")
	// ErrUnavailable marks what is not ready yet, an analysis under way:
	// asking again later will do.
	ErrUnavailable = errors.New("unavailable")
)

// kindError is an error whose message is shown as is and whose kind is
// one of the errors above.
type kindError struct {
	kind error
	msg  string
}

func (e kindError) Error() string        { return e.msg }
func (e kindError) Is(target error) bool { return target == e.kind }

// NotFound returns an error of kind ErrNotFound saying msg.
func NotFound(msg string) error { return kindError{ErrNotFound, msg} }

// BadInput returns an error of kind ErrBadInput saying msg.
func BadInput(msg string) error { return kindError{ErrBadInput, msg} }

// unavailableError is err, of kind ErrUnavailable.
type unavailableError struct{ err error }

func (e unavailableError) Error() string        { return e.err.Error() }
func (e unavailableError) Unwrap() error        { return e.err }
func (e unavailableError) Is(target error) bool { return target == ErrUnavailable }
