package profiles

import (
	"path/filepath"
	"testing"

	"github.com/perfscope/perfscope/internal/run"
)

// TestSystemCallsLeftpad reads the committed leftpad run, whose service
// writes each response to its socket, each access-log line to a file and
// each metric to a UDP socket: a third of its CPU is in the kernel, which
// the headline used to fold into the runtime.
func TestSystemCallsLeftpad(t *testing.T) {
	saved, _ := leftpad(t)
	a, errs := Analyze(ReadRun(saved), Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	sc := a.CPU.Syscalls
	if sc == nil {
		t.Fatal("no system calls in the analysis")
	}
	// The profile is committed: its values are exact.
	if sc.Value != 720e6 || sc.Total != 2320e6 {
		t.Errorf("system calls %d of %d ns, want 720ms of 2.32s", sc.Value, sc.Total)
	}
	if sc.Share < 0.30 || sc.Share > 0.32 {
		t.Errorf("system-call share %.3f, want 0.31", sc.Share)
	}
	row, ok := a.CPU.Flat.Class(Syscall)
	if !ok || row.Flat != sc.Value {
		t.Errorf("the syscall class's flat CPU %+v differs from the system calls' %d", row, sc.Value)
	}
	if rt, _ := a.CPU.Flat.Class(Runtime); rt.FlatShare > 0.53 {
		t.Errorf("runtime %.3f of CPU: the system calls are still counted in it", rt.FlatShare)
	}
	want := map[string]SyscallPath{
		"net write":                          {By: ByProgram, Via: "net.(*netFD).Write", Caller: "net/http.checkConnErrorWriter.Write", Value: 470e6},
		"file write":                         {By: ByProgram, Via: "os.(*File).write", Caller: "log.(*Logger).output", User: "main.(*accessLog).request", Value: 100e6},
		"net read":                           {By: ByProgram, Via: "net.(*netFD).Read", Caller: "net/http.(*connReader).Read", Value: 70e6},
		"memory from the OS (mmap, madvise)": {By: ByRuntime, Via: "runtime.madvise", Value: 40e6},
		"netpoll (epoll)":                    {By: ByRuntime, Via: "internal/runtime/syscall/linux.EpollWait", Value: 20e6},
		"threads parking and waking (futex)": {By: ByRuntime, Via: "runtime.futex", Value: 20e6},
	}
	var sum int64
	for _, p := range sc.Paths {
		sum += p.Value
		w, ok := want[p.Path]
		if !ok {
			t.Errorf("unexpected path %+v", p)
			continue
		}
		w.Path, w.Share = p.Path, Share(w.Value, sc.Total)
		if p != w {
			t.Errorf("path %q:\n got %+v\nwant %+v", p.Path, p, w)
		}
	}
	if len(sc.Paths) != len(want) || sc.Paths[0].Path != "net write" {
		t.Errorf("paths %+v, want the %d above with net write first", sc.Paths, len(want))
	}
	if sum != sc.Value {
		t.Errorf("paths sum to %d, system calls are %d", sum, sc.Value)
	}
}

// TestSystemCallsComputeBound is the counterpart: the committed workload
// computes and makes no I/O of its own, so the kernel's share is small
// and only the runtime's own calls remain.
func TestSystemCallsComputeBound(t *testing.T) {
	sc, err := SystemCalls(load(t, run.KindCPU), SampleCPU, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Share > 0.05 {
		t.Errorf("system-call share %.3f of a compute-bound program", sc.Share)
	}
	for _, p := range sc.Paths {
		if p.By != ByRuntime {
			t.Errorf("path %+v: the workload makes no system call of its own", p)
		}
	}
}

// TestSystemCallsWrites reads the committed runs of the small-writes
// rule's programs (internal/findings/testdata/writes): the bad one writes
// each access-log line to its file with a system call, the good one through
// a buffer flushed in batches, so only the bad one has a file-write path,
// and it leads back to the user's function.
func TestSystemCallsWrites(t *testing.T) {
	paths := func(name string) map[string]SyscallPath {
		t.Helper()
		saved, err := run.Load(filepath.Join("..", "findings", "testdata", "runs", name))
		if err != nil {
			t.Fatal(err)
		}
		p, err := saved.Open(run.KindCPU)
		if err != nil {
			t.Fatal(err)
		}
		p, _ = DropProfilerSamples(p)
		sc, err := SystemCalls(p, SampleCPU, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]SyscallPath{}
		for _, sp := range sc.Paths {
			out[sp.Path] = sp
		}
		return out
	}
	bad, good := paths("writes-bad"), paths("writes-good")
	w, ok := bad["file write"]
	if !ok || w.Value != 160e6 || w.User != "main.accessLog" || w.Caller != "main.accessLog" || w.Via != "os.(*File).write" {
		t.Errorf("writes-bad: file write %+v, want 160ms through os.(*File).write from main.accessLog", w)
	}
	if w, ok := good["file write"]; ok {
		t.Errorf("writes-good writes its log through a buffer, yet has a file-write path: %+v", w)
	}
	for name, ps := range map[string]map[string]SyscallPath{"writes-bad": bad, "writes-good": good} {
		if _, ok := ps["net write"]; !ok {
			t.Errorf("%s: no net write path: its load goes over HTTP on loopback", name)
		}
	}
}
