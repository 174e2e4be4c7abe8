//go:build linux

// Package scripts holds the tests of the project's shell scripts, which
// the test command runs with the Go tests.
package scripts

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/testenv"
)

// dpkgLock is the lock every apt-get and dpkg that installs takes first.
const dpkgLock = "/var/lib/dpkg/lock-frontend"

// TestAptWaitsForLocks holds the locks another install holds — the package
// lists' and dpkg's — and runs apt.sh's apt_install, as scripts/test.sh
// does, against them: it must wait for each instead of failing with "Could
// not get lock", and succeed once they are released.
//
// apt-get gets a configuration of its own: package lists, cache and state
// in a temporary directory and no sources, so nothing is downloaded and
// the machine's lists are left alone; the dpkg database and its lock are
// the machine's. The package installed, bash, is installed already, and
// with no sources there is no newer version of it: nothing changes.
func TestAptWaitsForLocks(t *testing.T) {
	if os.Geteuid() != 0 {
		// scripts/test.sh uses sudo there; the test cannot take dpkg's
		// lock. Where the test command requires its tools, that fails.
		testenv.Missing(t, "holding dpkg's lock needs root", "run the tests as root, as CI does")
	}
	testenv.Tool(t, "apt-get", "run the tests on Debian, where scripts/test.sh installs with apt-get")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	dir := t.TempDir()
	for _, d := range []string{"state", "lists/partial", "cache/archives/partial", "sources.list.d"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "sources.list"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "apt.conf")
	err := os.WriteFile(conf, []byte(strings.NewReplacer("DIR", dir).Replace(`Dir::State "DIR/state";
Dir::State::status "/var/lib/dpkg/status";
Dir::State::Lists "DIR/lists";
Dir::Cache "DIR/cache";
Dir::Etc::sourcelist "DIR/sources.list";
Dir::Etc::sourceparts "DIR/sources.list.d";
`)), 0o644)
	if err != nil {
		t.Fatal(err)
	}

	releaseLists := holdLock(ctx, t, filepath.Join(dir, "lists", "lock"))
	releaseDpkg := holdLock(ctx, t, dpkgLock)

	cmd := exec.CommandContext(ctx, "bash", "-c", "source ./apt.sh && apt_install bash")
	cmd.Env = append(os.Environ(), "APT_CONFIG="+conf, "PERFSCOPE_APT_LOCK_TIMEOUT=120")
	// A test that ends early stops apt-get too, not only bash.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := newLineLog(stderr)
	done := make(chan error, 1)
	go func() {
		log.wait()
		done <- cmd.Wait()
	}()
	failed := func(stage string, err error) {
		t.Helper()
		t.Fatalf("apt_install ended (%v) %s; its stderr:\n%s", err, stage, log.String())
	}
	waitLine := func(line, what string) {
		t.Helper()
		select {
		case <-log.seen(line):
		case err := <-done:
			failed("before it "+what, err)
		case <-ctx.Done():
			t.Fatalf("apt_install did not say it %s (%q); its stderr:\n%s", what, line, log.String())
		}
	}

	// The package lists' lock: apt.sh retries apt-get update, and says so.
	waitLine("apt-get update: waiting for another apt-get to release its lock", "waits for the package lists' lock")
	releaseLists()

	// dpkg's lock: apt-get install waits silently. It is still waiting
	// a while after it started, where one that does not wait fails
	// within a fraction of a second.
	waitLine("installing bash", "starts apt-get install")
	select {
	case err := <-done:
		failed("while dpkg's lock was held", err)
	case <-time.After(3 * time.Second):
	}
	releaseDpkg()

	select {
	case err := <-done:
		if err != nil {
			failed("after the locks were released", err)
		}
	case <-ctx.Done():
		t.Fatalf("apt_install did not finish after the locks were released; its stderr:\n%s", log.String())
	}
}

// holdLock takes the lock apt takes on path (fcntl, whole file) and
// returns its release, which the test's cleanup calls too. A lock another
// install holds is waited for, boundedly.
func holdLock(ctx context.Context, t *testing.T, path string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	for {
		err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EACCES) {
			f.Close()
			t.Fatalf("lock %s: %v", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			t.Fatalf("%s stayed locked by another install for as long as the test may run", path)
		case <-time.After(500 * time.Millisecond):
		}
	}
	var once sync.Once
	release = func() { once.Do(func() { f.Close() }) } // closing drops the lock
	t.Cleanup(release)
	return release
}

// A lineLog collects a stream's lines and tells when one is read.
type lineLog struct {
	mu     sync.Mutex
	lines  []string
	waits  map[string]chan struct{}
	closed chan struct{}
}

func newLineLog(r io.Reader) *lineLog {
	l := &lineLog{waits: map[string]chan struct{}{}, closed: make(chan struct{})}
	go func() {
		defer close(l.closed)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, sc.Text())
			if ch, ok := l.waits[sc.Text()]; ok {
				close(ch)
				delete(l.waits, sc.Text())
			}
			l.mu.Unlock()
		}
	}()
	return l
}

// seen returns a channel closed once line is read.
func (l *lineLog) seen(line string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if slices.Contains(l.lines, line) {
		close(ch)
		return ch
	}
	l.waits[line] = ch
	return ch
}

// wait returns once the stream has ended.
func (l *lineLog) wait() { <-l.closed }

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
