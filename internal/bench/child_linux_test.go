package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Environment variables that turn TestKilledRunHelper into a benchmark run
// of the module in one directory to the results file in the other.
const (
	killedRunDir = "PERFSCOPE_TEST_KILLED_RUN_DIR"
	killedRunOut = "PERFSCOPE_TEST_KILLED_RUN_OUT"
)

// TestKilledRunHelper is the process TestKilledRunLeavesNoChildren kills:
// a benchmark run of testdata/sleep long enough not to end by itself.
func TestKilledRunHelper(t *testing.T) {
	dir := os.Getenv(killedRunDir)
	if dir == "" {
		t.Skip("the process TestKilledRunLeavesNoChildren starts and kills")
	}
	_, err := Run(context.Background(), Options{Dir: dir, Count: 1, Benchtime: "1000000x", Output: os.Getenv(killedRunOut)})
	t.Fatalf("the run ended by itself: %v", err)
}

// TestKilledRunLeavesNoChildren runs benchmarks in a process of their own,
// kills it with SIGKILL while a benchmark is measured, and checks that no
// process it started survives it, and that its results file is named as
// the partial file it is.
func TestKilledRunLeavesNoChildren(t *testing.T) {
	dir := sleepModule(t)
	out := filepath.Join(t.TempDir(), "results.txt")
	var log bytes.Buffer
	helper := exec.Command(os.Args[0], "-test.run=^TestKilledRunHelper$", "-test.count=1")
	helper.Env = append(os.Environ(), killedRunDir+"="+dir, killedRunOut+"="+out)
	helper.Stdout, helper.Stderr = &log, &log
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- helper.Wait() }()
	t.Cleanup(func() { helper.Process.Kill() })

	// The benchmark binary measuring, found among the helper's
	// descendants, once what it printed before measuring is in the
	// results file; the build of the benchmark takes a while on a busy
	// machine.
	var started []process
	for deadline := time.Now().Add(3 * time.Minute); ; {
		started = descendants(t, helper.Process.Pid)
		data, _ := os.ReadFile(out + PartialSuffix)
		if benchmarking(started) && strings.Contains(string(data), "pkg: example.com/sleep\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no benchmark binary among the run's processes %v after 3 minutes; its output:\n%s", started, log.String())
		}
		select {
		case err := <-exited:
			t.Fatalf("the run ended before it was killed: %v\n%s", err, log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	for _, p := range started {
		if p.ppid == helper.Process.Pid && p.pgid != p.pid {
			t.Errorf("%s (%d) is in process group %d, not one of its own", p.comm, p.pid, p.pgid)
		}
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited

	// Linux sends the parent-death signal as the parent exits; a minute
	// is for a machine too busy to schedule anyone.
	var alive []process
	for deadline := time.Now().Add(time.Minute); ; {
		alive = survivors(t, started)
		if len(alive) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range alive {
		t.Errorf("%s (%d) outlived the killed run: %s", p.comm, p.pid, p.cmdline)
		syscall.Kill(p.pid, syscall.SIGKILL)
	}

	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed run left %s, the name of a finished run's results (stat: %v)", out, err)
	}
	data, err := os.ReadFile(out + PartialSuffix)
	if err != nil {
		t.Fatalf("the killed run's partial results: %v", err)
	}
	res, err := Parse(bytes.NewReader(data), out+PartialSuffix)
	if err != nil || len(res.Warnings) > 0 {
		t.Errorf("partial results read with %v, warnings %v:\n%s", err, res.Warnings, data)
	}
	if !strings.Contains(string(data), "pkg: example.com/sleep\n") || strings.Contains(string(data), "BenchmarkSleep") {
		t.Errorf("partial results do not hold what the benchmark printed before it was killed, its unfinished result line left out:\n%s", data)
	}
}

// A process is what /proc says of one process.
type process struct {
	pid, ppid, pgid int
	state           byte
	start           uint64 // clock ticks after boot
	comm, cmdline   string
}

func (p process) String() string { return fmt.Sprintf("%s(%d)", p.comm, p.pid) }

// benchmarking reports whether one of the processes is a test binary
// measuring benchmarks.
func benchmarking(ps []process) bool {
	for _, p := range ps {
		if strings.HasSuffix(p.comm, ".test") && strings.Contains(p.cmdline, "-test.bench") {
			return true
		}
	}
	return false
}

// descendants returns the processes below pid, read from /proc.
func descendants(t *testing.T, pid int) []process {
	t.Helper()
	all := processes(t)
	below := map[int]bool{pid: true}
	var out []process
	// Parents come before children in pid order except after pid
	// wrap-around; going over the table until nothing is added covers
	// both.
	for added := true; added; {
		added = false
		for _, p := range all {
			if below[p.ppid] && !below[p.pid] {
				below[p.pid] = true
				out = append(out, p)
				added = true
			}
		}
	}
	return out
}

// survivors returns the processes of started still running (a zombie has
// ended), and any process in a process group one of them led.
func survivors(t *testing.T, started []process) []process {
	t.Helper()
	type key struct {
		pid   int
		start uint64
	}
	was := map[key]bool{}
	groups := map[int]bool{}
	for _, p := range started {
		was[key{p.pid, p.start}] = true
		if p.pgid == p.pid {
			groups[p.pgid] = true
		}
	}
	var out []process
	for _, p := range processes(t) {
		if p.state != 'Z' && (was[key{p.pid, p.start}] || groups[p.pgid]) {
			out = append(out, p)
		}
	}
	return out
}

// processes reads every process's stat and command line from /proc.
func processes(t *testing.T) []process {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// A process may end between the listing and the read.
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		p, ok := parseStat(pid, string(stat))
		if !ok {
			t.Fatalf("/proc/%d/stat: %q", pid, stat)
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		p.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		out = append(out, p)
	}
	return out
}

// parseStat reads /proc/PID/stat: "pid (comm) state ppid pgrp ...", the
// start time 22nd; comm may hold spaces and parentheses.
func parseStat(pid int, stat string) (process, bool) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return process{}, false
	}
	f := strings.Fields(stat[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return process{}, false
	}
	p := process{pid: pid, comm: stat[open+1 : end], state: f[0][0]}
	var errs [3]error
	p.ppid, errs[0] = strconv.Atoi(f[1])
	p.pgid, errs[1] = strconv.Atoi(f[2])
	p.start, errs[2] = strconv.ParseUint(f[19], 10, 64)
	return p, errors.Join(errs[:]...) == nil
}
