package fetch

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// pprofChildEnv makes the test binary, re-executed, a process of its own
// serving net/http/pprof: a pprof endpoint that is not this process's.
const pprofChildEnv = "PERFSCOPE_FETCH_TEST_PPROF"

func TestMain(m *testing.M) {
	if os.Getenv(pprofChildEnv) != "" {
		servePprofChild()
		return
	}
	os.Exit(m.Run())
}

// servePprofChild serves net/http/pprof on loopback, prints its base URL
// and serves until its stdin closes.
func servePprofChild() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pprof child:", err)
		os.Exit(2)
	}
	go http.Serve(ln, pprofMux())
	fmt.Printf("http://%s/debug/pprof/\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// startPprofChild starts a child serving pprof and returns its base URL;
// the child ends with the test.
func startPprofChild(t *testing.T) string {
	t.Helper()
	return startPprofChildCmd(t, nil)
}

// startPprofChildCmd is startPprofChild that also sets *child, when child
// is not nil, to the child's command.
func startPprofChildCmd(t *testing.T, child **exec.Cmd) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), pprofChildEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if child != nil {
		*child = cmd
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	var base string
	if _, err := fmt.Fscanln(bufio.NewReader(stdout), &base); err != nil {
		t.Fatalf("start pprof child: %v", err)
	}
	return base
}

// pprofMux serves net/http/pprof under /debug/pprof/, as a service does.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	return mux
}

// serve starts an HTTP server on a free loopback port, closed when the
// test ends.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// mustEndpoint returns the endpoint at base, failing the test otherwise.
func mustEndpoint(t *testing.T, base string, opts EndpointOptions) *Endpoint {
	t.Helper()
	e, err := NewEndpoint(base, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// hasFunctionSuffix reports whether a sample's stack holds a function
// whose name ends in suffix.
func hasFunctionSuffix(samples []*profile.Sample, suffix string) bool {
	for _, s := range samples {
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if l.Function != nil && strings.HasSuffix(l.Function.Name, suffix) {
					return true
				}
			}
		}
	}
	return false
}
