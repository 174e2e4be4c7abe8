//go:build !linux

package loadgen

import "net"

// A rawRoundTrip is the Linux fast path of a request/response exchange
// (rawconn_linux.go). Elsewhere there is none: newRawRoundTrip returns nil
// and every connection goes through net.Conn.
type rawRoundTrip struct{}

func newRawRoundTrip(net.Conn) *rawRoundTrip { return nil }

func (*rawRoundTrip) roundTrip(req, buf []byte) (written, read int, err error) {
	panic("loadgen: no raw round trip on this platform")
}
