//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A process is a command started in a process group of its own, its
// standard output and error read line by line as they come, together and
// the output alone.
type process struct {
	cmd     *exec.Cmd
	mu      sync.Mutex
	out     strings.Builder // both
	stdout  strings.Builder
	changed chan struct{} // a line arrived or the output ended
	eof     chan struct{} // closed when the output ended
	exited  chan struct{} // closed when the process was waited for
	code    int
	waitErr error
}

// startProcess starts cmd; the context of a command made by
// exec.CommandContext bounds it, killing its whole group. It ends with the
// test at the latest.
func startProcess(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{cmd: cmd, changed: make(chan struct{}, 1), eof: make(chan struct{}), exited: make(chan struct{})}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cmd.Cancel != nil { // made by exec.CommandContext
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 10 * time.Second
	}
	var readers sync.WaitGroup
	for _, dst := range []*io.Writer{&cmd.Stdout, &cmd.Stderr} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		*dst = w
		defer w.Close() // the child has its copy once started
		readers.Go(func() {
			defer r.Close()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				p.mu.Lock()
				p.out.WriteString(sc.Text() + "\n")
				if dst == &cmd.Stdout {
					p.stdout.WriteString(sc.Text() + "\n")
				}
				p.mu.Unlock()
				select {
				case p.changed <- struct{}{}:
				default:
				}
			}
		})
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd, err)
	}
	go func() {
		readers.Wait()
		close(p.eof)
	}()
	go func() {
		err := cmd.Wait()
		<-p.eof
		p.waitErr, p.code = err, cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-p.exited
		}
	})
	return p
}

// output returns what the process wrote so far.
func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// standardOutput returns what the process wrote to its standard output so
// far.
func (p *process) standardOutput() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String()
}

// waitFor waits until the output matches re and returns the match; it
// fails when the process ends first or ctx is done.
func (p *process) waitFor(ctx context.Context, re *regexp.Regexp) ([]string, error) {
	for {
		if m := re.FindStringSubmatch(p.output()); m != nil {
			return m, nil
		}
		select {
		case <-p.changed:
		case <-p.exited:
			if m := re.FindStringSubmatch(p.output()); m != nil {
				return m, nil
			}
			return nil, fmt.Errorf("exited (status %d) before its output matched %q", p.code, re)
		case <-ctx.Done():
			return nil, fmt.Errorf("output did not match %q: %w", re, ctx.Err())
		}
	}
}

// wait waits for the process to end and returns its exit status: -1 when
// a signal ended it.
func (p *process) wait(ctx context.Context) (int, error) {
	select {
	case <-p.exited:
		return p.code, nil
	case <-ctx.Done():
		return -1, fmt.Errorf("still running: %w", ctx.Err())
	}
}

// interrupt sends SIGINT to the process's group, as Ctrl-C in a terminal
// does, and waits for it to end.
func (p *process) interrupt(ctx context.Context) (int, error) {
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
		return -1, err
	}
	return p.wait(ctx)
}
