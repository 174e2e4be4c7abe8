package bench

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ownChild makes cmd's process die with perfscope, and its cancellation
// kill every process it started.
//
// The child is sent SIGKILL when perfscope dies, however it dies (kill -9
// included): Linux's parent-death signal (Pdeathsig), which survives the
// child's execs. Linux sends it when the thread that started the child
// ends, not the process (golang/go#27505), and the Go runtime ends a thread
// only when a goroutine locked to it (runtime.LockOSThread) returns without
// unlocking it. Every child here is started and waited for by the same
// goroutine, which either is not locked to its thread, whose thread then
// lives as long as perfscope, or is locked (runWithFixedSeed, to trace the
// child) and unlocks before it returns, after the wait: the thread outlives
// the child in both cases.
//
// The child also leads a process group of its own (Setpgid), and a
// cancelled ctx kills the whole group: what the child starts (the compiler
// under "go test -c", the program under valgrind's wrapper) goes with it.
// A process perfscope did not start itself gets no parent-death signal,
// which is why benchmarks run as perfscope's own children (see command).
// Being out of the terminal's process group, the children do not get the
// terminal's Ctrl-C themselves: perfscope does, cancels, and kills them.
func ownChild(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.Cancel = func() error {
		// The group's id is its leader's process id.
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}
