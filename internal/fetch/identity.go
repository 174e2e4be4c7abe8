package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// The identity proof: a pprof endpoint is trusted only once it has shown
// that it belongs to the process that accepts the target's connections.
//
// perfscope opens probeConns idle TCP connections to the target's address
// and watches the endpoint's goroutine profile. A Go server starts one
// goroutine per accepted connection (net/http's (*conn).serve), which waits
// there for a request, so the profile of the target's own process gains
// probeConns such goroutines, and loses them again once the connections
// close. Another process's profile does not follow the connections: both the
// rise and the fall must be seen. Neither needs the target's cooperation nor
// any request, so it works with plain net/http/pprof before any load.
//
// Limits: a proxy or load balancer between perfscope and the process opens
// no backend connection for an idle client connection, so the proof fails
// there (the caller's way out is to trust the endpoint unproven, and say
// so); a server that caps its connections and is at its cap, or one that
// does not give each connection its own goroutine, cannot show the rise
// either.

// probeConns is how many idle connections the proof opens: enough that
// the target's ordinary connection churn is unlikely to imitate the rise
// and fall, few enough to fit any server's connection limit.
const probeConns = 8

// Bounds of the proof's waits: a server accepts and starts a goroutine
// for a connection in microseconds, and sees it closed as fast; these
// leave room for a busy machine.
const (
	identityWait = 5 * time.Second
	identityPoll = 25 * time.Millisecond
	// lateLooks is how many profiles a wait still asks for once
	// identityWait has passed (see waitCount).
	lateLooks = 2
)

// serveFunc is the function at the bottom of every connection goroutine of
// a net/http server.
const serveFunc = "net/http.(*conn).serve"

// ErrNotTarget reports a pprof endpoint that did not prove it belongs to
// the target's process.
var ErrNotTarget = errors.New("the pprof endpoint does not belong to the target's process")

// ProveIdentity checks that the endpoint e serves the profiles of the
// process listening at the target's address (the host and port of target,
// a URL the process serves). It takes a few goroutine profiles and, when
// the proof fails, up to 4 times identityWait (5s) and a few profiles
// more. The error wraps ErrNotTarget, its message saying what each attempt
// saw, when the endpoint answered but did not follow the probe
// connections; any other error is a failure to observe at all (an *Error,
// or a failed connection to the target).
func ProveIdentity(ctx context.Context, e *Endpoint, target *url.URL) error {
	addr := DialAddr(target)
	// floor is the fewest connection goroutines seen before a probe
	// connection was opened, -1 until seen. Each rise is judged from it,
	// not from the count at the start of its own attempt: that count can
	// hold the previous attempt's connections, which a slow server accepts
	// late and whose goroutines end just as this attempt's start, hiding
	// their rise.
	floor := -1
	var seen []string
	// Twice: a burst of the target's own connections closing, or a server
	// too busy to accept within the wait, can hide the first rise.
	for range 2 {
		ok, why, err := identityAttempt(ctx, e, addr, &floor)
		if err != nil || ok {
			return err
		}
		seen = append(seen, why)
	}
	if seen[1] == seen[0] {
		seen = seen[:1]
	}
	return notTargetError{why: strings.Join(seen, "; then ")}
}

// A notTargetError is a failed proof: the endpoint answered but did not
// follow the probe connections; why says what was seen.
type notTargetError struct{ why string }

func (e notTargetError) Error() string        { return e.why }
func (e notTargetError) Is(target error) bool { return target == ErrNotTarget }

// identityAttempt makes one rise-and-fall observation, the rise judged
// from *floor (see ProveIdentity), which it lowers to the count it starts
// from when that is lower. ok reports the proof; why says what was seen
// when it failed; err is a failure to observe at all.
func identityAttempt(ctx context.Context, e *Endpoint, addr string, floor *int) (ok bool, why string, err error) {
	base, err := connGoroutines(ctx, e)
	if err != nil {
		return false, "", err
	}
	if *floor < 0 || base < *floor {
		*floor = base
	}
	conns := make([]net.Conn, 0, probeConns)
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
		conns = nil
	}
	defer func() { closeAll() }()
	d := net.Dialer{Timeout: identityWait}
	for range probeConns {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return false, "", fmt.Errorf("prove the pprof endpoint is the target's: connect to %s: %w", addr, err)
		}
		conns = append(conns, c)
	}
	peak, rose, err := waitCount(ctx, e, func(n int) bool { return n >= *floor+probeConns })
	if err != nil {
		return false, "", err
	}
	if !rose {
		return false, fmt.Sprintf("%d connections opened to %s did not appear among its connection goroutines (%d before, %d after)",
			probeConns, addr, *floor, peak), nil
	}
	closeAll()
	low, fell, err := waitCount(ctx, e, func(n int) bool { return n <= peak-probeConns })
	if err != nil {
		return false, "", err
	}
	if !fell {
		return false, fmt.Sprintf("its connection goroutines did not fall when %d connections to %s closed (%d with them open, %d after)",
			probeConns, addr, peak, low), nil
	}
	return true, "", nil
}

// waitCount polls the endpoint's connection goroutines until done accepts
// the count, or identityWait has passed and lateLooks profiles asked for
// after it have not either; it returns the last count seen. The looks
// after the wait are for a target that stalled through it (a busy
// machine): the profile that ends the wait may have been taken before the
// stalled process got to its new connections.
func waitCount(ctx context.Context, e *Endpoint, done func(int) bool) (int, bool, error) {
	deadline := time.Now().Add(identityWait)
	late := 0
	for {
		if time.Now().After(deadline) {
			late++
		}
		n, err := connGoroutines(ctx, e)
		if err != nil {
			return n, false, err
		}
		if done(n) {
			return n, true, nil
		}
		if late >= lateLooks {
			return n, false, nil
		}
		select {
		case <-time.After(identityPoll):
		case <-ctx.Done():
			return n, false, ctx.Err()
		}
	}
}

// connGoroutines counts the goroutines serving a connection in the
// endpoint's process: those under net/http's connection loop when the
// process has any (a net/http/pprof endpoint always has its own), else all
// goroutines, for servers built on another HTTP stack.
func connGoroutines(ctx context.Context, e *Endpoint) (int, error) {
	snap, err := e.Goroutines(ctx)
	if err != nil {
		return 0, err
	}
	return countConnGoroutines(snap.Profile), nil
}

func countConnGoroutines(p *profile.Profile) int {
	var serving, all int64
	for _, s := range p.Sample {
		if len(s.Value) == 0 {
			continue
		}
		all += s.Value[0]
		if hasFunction(s, serveFunc) {
			serving += s.Value[0]
		}
	}
	if serving > 0 {
		return int(serving)
	}
	return int(all)
}

func hasFunction(s *profile.Sample, name string) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil && l.Function.Name == name {
				return true
			}
		}
	}
	return false
}

// DialAddr is the host:port a client of target connects to.
func DialAddr(target *url.URL) string {
	port := target.Port()
	if port == "" {
		port = "80"
		if target.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(target.Hostname(), port)
}
