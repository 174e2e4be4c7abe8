package bench

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"
)

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
