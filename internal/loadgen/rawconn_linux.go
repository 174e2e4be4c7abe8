//go:build linux

package loadgen

import (
	"net"
	"syscall"
	"unsafe"
)

// A rawRoundTrip sends a request and reads the first bytes of its response
// on a plain TCP connection with one system call fewer than net.Conn needs.
//
// net.Conn's Read tries the read first and waits for readability only after
// it fails with EAGAIN, which on a request/response connection it always
// does: the response cannot have arrived before the request left. Here the
// write happens inside RawConn.Read's callback, after the poller has been
// armed, so the callback can go straight to waiting, and the one read it
// then makes finds the response. At tens of thousands of requests a second
// the saved call is a measurable share of the generator's CPU, which on a
// machine it shares with the server is throughput the server loses.
type rawRoundTrip struct {
	rc syscall.RawConn

	// The callback's inputs and outputs live here rather than in a closure
	// so that a round trip allocates nothing.
	req     []byte
	buf     []byte
	written int
	read    int
	err     error
	fn      func(fd uintptr) bool
}

func newRawRoundTrip(c net.Conn) *rawRoundTrip {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	rt := &rawRoundTrip{rc: rc}
	rt.fn = rt.step
	return rt
}

// roundTrip writes req and reads into buf. written < len(req) means the
// socket took only part of the request (a large body): the caller writes
// the rest the ordinary way and reads the response with net.Conn.
func (rt *rawRoundTrip) roundTrip(req, buf []byte) (written, read int, err error) {
	rt.req, rt.buf, rt.written, rt.read, rt.err = req, buf, -1, 0, nil
	if err := rt.rc.Read(rt.fn); err != nil {
		rt.err = err // a deadline set by run.killOverdue or run.abortAll
	}
	rt.req, rt.buf = nil, nil
	return max(rt.written, 0), rt.read, rt.err
}

func (rt *rawRoundTrip) step(fd uintptr) bool {
	if rt.written < 0 {
		n, errno := sendNoSignal(fd, rt.req)
		if errno != 0 {
			rt.written, rt.err = 0, errno
			return true
		}
		rt.written = n
		// Wait for the response unless the request did not fit.
		return n < len(rt.req)
	}
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&rt.buf[0])), uintptr(len(rt.buf)))
		switch errno {
		case 0:
			rt.read = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // woken early: wait again
		}
		rt.err = errno
		return true
	}
}

// sendNoSignal writes b without raising SIGPIPE on a connection the peer
// has closed. The socket is non-blocking, so the call never blocks and
// needs none of the scheduler hand-off a blocking system call gets.
func sendNoSignal(fd uintptr, b []byte) (int, syscall.Errno) {
	for {
		n, _, errno := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
			syscall.MSG_NOSIGNAL, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno == syscall.EAGAIN {
			return 0, 0
		}
		return int(n), errno
	}
}
