package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// fixedSeed is what a counted run finds where Linux hands a new program
// its 16 random bytes (the auxiliary vector's AT_RANDOM entry). The Go
// runtime seeds everything random from them: map and sync.Map hash seeds,
// the order a select tries its cases, timer and scheduler choices. A map
// lookup walks a longer or shorter probe sequence depending on the seed, so
// the same code's instructions/op otherwise differ from process to
// process: encoding/json's type cache alone moved by half a million
// instructions a run. Any bytes do, as long as they are the same every
// time and not all zero (the runtime ignores zeros).
var fixedSeed = [16]byte{'p', 'e', 'r', 'f', 's', 'c', 'o', 'p', 'e', ' ', 's', 'e', 'e', 'd', ' ', '1'}

// atRandom is the auxiliary vector's tag for the address of the 16 random
// bytes.
const atRandom = 25

// ptraceRefused records that this system does not let perfscope trace its
// own child (a container's seccomp profile, say); counts then run with
// whatever bytes the kernel hands out.
var ptraceRefused atomic.Bool

// runWithFixedSeed starts the command newCmd returns and waits for it. Each
// program it execs, up to and including the first whose executable's name
// begins with last (valgrind's tool, which loads the counted program
// itself and hands it its own random bytes), starts with fixedSeed as its
// random bytes: perfscope traces the child from its first exec until that
// one and rewrites the bytes at each exec. Where tracing is refused, the
// command runs untraced. ok reports whether the seed was fixed. started,
// when not nil, is told the child's process id once it runs.
func runWithFixedSeed(newCmd func() *exec.Cmd, last string, started func(pid int)) (ok bool, err error) {
	if ptraceRefused.Load() {
		return false, runStarted(newCmd(), started)
	}
	// Every tracing request must come from the thread that started the
	// child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := newCmd()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) {
			ptraceRefused.Store(true)
			return false, runStarted(newCmd(), started)
		}
		return false, err
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	ok, err = seedExecs(cmd.Process.Pid, last)
	if werr := cmd.Wait(); err == nil {
		err = werr
	}
	return ok, err
}

// seedExecs follows the traced child pid through its execs, writes
// fixedSeed over each new program's random bytes and lets go of the child
// after the exec of last. An error means the child ended while traced (it
// has been reaped, so its exit status is in the error) or could not be
// followed (it has been killed).
func seedExecs(pid int, last string) (ok bool, err error) {
	const maxExecs = 8 // setarch, valgrind's wrapper script, valgrind, its tool
	for execs := 0; ; {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			syscall.Kill(pid, syscall.SIGKILL)
			return false, fmt.Errorf("follow the counted process: %w", err)
		}
		switch {
		case ws.Exited():
			return false, fmt.Errorf("exit status %d", ws.ExitStatus())
		case ws.Signaled():
			return false, fmt.Errorf("signal: %v", ws.Signal())
		case !ws.Stopped():
			continue
		}
		// The first stop follows the first exec; later execs report
		// PTRACE_EVENT_EXEC. Any other stop is a signal for the child.
		if ws.StopSignal() != syscall.SIGTRAP || (execs > 0 && ws.TrapCause() != syscall.PTRACE_EVENT_EXEC) {
			if err := syscall.PtraceCont(pid, int(ws.StopSignal())); err != nil {
				syscall.Kill(pid, syscall.SIGKILL)
				return false, fmt.Errorf("follow the counted process: %w", err)
			}
			continue
		}
		if execs == 0 {
			if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXEC); err != nil {
				syscall.Kill(pid, syscall.SIGKILL)
				return false, fmt.Errorf("follow the counted process: %w", err)
			}
		}
		execs++
		seeded := writeSeed(pid) == nil
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if reached := strings.HasPrefix(filepath.Base(exe), last); reached || execs >= maxExecs {
			if err := syscall.PtraceDetach(pid); err != nil {
				syscall.Kill(pid, syscall.SIGKILL)
				return false, fmt.Errorf("follow the counted process: %w", err)
			}
			return reached && seeded, nil
		}
		if err := syscall.PtraceCont(pid, 0); err != nil {
			syscall.Kill(pid, syscall.SIGKILL)
			return false, fmt.Errorf("follow the counted process: %w", err)
		}
	}
}

// writeSeed overwrites the random bytes of the program the stopped,
// traced process pid has just exec'd.
func writeSeed(pid int) error {
	auxv, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return err
	}
	addr, err := auxvValue(auxv, atRandom)
	if err != nil {
		return err
	}
	_, err = syscall.PtracePokeData(pid, uintptr(addr), fixedSeed[:])
	return err
}

// auxvValue returns the value of tag in an auxiliary vector as
// /proc/PID/auxv holds it: pairs of native words, ended by a zero tag.
func auxvValue(auxv []byte, tag uint64) (uint64, error) {
	word := int(unsafe.Sizeof(uintptr(0)))
	read := func(b []byte) uint64 {
		if word == 4 {
			return uint64(binary.NativeEndian.Uint32(b))
		}
		return binary.NativeEndian.Uint64(b)
	}
	for i := 0; i+2*word <= len(auxv); i += 2 * word {
		t := read(auxv[i:])
		if t == 0 {
			break
		}
		if t == tag {
			return read(auxv[i+word:]), nil
		}
	}
	return 0, fmt.Errorf("auxiliary vector has no entry %d", tag)
}
