package expose

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Bounds on what one request may make the server read or hold. They are
// not options: a client of these endpoints (go tool pprof, perfscope,
// curl) sends no body but a symbol lookup's address list, and a list is
// small.
const (
	// maxIgnoredBody is how much of a request body an endpoint that takes
	// none reads, and throws away, before it refuses the request. A few
	// clients send an empty or tiny body with every request.
	maxIgnoredBody = 4 << 10

	// maxSymbolBody bounds the address list posted to /debug/pprof/symbol:
	// 256 KiB. go tool pprof posts the addresses of the locations a profile
	// has no function names for, written "0x4a1b2c" and joined by "+":
	// 8 to 15 bytes an address, as a user-space address has at most 12
	// hexadecimal digits on today's 64-bit systems. A few thousand take
	// tens of KiB, and maxSymbolAddresses of the longest fit.
	maxSymbolBody = 256 << 10

	// maxSymbolAddresses bounds the addresses of one symbol lookup, posted
	// or in the query. The answer has a line for each address, with the
	// name of its function, so this bounds the answer too: about 1 MiB for
	// names of 50 bytes. Without it a body of repeated addresses is
	// answered with several times its own size.
	maxSymbolAddresses = 16 << 10
)

// limits are the time and header bounds of the http.Server that Start
// runs. Tests shorten them; Start uses defaultLimits.
type limits struct {
	// readHeader bounds reading a request's header; read bounds reading
	// the whole request, header and body. Once the body is read the read
	// deadline is lifted, so that a capture longer than read is not
	// cancelled (the server cancels a request's context when a read from
	// its connection fails); Options.MaxSeconds bounds the capture.
	readHeader, read time.Duration
	// write bounds writing an answer, from the moment the request has been
	// read. net/http/pprof extends it by the length of a capture for CPU
	// profiles, traces and delta profiles, and the wall-clock profile
	// does the same, so a capture of Options.MaxSeconds gets write on top.
	write time.Duration
	// idle bounds how long a connection waits for its next request.
	idle time.Duration
	// maxHeaderBytes bounds a request's header, URL included, so a
	// symbol lookup's query too.
	maxHeaderBytes int
}

// defaultLimits are Start's bounds. A request's header and a body of at
// most maxSymbolBody take milliseconds to send on any network a profile is
// fetched over; the read bound is there for clients that stall or trickle,
// each of which holds a connection and a goroutine. Thirty seconds is
// ample to write any answer; a capture gets its own length on top.
func defaultLimits() limits {
	return limits{
		readHeader:     10 * time.Second,
		read:           30 * time.Second,
		write:          30 * time.Second,
		idle:           2 * time.Minute,
		maxHeaderBytes: 64 << 10,
	}
}

// A bodyHandler serves a request whose body has been read already.
type bodyHandler func(w http.ResponseWriter, r *http.Request, body []byte)

// body reads a request's body, at most max bytes of it, within the read
// bound, and then serves the request with serve. A longer body is refused
// with 413 once max+1 bytes of it have been read, a body not received in
// time with 408, a broken one with 400, each with one line, and the
// connection is closed: nothing more of the body is read.
func (l limits) body(max int64, serve bodyHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			var err error
			body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, max))
			if err != nil {
				refuseBody(w, rc, r.URL.Path, max, l.read, err)
				return
			}
		}
		// The request has been read. Lift the read deadline, or the
		// server would cancel a capture running past it, and give the
		// answer its own time to be written. Neither fails on a
		// connection of net/http's own.
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Now().Add(l.write))
		serve(w, r, body)
	})
}

// noBody serves h, which takes no body, once l.body has read and checked
// what the client sent.
func (l limits) noBody(h http.Handler) http.Handler {
	return l.body(maxIgnoredBody, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		h.ServeHTTP(w, r)
	})
}

// refuseBody answers a request whose body could not be read: err is what
// reading it returned.
func refuseBody(w http.ResponseWriter, rc *http.ResponseController, path string, max int64, read time.Duration, err error) {
	// net/http closes the connection after the answer. Before that it
	// would read up to 256 KiB more of the body, to close cleanly; with the
	// deadline passed it reads nothing, and after a body that was too
	// large it still waits for the client to read the answer before
	// closing.
	_ = rc.SetReadDeadline(time.Now())
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge) && max == maxIgnoredBody:
		serveError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s takes no request body, and this one is larger than %d bytes", path, max))
	case errors.As(err, &tooLarge):
		serveError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes, the most %s accepts", max, path))
	case errors.Is(err, os.ErrDeadlineExceeded):
		serveError(w, http.StatusRequestTimeout, fmt.Sprintf("request not received in full within %s", read))
	default:
		serveError(w, http.StatusBadRequest, fmt.Sprintf("reading the request body: %v", err))
	}
}
