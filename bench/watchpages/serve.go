package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	dashboard "github.com/perfscope/perfscope/internal/server"
	"github.com/perfscope/perfscope/internal/store"
)

// A server is the dashboard measured: its address and how to stop it.
type server struct {
	url  string
	pid  int // the process serving, whose CPU time is read
	stop func()
}

// serve builds perfscope from this module and starts "perfscope serve" on
// the store at dsn, on a free loopback port.
func serve(ctx context.Context, tmp, dsn string) (*server, error) {
	bin := filepath.Join(tmp, "perfscope")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/perfscope")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build perfscope: %w", err)
	}
	cmd := exec.CommandContext(ctx, bin, "serve", "--db", dsn, "--addr", "127.0.0.1:0", "--data", filepath.Join(tmp, "runs"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "perfscope dashboard on "); ok {
				urls <- strings.Fields(rest)[0]
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			stop()
			return nil, fmt.Errorf("perfscope serve stopped before it listened")
		}
		return &server{url: u, pid: cmd.Process.Pid, stop: stop}, nil
	case <-time.After(2 * time.Minute):
		stop()
		return nil, fmt.Errorf("perfscope serve did not listen within 2 minutes")
	}
}

// serveHere serves the dashboard in this process, as perfscope serve makes
// it, and profiles its CPU into file until stopped; each request runs
// under the label page=X-Page.
func serveHere(ctx context.Context, tmp, dsn, file string) (*server, error) {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	s, err := dashboard.New(dashboard.Config{Store: st, DataDir: filepath.Join(tmp, "runs"), Logf: func(string, ...any) {}})
	if err != nil {
		st.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		return nil, err
	}
	h := s.Handler()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pprof.Do(r.Context(), pprof.Labels("page", r.Header.Get("X-Page")), func(ctx context.Context) {
			h.ServeHTTP(w, r.WithContext(ctx))
		})
	})}
	f, err := os.Create(file)
	if err != nil {
		st.Close()
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		st.Close()
		return nil, err
	}
	go hs.Serve(ln)
	return &server{url: "http://" + ln.Addr().String(), pid: os.Getpid(), stop: func() {
		hs.Close()
		pprof.StopCPUProfile()
		f.Close()
		st.Close()
		fmt.Printf("CPU profile of the requests in %s (go tool pprof -tagfocus page=NAME)\n", file)
	}}, nil
}
