package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestProcessCPU: the CPU time /proc says this process used agrees with
// what getrusage says at the same moment, within the file's tick.
func TestProcessCPU(t *testing.T) {
	if _, ok := processCPU(1 << 30); ok {
		t.Error("CPU time read for a process that does not exist")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		used, ok := processCPU(os.Getpid())
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatal("no CPU time read for this process")
		}
		rusage := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if d := rusage - used; d < -20*time.Millisecond || d > 100*time.Millisecond {
			t.Fatalf("/proc says %v of CPU, getrusage %v", used, rusage)
		}
		if used >= 200*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v of CPU after a minute of computing", used)
		}
		for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		}
	}
}

// TestLimitCPU: a child that computes is stopped once it used its CPU
// time, however long that takes on a busy machine; a child that waits as
// long is not.
func TestLimitCPU(t *testing.T) {
	run := func(script string, limit time.Duration) (error, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		ctx, stop := context.WithTimeout(ctx, 2*time.Minute)
		defer stop()
		cmd := command(ctx, "", "sh", "-c", script)
		began := time.Now()
		err := runStarted(cmd, func(pid int) { go limitCPU(ctx, pid, limit, cancel) })
		if err == nil {
			return nil, time.Since(began)
		}
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.DeadlineExceeded) {
			return cause, time.Since(began)
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return err, time.Since(began)
	}
	if err, took := run("while :; do :; done", 300*time.Millisecond); !errors.Is(err, errCPUTime) {
		t.Errorf("a child computing without end: %v after %v, want its CPU time to run out", err, took)
	}
	if err, took := run("sleep 2", 300*time.Millisecond); err != nil {
		t.Errorf("a child waiting 2 s with 300ms of CPU allowed: %v after %v, want it to end on its own", err, took)
	}
}
