package cputime

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestOf: the CPU time /proc says this process used agrees with
// what getrusage says at the same moment, within the file's tick.
func TestOf(t *testing.T) {
	if _, ok := Of(1 << 30); ok {
		t.Error("CPU time read for a process that does not exist")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		used, ok := Of(os.Getpid())
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
