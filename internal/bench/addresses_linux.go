package bench

import (
	"context"
	"os/exec"
)

// fixedAddresses returns the command that runs prog with args with the
// address space laid out the same way every time. With randomized
// addresses the Go heap's page allocator searches a different layout in
// each run, and its instructions vary by a hundred thousand a run; setarch
// -R (util-linux) turns the randomization off for the one command. Where
// setarch is missing or not allowed to (a container's seccomp profile may
// refuse it), the command runs as it is, and counts are that much less
// repeatable.
func fixedAddresses(prog string, args ...string) (string, []string) {
	setarch, err := exec.LookPath("setarch")
	if err != nil || command(context.Background(), "", setarch, "-R", "true").Run() != nil {
		return prog, args
	}
	return setarch, append([]string{"-R", prog}, args...)
}
