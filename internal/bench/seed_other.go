//go:build !linux

package bench

import "os/exec"

// runWithFixedSeed runs the command newCmd returns as it is: rewriting the
// random bytes a new program is handed needs Linux's process tracing.
func runWithFixedSeed(newCmd func() *exec.Cmd, last string, started func(pid int)) (ok bool, err error) {
	return false, runStarted(newCmd(), started)
}
