//go:build !linux

package bench

import "os/exec"

// ownChild leaves cmd as os/exec makes it: a cancelled ctx kills the child
// itself. Only Linux has a parent-death signal; elsewhere a child may
// outlive a perfscope that is killed outright (kill -9). Benchmarks run as
// perfscope's own children (see command), so the cancellation of an
// interrupted run reaches them.
func ownChild(cmd *exec.Cmd) {}
