package fetch

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
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
