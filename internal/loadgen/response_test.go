package loadgen

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadResponse(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		head   bool
		status int
		close  bool
		err    error // nil, io.EOF, io.ErrUnexpectedEOF or errMalformed
		rest   string
	}{
		{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", status: 200},
		{name: "leaves the next response", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP", status: 200, rest: "HTTP"},
		{name: "no reason phrase", in: "HTTP/1.1 204\r\n\r\n", status: 204},
		{name: "bare LF", in: "HTTP/1.1 200 OK\nContent-Length: 1\n\nx", status: 200},
		{name: "header case", in: "HTTP/1.1 404 Not Found\r\ncOnTeNt-LeNgTh:  3 \r\n\r\nabc", status: 404},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n", status: 200},
		{name: "chunked wins over length", in: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", status: 200},
		{name: "interim 100", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", status: 201},
		{name: "head has no body", in: "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", head: true, status: 200},
		{name: "304 has no body", in: "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", status: 304},
		{name: "connection close", in: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", status: 200, close: true},
		{name: "http/1.0 closes", in: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, close: true},
		{name: "http/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "body to EOF", in: "HTTP/1.1 200 OK\r\n\r\nuntil the end", status: 200, close: true},
		{name: "folded header", in: "HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 0\r\n\r\n", status: 200},

		{name: "nothing", in: "", err: io.EOF},
		{name: "cut in status line", in: "HTTP/1.1 20", err: io.ErrUnexpectedEOF},
		{name: "cut in headers", in: "HTTP/1.1 200 OK\r\nContent-Le", err: io.ErrUnexpectedEOF},
		{name: "cut in body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", err: io.ErrUnexpectedEOF},
		{name: "cut in chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", err: io.ErrUnexpectedEOF},
		{name: "not http", in: "SSH-2.0-OpenSSH_9.6\r\n", err: errMalformed},
		{name: "http/2 preface", in: "HTTP/2 200\r\n\r\n", err: errMalformed},
		{name: "letters in status", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: errMalformed},
		{name: "status 099", in: "HTTP/1.1 099 Odd\r\n\r\n", err: errMalformed},
		{name: "no space after code", in: "HTTP/1.1 2000K\r\n\r\n", err: errMalformed},
		{name: "header without colon", in: "HTTP/1.1 200 OK\r\nbogus\r\n\r\n", err: errMalformed},
		{name: "negative length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: errMalformed},
		{name: "two lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", err: errMalformed},
		{name: "huge length", in: "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", err: errMalformed},
		{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: errMalformed},
		{name: "chunk size overflow", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", err: errMalformed},
		{name: "chunk too long", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n", err: errMalformed},
		{name: "switching protocols", in: "HTTP/1.1 101 Switching Protocols\r\n\r\n", err: errMalformed},
	}
	for _, tt := range tests {
		// One byte at a time as well as all at once: a response split
		// anywhere across reads must parse the same.
		for _, split := range []bool{false, true} {
			var rd io.Reader = strings.NewReader(tt.in)
			if split {
				rd = iotest.OneByteReader(rd)
			}
			rr := newResponseReader()
			rr.reset(rd)
			resp, err := rr.readResponse(tt.head)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Errorf("%s (split %v): error %v, want %v", tt.name, split, err, tt.err)
				continue
			}
			if err != nil {
				continue
			}
			if resp.status != tt.status || resp.close != tt.close {
				t.Errorf("%s (split %v): got status %d close %v, want %d %v", tt.name, split, resp.status, resp.close, tt.status, tt.close)
			}
			rest := string(rr.buf[rr.r:rr.w])
			if b, _ := io.ReadAll(rd); len(b) > 0 {
				rest += string(b)
			}
			if rest != tt.rest {
				t.Errorf("%s (split %v): left %q unread, want %q", tt.name, split, rest, tt.rest)
			}
		}
	}
}

func TestReadResponseLongHeader(t *testing.T) {
	long := "HTTP/1.1 200 OK\r\nSet-Cookie: " + strings.Repeat("c", 100<<10) + "\r\nContent-Length: 0\r\n\r\n"
	rr := newResponseReader()
	rr.reset(strings.NewReader(long))
	if resp, err := rr.readResponse(false); err != nil || resp.status != 200 {
		t.Fatalf("100 KB header: %v, %v", resp, err)
	}
	tooLong := "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("c", 2<<20) + "\r\n\r\n"
	rr.reset(strings.NewReader(tooLong))
	if _, err := rr.readResponse(false); !errors.Is(err, errMalformed) {
		t.Fatalf("2 MB header: error %v, want malformed", err)
	}
}

// FuzzReadResponse holds the parser to its promise: whatever a server
// sends, the result is a response or an error, never a panic or a hang.
func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: v\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 500 Oops\r\nConnection: keep-alive\r\n\r\nbody",
		"HTTP/1.1 204\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\n",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, head bool) {
		rr := newResponseReader()
		rr.reset(iotest.HalfReader(&byteReader{b: in}))
		for range 4 { // a few responses in a row, as on a keep-alive connection
			resp, err := rr.readResponse(head)
			if err != nil {
				return
			}
			if resp.status < 200 || resp.status > 999 {
				t.Fatalf("status %d accepted as a final response", resp.status)
			}
			if rr.r > rr.w || rr.w > len(rr.buf) {
				t.Fatalf("buffer indexes out of order: r %d w %d len %d", rr.r, rr.w, len(rr.buf))
			}
		}
	})
}

// byteReader is bytes.Reader without WriterTo, so reads stay small.
type byteReader struct{ b []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// BenchmarkReadResponse measures parsing alone; it must not allocate.
func BenchmarkReadResponse(b *testing.B) {
	in := []byte("HTTP/1.1 200 OK\r\nContent-Length: 36\r\nContent-Type: application/json\r\nDate: Sun, 22 Nov 2026 22:36:46 GMT\r\n\r\n" +
		`{"padded":"     hello","length":10}` + "\n")
	rr := newResponseReader()
	var br byteReader
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		br.b = in
		rr.reset(&br)
		if _, err := rr.readResponse(false); err != nil {
			b.Fatal(err)
		}
	}
}
