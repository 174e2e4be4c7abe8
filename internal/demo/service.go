// Package demo runs perfscope's bundled example services: it starts them as
// child processes of the perfscope binary (or builds them from the module's
// source, for tests of other packages) on free loopback ports and stops
// them. The demo command and end-to-end tests use it to profile real
// services.
package demo

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ModulePath is the module the bundled examples live in.
const ModulePath = "github.com/perfscope/perfscope"

// ModuleRoot finds the perfscope source tree at or above dir: the examples
// are built from it.
func ModuleRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && modulePathOf(data) == ModulePath {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("the bundled examples are built from perfscope's source, and %s is not inside a perfscope checkout: run the demo from the cloned repository", abs)
		}
	}
}

func modulePathOf(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// Build compiles the command of the bundled example name
// (examples/NAME/cmd/NAME in the source tree at root) into dir and returns
// the binary's path.
func Build(ctx context.Context, root, name, dir string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./examples/"+name+"/cmd/"+name)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		first := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		if first == "" {
			first = err.Error()
		}
		return "", fmt.Errorf("build examples/%s: %s", name, first)
	}
	return bin, nil
}

// A Service is a running example service.
type Service struct {
	// URL is the service's base URL, such as http://127.0.0.1:41234.
	URL string
	// PprofURL is the base of its pprof endpoints, or "" when it serves none.
	PprofURL string

	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	output strings.Builder // what it printed, for error messages
}

// startupLine matches what the examples print once they serve:
// "leftpad (naive) listening on http://127.0.0.1:8080, pprof on http://127.0.0.1:6060/debug/pprof/".
var startupLine = regexp.MustCompile(`listening on (http://\S+?),\s*(?:pprof on (http://\S+)|pprof off)`)

// startTimeout bounds how long a service may take to print its startup line.
const startTimeout = 15 * time.Second

// Start runs the binary with args and waits until it prints its startup
// line. The service is stopped when ctx is done or Stop is called.
func Start(ctx context.Context, bin string, args ...string) (*Service, error) {
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &Service{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{s}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	ready := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.output.WriteString(line + "\n")
			s.mu.Unlock()
			if m := startupLine.FindStringSubmatch(line); m != nil {
				select {
				case ready <- m:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Stop()
		case <-s.done:
		}
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case m := <-ready:
		s.URL, s.PprofURL = m[1], m[2]
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("%s exited before serving: %s", filepath.Base(bin), s.lastOutput())
	case <-timer.C:
		s.Stop()
		return nil, fmt.Errorf("%s printed no startup line within %s", filepath.Base(bin), startTimeout)
	case <-ctx.Done():
		s.Stop()
		return nil, ctx.Err()
	}
}

// Stop asks the service to shut down (SIGINT) and kills it if it has not
// exited within a few seconds. It is safe to call more than once.
func (s *Service) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Exited reports whether the service has stopped.
func (s *Service) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *Service) lastOutput() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := strings.TrimSpace(s.output.String())
	if out == "" {
		return "no output"
	}
	lines := strings.Split(out, "\n")
	return lines[len(lines)-1]
}

type lockedWriter struct{ s *Service }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.output.Write(p)
}
