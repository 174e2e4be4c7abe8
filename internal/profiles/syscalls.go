package profiles

import (
	"cmp"
	"slices"

	"github.com/google/pprof/profile"
)

// SyscallFunctions returns the functions that enter the kernel, in the
// notation of MatchFunction. A CPU sample whose innermost frame is one of
// them was taken while the kernel worked for the program: a system call.
//
//   - the syscall package's entry points, which the standard library's
//     file and network I/O goes through (syscall.Syscall, RawSyscall6, ...),
//     and the runtime's own wrappers they call (internal/runtime/syscall,
//     runtime/internal/syscall before Go 1.23);
//   - the runtime's own system calls on Linux: runtime.futex (parking and
//     waking threads), runtime.madvise, runtime.sysMmap and
//     runtime.sysMunmap (memory), runtime.usleep and runtime.osyield (the
//     scheduler's naps), runtime.write1 and runtime.read (its own I/O),
//     signal and timer calls;
//   - the trampolines to libc's system calls on macOS (runtime.syscall*,
//     runtime.kevent).
//
// Reading the clock (runtime.nanotime1, runtime.walltime) goes through the
// vDSO without entering the kernel, so it is not a system call here.
func SyscallFunctions() []string {
	return []string{
		"syscall.Syscall", "syscall.Syscall6", "syscall.Syscall9", "syscall.SyscallN",
		"syscall.RawSyscall", "syscall.RawSyscall6", "syscall.RawSyscallNoError",
		"syscall.rawSyscallNoError", "syscall.rawVforkSyscall",
		"syscall.syscall", "syscall.syscall6", "syscall.syscall6X", "syscall.rawSyscall", "syscall.rawSyscall6",
		"internal/runtime/syscall*", "runtime/internal/syscall*",
		"runtime.futex", "runtime.madvise", "runtime.sysMmap", "runtime.sysMunmap", "runtime.mincore",
		"runtime.usleep", "runtime.osyield", "runtime.nanosleep",
		"runtime.write1", "runtime.read", "runtime.open", "runtime.closefd", "runtime.pipe2",
		"runtime.rtsigprocmask", "runtime.rt_sigaction", "runtime.sigaltstack", "runtime.sigprocmask",
		"runtime.tgkill", "runtime.raise", "runtime.raiseproc", "runtime.getpid", "runtime.gettid",
		"runtime.setitimer", "runtime.timer_create", "runtime.timer_settime", "runtime.timer_delete",
		"runtime.clone", "runtime.sched_getaffinity", "runtime.epollwait", "runtime.kevent",
		"runtime.syscall", "runtime.syscall6", "runtime.syscall6X", "runtime.syscall10", "runtime.syscallPtr",
	}
}

// ByProgram and ByRuntime say who made a system call: the program, through
// the standard library's I/O, or the runtime for its own work.
const (
	ByProgram = "program"
	ByRuntime = "runtime"
)

// A syscallPath names the way a system call was reached: its first frame,
// from the kernel outward, that one of functions matches.
type syscallPath struct {
	name, by  string
	functions []string
}

// syscallPaths are the paths system calls are sorted into. A sample goes
// to the path of the innermost frame any path matches, so the I/O
// functions of net and os decide before the generic "file system" and
// before the callers that read files and sockets.
func syscallPaths() []syscallPath {
	return []syscallPath{
		{"net write", ByProgram, []string{"net.(*netFD).Write*", "net.(*netFD).write*", "net.sendFile", "net.splice", "internal/poll.SendFile", "internal/poll.Splice"}},
		{"net read", ByProgram, []string{"net.(*netFD).Read*", "net.(*netFD).read*"}},
		{"net accept, connect, close", ByProgram, []string{"net.(*netFD).accept", "net.(*netFD).connect", "net.(*netFD).Close", "net.(*netFD).dial", "net.socket", "net.sysSocket", "net.setNoDelay", "net.setKeepAlive*"}},
		{"file write", ByProgram, []string{"os.(*File).Write*", "os.(*File).write", "os.(*File).pwrite", "os.WriteFile"}},
		{"file read", ByProgram, []string{"os.(*File).Read*", "os.(*File).read", "os.(*File).pread", "os.ReadFile", "os.(*File).readdir", "os.ReadDir"}},
		{"file system (open, stat, close, ...)", ByProgram, []string{"os.*"}},
		{"process start", ByProgram, []string{"syscall.forkExec", "os.StartProcess", "os/exec.*"}},
		{"netpoll (epoll)", ByRuntime, []string{"runtime.netpoll*", "runtime.epollwait", "internal/runtime/syscall/linux.EpollWait", "runtime.kevent"}},
		{"threads parking and waking (futex)", ByRuntime, []string{"runtime.futex"}},
		{"memory from the OS (mmap, madvise)", ByRuntime, []string{"runtime.madvise", "runtime.sysMmap", "runtime.sysMunmap", "runtime.mincore"}},
		{"scheduler naps (usleep, osyield)", ByRuntime, []string{"runtime.usleep", "runtime.osyield", "runtime.nanosleep"}},
	}
}

// Syscalls is how much of a CPU profile the kernel spent in system calls,
// split by the path that led to them.
type Syscalls struct {
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	// Total is the CPU of the samples analysed; Value the part in system
	// calls (the flat CPU of the syscall class), Share the fraction.
	Total int64   `json:"total"`
	Value int64   `json:"value"`
	Share float64 `json:"share"`
	// Paths split Value, most first.
	Paths []SyscallPath `json:"paths"`
}

// A SyscallPath is the CPU of the system calls reached one way.
type SyscallPath struct {
	// Path names the way: "net write", "file read", "netpoll (epoll)",
	// ...; "other" when no known path matches.
	Path string `json:"path"`
	// By is ByProgram for the I/O the program asked for, ByRuntime for
	// the runtime's own system calls (the scheduler waiting for the
	// network or waking threads, memory from the OS).
	By string `json:"by"`
	// Via is the function that named the path (net.(*netFD).Write,
	// runtime.futex), the one most of the path's CPU went through; for
	// "other", the innermost caller of the system call.
	Via string `json:"via,omitempty"`
	// Caller is the function outside the I/O plumbing (net, os, bufio,
	// io, internal/poll, syscall) that most of the path's CPU was called
	// from: net/http.checkConnErrorWriter.Write for a server's response
	// writes, log.(*Logger).output, or the user's own function.
	Caller string  `json:"caller,omitempty"`
	Value  int64   `json:"value"`
	Share  float64 `json:"share"` // of Syscalls.Total
	// User is the user function most of the path's CPU is charged to
	// (UserFrame), "" when its samples have no user code.
	User string `json:"user,omitempty"`
}

// SystemCalls sorts the samples of p that are in a system call (innermost
// frame of class Syscall) by the path that led there, for sampleType (""
// for the profile's default). c may be nil: it is then learnt from p.
func SystemCalls(p *profile.Profile, sampleType string, c *Classifier) (*Syscalls, error) {
	vi, err := SampleIndex(p, sampleType)
	if err != nil {
		return nil, err
	}
	cs := NewClasses(c, p)
	out := &Syscalls{SampleType: p.SampleType[vi].Type, Unit: unitOf(p, vi), Total: SampleTotal(p, vi), Paths: []SyscallPath{}}
	paths := syscallPaths()
	type acc struct {
		SyscallPath
		via, caller, user map[string]int64
	}
	byPath := map[string]*acc{}
	for _, s := range p.Sample {
		v := abs(s.Value[vi])
		fs := Frames(s)
		if v == 0 || len(fs) == 0 || cs.Of(fs[0].fn) != Syscall {
			continue
		}
		path, by, at := pathOf(fs, paths, cs)
		a := byPath[path]
		if a == nil {
			a = &acc{SyscallPath: SyscallPath{Path: path, By: by}, via: map[string]int64{}, caller: map[string]int64{}, user: map[string]int64{}}
			byPath[path] = a
		}
		a.Value += v
		a.via[fs[at].Name()] += v
		if i := slices.IndexFunc(fs[at:], notPlumbing); i >= 0 && by == ByProgram {
			a.caller[fs[at+i].Name()] += v
		}
		if i := UserFrame(fs, -1, cs.Frame); i >= 0 {
			a.user[fs[i].Name()] += v
		}
		out.Value += v
	}
	for _, a := range byPath {
		a.Via, a.Caller, a.User = Heaviest(a.via), Heaviest(a.caller), Heaviest(a.user)
		a.Share = Share(a.Value, out.Total)
		out.Paths = append(out.Paths, a.SyscallPath)
	}
	slices.SortFunc(out.Paths, func(x, y SyscallPath) int {
		return cmp.Or(cmp.Compare(y.Value, x.Value), cmp.Compare(x.Path, y.Path))
	})
	out.Share = Share(out.Value, out.Total)
	return out, nil
}

// pathOf names the path of a system call's stack fs, and gives the index
// of the frame that named it: the first path to match a frame, from the
// kernel outward. A stack no path matches is "other", made by the program
// when any of its frames is outside the runtime, and seen through its
// innermost frame that is not an entry into the kernel.
func pathOf(fs []Frame, paths []syscallPath, cs *Classes) (path, by string, at int) {
	for i, f := range fs {
		for _, sp := range paths {
			if MatchFunction(f.Name(), sp.functions) {
				return sp.name, sp.by, i
			}
		}
	}
	by, at = ByRuntime, -1
	for i, f := range fs {
		cl := cs.Of(f.fn)
		if at < 0 && cl != Syscall {
			at = i
		}
		if cl != Syscall && cl != Runtime {
			by = ByProgram
		}
	}
	return "other", by, max(at, 0)
}

// notPlumbing accepts a frame outside the packages that carry I/O down to
// the system call, where the caller of the I/O is.
func notPlumbing(f Frame) bool {
	switch PackagePath(f.Name()) {
	case "net", "os", "bufio", "io", "internal/poll", "syscall", "":
		return false
	}
	return true
}
