package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// An Error is a failed profile fetch. Its message is one line naming the
// profile and the URL; its fields let callers turn known failures into
// advice (credentials, a busy CPU profiler, a target gone).
type Error struct {
	// Profile is the profile asked for: "cpu" for the CPU profile
	// endpoint, else the endpoint's name ("heap", "goroutine").
	Profile string
	// URL is the URL asked, redacted (RedactURL).
	URL string
	// Status is the HTTP status when the server answered, else 0.
	Status int
	// Body is the first line of a non-200 answer's text, when it was
	// text.
	Body string
	// Unreachable is set when no complete HTTP answer arrived: the
	// connection was refused, reset or timed out.
	Unreachable bool
	// Err is the cause.
	Err error

	noDelta bool // the server does not serve deltas through ?seconds=
}

func (e *Error) Error() string {
	return fmt.Sprintf("fetch %s profile from %s: %v", e.Profile, e.URL, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNoDelta) recognise a refused delta.
func (e *Error) Is(target error) bool { return target == ErrNoDelta && e.noDelta }

// CPUBusy reports whether the server refused a CPU profile because another
// one is running: net/http/pprof answers 500 "cpu profiling already in
// use", perfscope's expose package 409 Conflict. A process runs one CPU
// profiler at a time.
func (e *Error) CPUBusy() bool {
	return e.Status == http.StatusConflict ||
		(e.Status == http.StatusInternalServerError && strings.Contains(e.Body, "already in use"))
}

// Unauthorized reports whether the server refused the request's
// credentials (401 or 403).
func (e *Error) Unauthorized() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// Reason is the part of a fetch error after the profile and URL, for
// messages that already name the endpoint; for other errors, their
// message.
func Reason(err error) string {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Err.Error()
	}
	return err.Error()
}

// isHTML recognises an HTML page, such as an application's catch-all route,
// by its declared type or, when the type is missing or wrong, by its start.
func isHTML(contentType string, data []byte) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	head := bytes.ToLower(bytes.TrimSpace(data[:min(len(data), 512)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

func describeContentType(ct string) string {
	if ct == "" {
		return "no Content-Type"
	}
	return "Content-Type " + ct
}

// firstLine is the first line of a text answer, bounded and printable, for
// one-line error messages.
func firstLine(data []byte) string {
	data = bytes.TrimSpace(data[:min(len(data), 1024)])
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		data = data[:i]
	}
	s := strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '\uFFFD' {
			return -1
		}
		return r
	}, string(data))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "..."
	}
	return s
}

// statusError describes a non-200 answer in one line: its status, and the
// first line of its text unless that only repeats the status (as Go's
// default "404 page not found" does).
func statusError(resp *http.Response, line string) error {
	msg := resp.Status
	if line != "" && !strings.Contains(strings.ToLower(line), strings.ToLower(http.StatusText(resp.StatusCode))) {
		msg += ": " + line
	}
	return errors.New(msg)
}
