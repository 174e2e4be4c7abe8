package bench

import (
	"context"
	"os/exec"
	"time"
)

// command returns the command that runs name with args in dir (the
// current directory when empty) as a child that does not outlive
// perfscope: ctx's cancellation ends it with everything it started, and
// where the system allows, so does perfscope's own death (see ownChild).
// Every process this package starts is made here.
//
// Benchmarks run as test binaries built with "go test -c" and started
// directly, never under "go test": the go command runs a test binary as
// its own child, which a signal to the go command does not reach, so
// killing "go test" would leave the benchmark running.
func command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	// Output still copied from a killed child's pipes (a grandchild
	// holding them open) is not waited for longer than this.
	cmd.WaitDelay = 5 * time.Second
	ownChild(cmd)
	return cmd
}

// runStarted runs cmd and waits for it, telling started (when not nil) the
// process id once it runs.
func runStarted(cmd *exec.Cmd, started func(pid int)) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	return cmd.Wait()
}
