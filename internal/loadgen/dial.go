package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// A dialer opens connections to a target. It resolves the host name once,
// so a run without keep-alive does not pay for a lookup per request, and it
// remembers which of the host's addresses answered.
type dialer struct {
	addrs     []string // ip:port, in resolver order
	preferred atomic.Int32
	net       net.Dialer
	tls       *tls.Config // nil for http
	timeout   time.Duration
}

// A TargetError says in one line why the target cannot be reached, and
// what to check.
type TargetError struct {
	URL    string
	Reason string
	Err    error
}

func (e *TargetError) Error() string { return "cannot reach " + e.URL + ": " + e.Reason }
func (e *TargetError) Unwrap() error { return e.Err }

func newDialer(ctx context.Context, t target, timeout time.Duration, insecure bool) (*dialer, error) {
	d := &dialer{timeout: timeout, net: net.Dialer{Timeout: timeout}}
	if t.tls {
		d.tls = &tls.Config{
			ServerName: t.hostname,
			// Only HTTP/1.1: the response reader speaks nothing else.
			NextProtos:         []string{"http/1.1"},
			InsecureSkipVerify: insecure, //nolint:gosec // the user asked for it with --insecure
		}
	}
	if net.ParseIP(t.hostname) != nil {
		d.addrs = []string{t.addr()}
		return d, nil
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(rctx, t.hostname)
	if err != nil {
		return nil, &TargetError{URL: t.url, Reason: fmt.Sprintf("cannot resolve host %q — is the name right?", t.hostname), Err: err}
	}
	for _, ip := range ips {
		d.addrs = append(d.addrs, net.JoinHostPort(ip.IP.String(), t.port))
	}
	return d, nil
}

// dial connects to the first of the target's addresses that answers,
// starting with the one that answered last time.
func (d *dialer) dial(ctx context.Context) (net.Conn, error) {
	p := int(d.preferred.Load())
	var first error
	for i := range d.addrs {
		j := (p + i) % len(d.addrs)
		c, err := d.net.DialContext(ctx, "tcp", d.addrs[j])
		if err != nil {
			if first == nil {
				first = err
			}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if j != p {
			d.preferred.Store(int32(j))
		}
		if d.tls == nil {
			return c, nil
		}
		tc := tls.Client(c, d.tls)
		_ = c.SetDeadline(time.Now().Add(d.timeout))
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		_ = c.SetDeadline(time.Time{})
		return tc, nil
	}
	return nil, first
}

// checkTimeout bounds Check: a service that is up accepts a connection in
// far less, whatever the per-request timeout.
const checkTimeout = 5 * time.Second

// Check connects to cfg.URL once, without sending a request, so that an
// unreachable target is reported in one line before any load starts.
// It returns a *TargetError when the target cannot be reached and a plain
// error when cfg itself is invalid.
func Check(ctx context.Context, cfg Config) error {
	c, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	t, err := parseTarget(c.URL)
	if err != nil {
		return err
	}
	timeout := min(c.Timeout, checkTimeout)
	d, err := newDialer(ctx, t, timeout, c.InsecureSkipVerify)
	if err != nil {
		return err
	}
	conn, err := d.dial(ctx)
	if err != nil {
		return &TargetError{URL: t.url, Reason: reachReason(err, timeout), Err: err}
	}
	return conn.Close()
}

// reachReason says in words why a connection failed.
func reachReason(err error, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused — is the service running?"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s — is the address right and the port open?", timeout)
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "network unreachable — is the address right?"
	}
	return err.Error()
}
