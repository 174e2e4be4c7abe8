//go:build unix

package fetch

import (
	"net"
	"net/url"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestIdentityThroughAStall: a target stopped for longer than the wait,
// with the probe connections opened while it is stopped, still shows them
// once it runs again. The profile that ends the wait may be taken before
// the resumed process has accepted them; the looks after the wait see
// them. The target is a real child process, stopped with SIGSTOP.
func TestIdentityThroughAStall(t *testing.T) {
	if testing.Short() {
		t.Skip("waits through a stopped process")
	}
	var child *exec.Cmd
	base := startPprofChildCmd(t, &child)
	e := mustEndpoint(t, base, EndpointOptions{})
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	floor, err := connGoroutines(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resume := time.AfterFunc(identityWait+500*time.Millisecond, func() { child.Process.Signal(syscall.SIGCONT) })
	t.Cleanup(func() {
		resume.Stop()
		child.Process.Signal(syscall.SIGCONT)
	})
	for range probeConns {
		c, err := net.Dial("tcp", DialAddr(target))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	n, rose, err := waitCount(t.Context(), e, func(n int) bool { return n >= floor+probeConns })
	if err != nil || !rose {
		t.Errorf("after the stall: %d connection goroutines, %d before the probe (rose %v, %v); want the probe's %d among them",
			n, floor, rose, err, probeConns)
	}
}
