package expose

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

const (
	// hostileBody is the size of the bodies the tests send: the attack that
	// grew a service by a gigabyte before bodies were bounded.
	hostileBody = 100 << 20
	// maxGrowth bounds how much the test process, server included, may
	// grow while it is sent hostile requests.
	maxGrowth = 64 << 20
	// clientDeadline bounds every exchange the tests have with the server.
	// Only a server that never answers or never closes takes this long.
	clientDeadline = 30 * time.Second
)

// A route is one endpoint the server answers, with the status a request
// carrying a hostile body gets.
type route struct {
	method, path string
	want         int
}

// endpoints are every endpoint Start serves, and requests that reach no
// endpoint: refused by the mux or, on a server with a token, by the token
// check, before any handler reads the body.
func endpoints(token bool) []route {
	if token {
		return []route{{"GET", "/debug/pprof/heap", http.StatusUnauthorized}}
	}
	rs := []route{
		{"POST", "/debug/pprof/symbol", http.StatusRequestEntityTooLarge},
		{"GET", "/debug/metrics", http.StatusRequestEntityTooLarge},
		{"POST", "/debug/pprof/heap", http.StatusMethodNotAllowed},
		{"GET", "/elsewhere", http.StatusNotFound},
	}
	for _, path := range []string{
		"", "cmdline", "symbol", "profile?seconds=60", "trace", "wall", "block?seconds=1",
		"allocs", "heap", "block", "mutex", "goroutine", "threadcreate",
		"named-by-the-application",
	} {
		rs = append(rs, route{"GET", "/debug/pprof/" + path, http.StatusRequestEntityTooLarge})
	}
	return rs
}

// TestHostileBodies sends every endpoint a 100 MB body, with its length
// declared and chunked. Each must be refused with its 4xx and one line,
// without the server reading most of the body or growing by more than
// maxGrowth, and the server must go on serving.
func TestHostileBodies(t *testing.T) {
	plain := start(t, Options{})
	withToken := start(t, Options{Token: testToken})
	servers := map[bool]*Server{false: plain, true: withToken}
	// A real program counter, so a symbol lookup that read the body would
	// answer every address of it with a line.
	pattern := []byte(addressList(1, 0) + "+")

	warmUp := endpoints(false)[0]
	sendBody(t, plain.Addr().String(), warmUp, pattern, hostileBody, false)
	before := memoryObtained()
	var largest uint64
	var mostTaken int64
	for _, token := range []bool{false, true} {
		s := servers[token]
		for _, rt := range endpoints(token) {
			for _, chunked := range []bool{false, true} {
				start := memoryObtained()
				code, body, written := sendBody(t, s.Addr().String(), rt, pattern, hostileBody, chunked)
				grew := memoryObtained() - start
				largest = max(largest, grew)
				mostTaken = max(mostTaken, written)
				what := fmt.Sprintf("%s %s (chunked %v)", rt.method, rt.path, chunked)
				if code != rt.want {
					t.Errorf("%s: status %d, want %d (body %.200q)", what, code, rt.want, body)
				}
				if n := bytes.Count(body, []byte("\n")); n != 1 {
					t.Errorf("%s: body %.300q, want one line", what, body)
				}
				if written >= hostileBody/2 {
					t.Errorf("%s: the server took %d bytes of the body, want it to stop reading long before %d", what, written, hostileBody)
				}
				if grew > maxGrowth {
					t.Errorf("%s: memory grew by %d MiB, want at most %d MiB", what, grew>>20, maxGrowth>>20)
				}
				if code, body := get(t, nil, plain.URL()+"cmdline", ""); code != http.StatusOK {
					t.Fatalf("after %s: cmdline status %d (%q), want 200", what, code, body)
				}
			}
		}
	}
	total := memoryObtained() - before
	t.Logf("memory obtained from the OS grew by %.1f MiB over all hostile requests, by at most %.1f MiB for one; the server and the sockets' buffers took at most %.1f MiB of a body", float64(total)/(1<<20), float64(largest)/(1<<20), float64(mostTaken)/(1<<20))
	if total > maxGrowth {
		t.Errorf("memory grew by %d MiB over all hostile requests, want at most %d MiB", total>>20, maxGrowth>>20)
	}
}

// TestSlowClients checks that a client that stalls or trickles its header
// or body is cut off by the read bounds, shortened here to a second.
func TestSlowClients(t *testing.T) {
	lim := defaultLimits()
	lim.readHeader, lim.read = time.Second, time.Second
	s := startWith(t, Options{}, lim)
	addr := s.Addr().String()

	const bodyHeader = "POST /debug/pprof/symbol HTTP/1.1\r\nHost: expose.test\r\nContent-Length: 1000\r\n\r\n"
	const partialHeader = "GET /debug/pprof/cmdline HTTP/1.1\r\nHost: expose.test\r\n"
	for _, tt := range []struct {
		name    string
		sent    string // sent at once
		trickle bool   // then a byte every 50ms, until the server closes
		// The server answers a request whose body does not come with 408
		// (wantStatus), unless the trickled bytes make the close a reset
		// that loses the answer. To a request whose header does not come
		// net/http says nothing, or 400 when what came cannot be a header
		// (wantStatus 0: any 4xx of net/http's own).
		wantStatus int
		mustAnswer bool
	}{
		{name: "stalled body", sent: bodyHeader + "0x1+0x2+", wantStatus: http.StatusRequestTimeout, mustAnswer: true},
		{name: "trickled body", sent: bodyHeader, trickle: true, wantStatus: http.StatusRequestTimeout},
		{name: "stalled header", sent: partialHeader},
		{name: "trickled header", sent: partialHeader, trickle: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn := dial(t, addr)
			if _, err := io.WriteString(conn, tt.sent); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			defer wg.Wait()
			stop := make(chan struct{})
			defer close(stop)
			if tt.trickle {
				wg.Go(func() { trickle(conn, stop) })
			}

			// The server must close the connection; a reset, when it
			// closes with trickled bytes unread, is as good as a close.
			answer, err := io.ReadAll(conn)
			if nerr, ok := errors.AsType[net.Error](err); ok && nerr.Timeout() {
				t.Fatalf("the server kept the connection open for %s (answer so far %q), want it closed after the read timeout", clientDeadline, answer)
			}
			if len(answer) == 0 {
				if tt.mustAnswer {
					t.Errorf("the server closed the connection without an answer, want %d", tt.wantStatus)
				}
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(answer)), nil)
			if err != nil {
				t.Fatalf("answer %q: %v", answer, err)
			}
			body, _ := io.ReadAll(resp.Body)
			switch {
			case tt.wantStatus == 0 && resp.StatusCode/100 != 4:
				t.Errorf("answer %d %q, want none or a 4xx", resp.StatusCode, body)
			case tt.wantStatus != 0 && (resp.StatusCode != tt.wantStatus || bytes.Count(body, []byte("\n")) != 1):
				t.Errorf("answer %d %q, want %d and one line", resp.StatusCode, body, tt.wantStatus)
			}
		})
	}
	if code, body := get(t, nil, s.URL()+"cmdline", ""); code != http.StatusOK {
		t.Errorf("after slow clients: cmdline status %d (%q), want 200", code, body)
	}
}

// trickle writes a byte to conn every 50ms until stop is closed or a write
// fails.
func trickle(conn net.Conn, stop <-chan struct{}) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			if _, err := conn.Write([]byte("1")); err != nil {
				return
			}
		}
	}
}

// TestCapturesOutliveTimeouts checks that captures longer than the read and
// write bounds (two seconds here) are taken in full: the read deadline, had
// it stayed, would cancel them, and the write deadline would cut their
// answer. Each capture is twice the bounds, and the answer still has the
// write bound to be written after it, as on a busy machine it may need.
func TestCapturesOutliveTimeouts(t *testing.T) {
	lim := defaultLimits()
	lim.read, lim.write = 2*time.Second, 2*time.Second
	s := startWith(t, Options{}, lim)
	const want = 4 * time.Second
	paths := []string{"profile?seconds=4", "heap?seconds=4", "wall?seconds=4"}
	type answer struct {
		code int
		body []byte
		err  error
	}
	answers := make([]answer, len(paths))
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Go(func() {
			code, body, err := request(nil, s.URL()+path, "")
			answers[i] = answer{code, body, err}
		})
	}
	wg.Wait()
	for i, path := range paths {
		code, body := answers[i].code, answers[i].body
		if answers[i].err != nil {
			t.Errorf("GET %s: %v", path, answers[i].err)
			continue
		}
		if code != http.StatusOK {
			t.Errorf("GET %s: status %d (%.200q), want 200", path, code, body)
			continue
		}
		p, err := profile.Parse(bytes.NewReader(body))
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			continue
		}
		// fgprof does not record the duration; its profile would be
		// empty had the capture been cancelled.
		if got := time.Duration(p.DurationNanos); path != "wall?seconds=4" && got < want-100*time.Millisecond {
			t.Errorf("GET %s: profile of %s, want %s", path, got, want)
		}
	}
}

// dial connects to addr for the test, with clientDeadline on every read
// and write, and closes the connection when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(clientDeadline)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// sendBody sends rt with a body of size bytes repeating pattern, streamed
// from the pattern rather than held in memory, with its length declared or
// chunked. It returns the answer's status and body and how much of the
// request body the server took before the answer came.
func sendBody(t *testing.T, addr string, rt route, pattern []byte, size int64, chunked bool) (int, []byte, int64) {
	t.Helper()
	conn := dial(t, addr)
	framing := fmt.Sprintf("Content-Length: %d", size)
	if chunked {
		framing = "Transfer-Encoding: chunked"
	}
	if _, err := fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: expose.test\r\n%s\r\n\r\n", rt.method, rt.path, framing); err != nil {
		t.Fatal(err)
	}

	// The body is written while the answer is read: the server answers
	// without reading it all, and the writes then fail.
	w := &countingWriter{w: conn}
	var wg sync.WaitGroup
	wg.Go(func() {
		body := io.LimitReader(&repeatReader{pattern: pattern}, size)
		if !chunked {
			_, _ = io.Copy(w, body)
			return
		}
		cw := httputil.NewChunkedWriter(w)
		if _, err := io.Copy(cw, body); err == nil && cw.Close() == nil {
			_, _ = io.WriteString(w, "\r\n")
		}
	})
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: no answer: %v", rt.method, rt.path, err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Errorf("%s %s: reading the answer: %v", rt.method, rt.path, err)
	}
	written := w.n.Load()
	conn.Close() // ends the body's writes
	wg.Wait()
	return resp.StatusCode, body, written
}

// memoryObtained returns how much memory the process has obtained from the
// OS. The runtime seldom gives address space back, so its growth across a
// request bounds what the request cost at its peak, where the heap in use
// after a collection would miss a buffer that was freed again.
func memoryObtained() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Sys
}

// repeatReader reads pattern over and over.
type repeatReader struct {
	pattern []byte
	off     int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for n := 0; n < len(p); {
		c := copy(p[n:], r.pattern[r.off:])
		n += c
		r.off = (r.off + c) % len(r.pattern)
	}
	return len(p), nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
