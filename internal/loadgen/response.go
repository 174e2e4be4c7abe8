package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// errMalformed marks a response that is not valid HTTP/1.x. It is counted
// as the "malformed" error kind.
var errMalformed = errors.New("malformed response")

const (
	readBufSize    = 16 << 10
	maxHeaderBytes = 1 << 20 // a longer header line than this is refused
	maxChunkDigits = 15      // keeps a chunk size below 2^60: no overflow
)

// A responseReader reads HTTP/1.x responses from one connection and throws
// their bodies away. It keeps its buffer across responses and connections,
// so reading a response allocates nothing.
//
// It reads what servers send, not what they should send, so every malformed
// input is an error wrapping errMalformed or io.ErrUnexpectedEOF, never a
// panic; FuzzReadResponse holds it to that.
type responseReader struct {
	rd    io.Reader
	buf   []byte
	r, w  int   // buf[r:w] is read but not yet parsed
	nread int64 // bytes read from rd so far, headers included
}

// A response is what a load run keeps of one response.
type response struct {
	status int
	close  bool // the server will not take another request on this connection
}

func newResponseReader() *responseReader {
	return &responseReader{buf: make([]byte, readBufSize)}
}

// reset starts reading from a new connection.
func (rr *responseReader) reset(rd io.Reader) {
	rr.rd = rd
	rr.r, rr.w = 0, 0
}

// buffered reports whether bytes are waiting to be parsed.
func (rr *responseReader) buffered() bool { return rr.w > rr.r }

// fill reads at least one more byte into the buffer, or returns an error.
func (rr *responseReader) fill() error {
	if rr.r == rr.w {
		rr.r, rr.w = 0, 0
	}
	if rr.w == len(rr.buf) {
		if rr.r > 0 {
			rr.w = copy(rr.buf, rr.buf[rr.r:rr.w])
			rr.r = 0
		} else {
			if len(rr.buf) >= maxHeaderBytes {
				return fmt.Errorf("%w: line longer than %d bytes", errMalformed, maxHeaderBytes)
			}
			// Rare: a header line longer than the buffer. Grow rather than
			// refuse servers with large cookies.
			nb := make([]byte, 2*len(rr.buf))
			copy(nb, rr.buf[:rr.w])
			rr.buf = nb
		}
	}
	for range 100 {
		n, err := rr.rd.Read(rr.buf[rr.w:])
		if n < 0 || n > len(rr.buf)-rr.w {
			return fmt.Errorf("%w: invalid read count", errMalformed)
		}
		rr.w += n
		rr.nread += int64(n)
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// line returns the next line without its line ending. The slice points into
// the buffer and is valid until the next read.
func (rr *responseReader) line() ([]byte, error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(rr.buf[rr.r+scanned:rr.w], '\n'); i >= 0 {
			end := rr.r + scanned + i
			ln := rr.buf[rr.r:end]
			rr.r = end + 1
			if n := len(ln); n > 0 && ln[n-1] == '\r' {
				ln = ln[:n-1]
			}
			return ln, nil
		}
		scanned = rr.w - rr.r
		if err := rr.fill(); err != nil {
			return nil, err
		}
	}
}

// readResponse reads one response, including any interim 1xx responses
// before it, and discards its body. It returns io.EOF only when the
// connection closed before the response's first byte: the one case where
// a request on a reused connection may be retried.
func (rr *responseReader) readResponse(head bool) (response, error) {
	startRead, startBuffered := rr.nread, rr.buffered()
	resp, err := rr.readResponse1(head)
	if err == io.EOF && (startBuffered || rr.nread != startRead) {
		err = io.ErrUnexpectedEOF
	}
	return resp, err
}

func (rr *responseReader) readResponse1(head bool) (response, error) {
	for {
		ln, err := rr.line()
		if err != nil {
			return response{}, err
		}
		if len(ln) < 12 || string(ln[:7]) != "HTTP/1." || (ln[7] != '0' && ln[7] != '1') ||
			ln[8] != ' ' || (len(ln) > 12 && ln[12] != ' ') {
			return response{}, fmt.Errorf("%w: bad status line", errMalformed)
		}
		status := 0
		for _, c := range ln[9:12] {
			if c < '0' || c > '9' {
				return response{}, fmt.Errorf("%w: bad status code", errMalformed)
			}
			status = status*10 + int(c-'0')
		}
		if status < 100 {
			return response{}, fmt.Errorf("%w: status code %d", errMalformed, status)
		}
		http10 := ln[7] == '0'
		h, err := rr.headers(http10)
		if err != nil {
			return response{}, unexpectedEOF(err)
		}
		resp := response{status: status, close: h.close}
		switch {
		case status == 101:
			return response{}, fmt.Errorf("%w: unexpected 101 Switching Protocols", errMalformed)
		case status < 200:
			continue // interim response (100 Continue, 103 Early Hints): the real one follows
		case head || status == 204 || status == 304:
			return resp, nil
		case h.chunked:
			return resp, unexpectedEOF(rr.chunkedBody())
		case h.contentLength >= 0:
			return resp, unexpectedEOF(rr.discard(h.contentLength))
		default:
			// No length: the body ends when the server closes.
			resp.close = true
			return resp, rr.discardToEOF()
		}
	}
}

// unexpectedEOF turns an EOF in the middle of a response into
// io.ErrUnexpectedEOF.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

type header struct {
	contentLength int64 // -1 when absent
	chunked       bool
	close         bool
}

func (rr *responseReader) headers(http10 bool) (header, error) {
	h := header{contentLength: -1, close: http10}
	for {
		ln, err := rr.line()
		if err != nil {
			return h, err
		}
		if len(ln) == 0 {
			return h, nil
		}
		if ln[0] == ' ' || ln[0] == '\t' {
			continue // obsolete line folding of a header we do not need
		}
		colon := bytes.IndexByte(ln, ':')
		if colon <= 0 {
			return h, fmt.Errorf("%w: header line without a colon", errMalformed)
		}
		name, value := ln[:colon], trimSpace(ln[colon+1:])
		switch {
		case equalFold(name, "content-length"):
			n, ok := parseDecimal(value)
			if !ok || (h.contentLength >= 0 && h.contentLength != n) {
				return h, fmt.Errorf("%w: bad Content-Length", errMalformed)
			}
			h.contentLength = n
		case equalFold(name, "transfer-encoding"):
			h.chunked = hasToken(value, "chunked")
		case equalFold(name, "connection"):
			if hasToken(value, "close") {
				h.close = true
			} else if http10 && hasToken(value, "keep-alive") {
				h.close = false
			}
		}
	}
}

// chunkedBody discards a chunked body and its trailers.
func (rr *responseReader) chunkedBody() error {
	for {
		ln, err := rr.line()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(ln, ';'); i >= 0 {
			ln = ln[:i] // chunk extensions
		}
		ln = trimSpace(ln)
		if len(ln) == 0 || len(ln) > maxChunkDigits {
			return fmt.Errorf("%w: bad chunk size", errMalformed)
		}
		var size int64
		for _, c := range ln {
			d := unhex(c)
			if d < 0 {
				return fmt.Errorf("%w: bad chunk size", errMalformed)
			}
			size = size<<4 | int64(d)
		}
		if size == 0 {
			for { // trailers, up to the empty line
				ln, err := rr.line()
				if err != nil {
					return err
				}
				if len(ln) == 0 {
					return nil
				}
			}
		}
		if err := rr.discard(size); err != nil {
			return err
		}
		ln, err = rr.line()
		if err != nil {
			return err
		}
		if len(ln) != 0 {
			return fmt.Errorf("%w: chunk longer than its size", errMalformed)
		}
	}
}

// discard skips n body bytes.
func (rr *responseReader) discard(n int64) error {
	for {
		avail := int64(rr.w - rr.r)
		if avail >= n {
			rr.r += int(n)
			return nil
		}
		n -= avail
		rr.r = rr.w
		if err := rr.fill(); err != nil {
			return err
		}
	}
}

// discardToEOF skips a body delimited by the connection's end.
func (rr *responseReader) discardToEOF() error {
	for {
		rr.r = rr.w
		if err := rr.fill(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// equalFold reports whether b equals the lower-case ASCII string s, ignoring
// case, without allocating.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v contains token.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var item []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			item, v = v, nil
		}
		if equalFold(trimSpace(item), token) {
			return true
		}
	}
	return false
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// parseDecimal parses a Content-Length: digits only, at most 18 of them.
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
