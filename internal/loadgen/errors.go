package loadgen

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// An errorKind is how a request failed below HTTP. Workers count kinds in
// arrays, so counting a failure allocates nothing.
type errorKind int

const (
	kindRefused   errorKind = iota // connection refused: nothing listens on the port
	kindTimeout                    // no complete response within Config.Timeout
	kindReset                      // the server reset the connection (RST)
	kindClosed                     // the server closed the connection before a complete response
	kindMalformed                  // the response is not valid HTTP/1.x
	kindOther
	numKinds
)

// String returns the kind's key in Result.Errors.
func (k errorKind) String() string {
	switch k {
	case kindRefused:
		return "connect_refused"
	case kindTimeout:
		return "timeout"
	case kindReset:
		return "reset"
	case kindClosed:
		return "closed"
	case kindMalformed:
		return "malformed"
	}
	return "other"
}

// classify names the kind of a transport error. Deadline errors are
// classified by the caller, which knows whether the deadline was a timeout.
func classify(err error) errorKind {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return kindRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return kindReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return kindClosed
	case errors.Is(err, errMalformed):
		return kindMalformed
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return kindTimeout
	}
	return kindOther
}

// retryable reports whether a request that failed with err on a reused
// connection, before any byte of its response, is sent again on a new
// connection: the server most likely closed the idle connection just as the
// request left (an idle timeout racing the request), and never saw it.
// Counting that as a failure would blame the service for a benign race.
func retryable(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
