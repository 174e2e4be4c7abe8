package fetch

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestProveIdentity proves a pprof endpoint against real servers: this
// process's own endpoint for a target this process serves, and not that
// of another process, a child serving net/http/pprof of its own.
func TestProveIdentity(t *testing.T) {
	target, err := url.Parse(serve(t, http.NotFoundHandler()).URL + "/work")
	if err != nil {
		t.Fatal(err)
	}
	own := mustEndpoint(t, serve(t, pprofMux()).URL+"/debug/pprof/", EndpointOptions{})
	if err := ProveIdentity(t.Context(), own, target); err != nil {
		t.Errorf("this process's endpoint for this process's target: %v", err)
	}

	other := mustEndpoint(t, startPprofChild(t), EndpointOptions{})
	err = ProveIdentity(t.Context(), other, target)
	if !errors.Is(err, ErrNotTarget) || !strings.Contains(err.Error(), "did not appear among its connection goroutines") ||
		!strings.Contains(err.Error(), DialAddr(target)) {
		t.Errorf("another process's endpoint: %v; want ErrNotTarget saying the connections to %s did not appear", err, DialAddr(target))
	}

	// Nothing listening at the target: a failure to observe, not a verdict.
	gone := &url.URL{Scheme: "http", Host: "127.0.0.1:1"}
	if err := ProveIdentity(t.Context(), own, gone); err == nil || errors.Is(err, ErrNotTarget) || !strings.Contains(err.Error(), "connect to 127.0.0.1:1") {
		t.Errorf("target not listening: %v; want a connection error", err)
	}
}

func TestDialAddr(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/x": "127.0.0.1:8080",
		"http://example.com/":     "example.com:80",
		"https://example.com/":    "example.com:443",
		"http://[::1]/":           "[::1]:80",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := DialAddr(u); got != want {
			t.Errorf("DialAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestIdentityRiseFromFloor: the connections of an earlier attempt, which
// a busy target accepted late and whose goroutines end just as the next
// attempt's connections are accepted, do not hide the next attempt's rise.
// The rise is judged from the level before any probe connection was
// opened. The test stages it with a real server whose accept of the next
// attempt's first connection waits until the earlier connections are closed.
func TestIdentityRiseFromFloor(t *testing.T) {
	own := mustEndpoint(t, serve(t, pprofMux()).URL+"/debug/pprof/", EndpointOptions{})
	floor, err := connGoroutines(t.Context(), own)
	if err != nil {
		t.Fatal(err)
	}

	closed := make(chan struct{}, 2*probeConns)
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	gate := &acceptGate{Listener: srv.Listener}
	srv.Listener = gate
	srv.Start()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	// The earlier attempt's connections, accepted and still served.
	var earlier []net.Conn
	for range probeConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		earlier = append(earlier, c)
	}
	if _, ok, err := waitCount(t.Context(), own, func(n int) bool { return n >= floor+probeConns }); !ok || err != nil {
		t.Fatalf("the earlier connections never appeared (%v)", err)
	}
	// They end only once the next attempt has counted its start, and its
	// connections are accepted only once the earlier ones are closed.
	gate.before.Store(func() {
		for _, c := range earlier {
			c.Close()
		}
		for range probeConns {
			<-closed
		}
	})
	ok, why, err := identityAttempt(t.Context(), own, addr, &floor)
	if err != nil || !ok {
		t.Errorf("the attempt after late connections: ok %v, %q, %v; want the proof", ok, why, err)
	}
}

// An acceptGate runs before once, in the server's accept loop, before it
// hands over the first connection accepted after before is set.
type acceptGate struct {
	net.Listener
	before atomic.Value // a func()
	once   sync.Once
}

func (g *acceptGate) Accept() (net.Conn, error) {
	c, err := g.Listener.Accept()
	if before, _ := g.before.Load().(func()); err == nil && before != nil {
		g.once.Do(before)
	}
	return c, err
}
