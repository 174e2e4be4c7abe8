package bench

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// workBinary builds testdata/work's test binary.
func workBinary(t *testing.T) Binary {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "work"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "work.test")
	cmd := exec.Command("go", "test", "-c", "-o", bin, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/work: %v\n%s", err, out)
	}
	return Binary{Package: Package{ImportPath: "example.com/work", Dir: dir}, Path: bin}
}

func valgrind(t *testing.T) string {
	t.Helper()
	p, err := FindValgrind()
	if err != nil {
		if os.Getenv("PERFSCOPE_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return p
}

// TestCountInstructions checks counts against work known in proportion:
// twice the loop is twice the instructions, and counting again gives the
// same number. Counts do not depend on the machine's load.
func TestCountInstructions(t *testing.T) {
	// A run varies by about a hundred thousand instructions (timers,
	// the scheduler); 100 million counted keeps that under 0.2%.
	opts := InstructionOptions{Valgrind: valgrind(t), Target: 100_000_000}
	bin := workBinary(t)
	ctx := context.Background()
	count := func(name string) InstructionCount {
		t.Helper()
		n := opts.PlanIterations(0, 0, 10_000).N
		c, err := CountInstructions(ctx, bin, name, n, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	one, two := count("BenchmarkSpin/1000"), count("BenchmarkSpin/2000")
	t.Logf("Spin/1000: %.1f instructions/op over %d ops; Spin/2000: %.1f over %d", one.PerOp, one.N, two.PerOp, two.N)
	// The loop body is a handful of instructions per iteration.
	if one.PerOp < 3000 || one.PerOp > 20000 {
		t.Errorf("Spin/1000: %.0f instructions/op, want a few per loop iteration", one.PerOp)
	}
	if r := two.PerOp / one.PerOp; math.Abs(r-2) > 0.02 {
		t.Errorf("Spin/2000 / Spin/1000 = %.4f, want 2 (±1%%)", r)
	}
	again := count("BenchmarkSpin/1000")
	if d := math.Abs(again.PerOp/one.PerOp - 1); d > 0.005 {
		t.Errorf("Spin/1000 counted %.1f then %.1f: %.2f%% apart, want under 0.5%%", one.PerOp, again.PerOp, 100*d)
	}
}

// TestCountFewestOperations counts a b.N benchmark over the fewest
// operations: testing runs such a benchmark once before the requested
// count, except when the count is one, so a count must not compare a run
// of one operation with a longer one.
func TestCountFewestOperations(t *testing.T) {
	opts := InstructionOptions{Valgrind: valgrind(t), Target: 1}
	bin := workBinary(t)
	ctx := context.Background()
	long, err := CountInstructions(ctx, bin, "BenchmarkLong", opts.PlanIterations(1e7, 0, 0).N, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Target = 100_000_000
	spin, err := CountInstructions(ctx, bin, "BenchmarkSpin/1000", opts.PlanIterations(0, 0, 10_000).N, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Long: %.0f instructions/op over %d ops; Spin/1000: %.1f over %d", long.PerOp, long.N, spin.PerOp, spin.N)
	if long.N != minCounted {
		t.Errorf("Long counted over %d operations, want the fewest, %d", long.N, minCounted)
	}
	if r := long.PerOp / spin.PerOp; math.Abs(r/5000-1) > 0.01 {
		t.Errorf("Long / Spin/1000 = %.0f, want 5000 (±1%%): Long runs spin(5,000,000) an operation, Spin/1000 spin(1000)", r)
	}
}

// TestCountProcessCost counts a benchmark whose operation costs one of two
// amounts, drawn per process (BenchmarkDraw), over the fewest operations.
// A count is the difference of two processes, so it may hold the shorter
// run's operations (testing's first run and minOperations) at the other
// process's cost: each count must lie within the two costs widened by
// (minOperations+1)/N of their difference, and a little for start-up. A
// longer run of twice a shorter's operations would widen them by more than
// the whole difference.
func TestCountProcessCost(t *testing.T) {
	opts := InstructionOptions{Valgrind: valgrind(t), Target: 100_000_000}
	bin := workBinary(t)
	ctx := context.Background()
	spin := func(name string) float64 {
		c, err := CountInstructions(ctx, bin, name, opts.PlanIterations(0, 0, 10_000).N, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c.PerOp
	}
	// A loop iteration, and an operation of 1,000,000 iterations: the
	// operation's own cost (the call) is in Spin/1000's count once.
	spin1000 := spin("BenchmarkSpin/1000")
	iteration := (spin("BenchmarkSpin/2000") - spin1000) / 1000
	low := spin1000 + 999_000*iteration
	high := low + 100_000*iteration
	opts.Target = 1
	n := opts.PlanIterations(0, 0, low).N
	// Beyond the shorter run's share: two percent of the difference for
	// the error of those estimates (the loop costs a little less in Draw
	// than in Spin), and 100,000 instructions over n for the two
	// processes' start-up, which differs by tens of thousands beside CPU
	// burners (a count 5,800 below the bound at n = 8).
	slack := (float64(minOperations+1)/float64(n)+0.02)*(high-low) + 100_000/float64(n)
	for range 6 {
		c, err := CountInstructions(ctx, bin, "BenchmarkDraw", n, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Draw: %.0f instructions/op over %d ops (one draw %.0f, the other %.0f)", c.PerOp, c.N, low, high)
		if c.PerOp < low-slack || c.PerOp > high+slack {
			t.Errorf("Draw counted %.0f instructions/op, want between %.0f and %.0f", c.PerOp, low-slack, high+slack)
		}
	}
}

func TestCountInstructionsErrors(t *testing.T) {
	opts := InstructionOptions{Valgrind: valgrind(t)}
	bin := workBinary(t)
	ctx := context.Background()
	if _, err := CountInstructions(ctx, bin, "BenchmarkMissing", 10, opts); err == nil || !strings.Contains(err.Error(), "no such benchmark") {
		t.Errorf("a missing benchmark: %v", err)
	}
}

// TestReadValgrindLog reads lines valgrind 3.19 wrote with
// --trace-syscalls=yes for a run of the examples' handler benchmark.
func TestReadValgrindLog(t *testing.T) {
	log := `==14343== Cachegrind, a cache and branch-prediction profiler
SYSCALL[14343,1](1) sys_write ( 9, 0x3f0c28704000, 88 ) --> [async] ... 
SYSCALL[14343,1](1) ... [async] --> Success(0x58) 
SYSCALL[14343,1](228) sys_clock_gettime( 1, 0x1fff000500 )[sync] --> Success(0x0) 
SYSCALL[14343,2](202) sys_futex ( 0xcdd580, 128, 0, 0x4bcfcd28, 0x0 ) --> [async] ... 
SYSCALL[14343,4](281) sys_epoll_pwait ( 7, 0x51000584, 128, 179, 0x0, 0 ) --> [async] ... 
SYSCALL[14343,3](35) sys_nanosleep ( 0x4bd4ff28, 0x0 ) --> [async] ... 
SYSCALL[14343,1](257) sys_openat ( -100, 0xc000012345(/tmp/x), 524288 ) --> [async] ... 
SYSCALL[14343,1](257) ... [async] --> Success(0x3) 
==14343== I   refs:      194,237,900
`
	path := filepath.Join(t.TempDir(), "valgrind.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	n, msgs, err := readValgrindLog(path)
	if err != nil || n != 2 {
		t.Errorf("blocking calls: %d, %v; want 2 (write, openat)", n, err)
	}
	if !strings.Contains(msgs, "I   refs") || strings.Contains(msgs, "SYSCALL") {
		t.Errorf("messages: %q", msgs)
	}
	if _, _, err := readValgrindLog(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing log read without error")
	}
}

func TestPlanIterations(t *testing.T) {
	o := InstructionOptions{Target: 1_000_000, MaxAlloc: 1 << 20}
	if p := o.PlanIterations(100, 0, 0); p.N != 3334 || p.Capped != nil {
		t.Errorf("from ns/op: %+v", p)
	}
	if p := o.PlanIterations(100, 0, 500); p.N != 2000 {
		t.Errorf("from a count: %+v", p)
	}
	// An operation far above the target is still counted over several.
	if p := o.PlanIterations(0, 0, 1e9); p.N != minCounted || p.Capped != nil {
		t.Errorf("a long operation: %+v", p)
	}
	// 4 KiB per op under a 1 MiB cap: 256 - 1 - 2 = 253 ops (the longer
	// run also executes testing's first run and the shorter run's).
	want := AllocationCap{BytesPerOp: 4096, Limit: 1 << 20, Wanted: 10000, Counted: 253}
	if p := o.PlanIterations(0, 4096, 100); p.N != 253 || p.Capped == nil || *p.Capped != want {
		t.Errorf("allocation cap: %+v %+v", p, p.Capped)
	}
	want = AllocationCap{BytesPerOp: 1 << 30, Limit: 1 << 20, Wanted: 10000, Counted: 1, Over: true, Shorter: minOperations, Longer: minOperations + 1}
	if p := o.PlanIterations(0, 1<<30, 100); p.N != 1 || p.Capped == nil || *p.Capped != want {
		t.Errorf("huge allocations: %+v %+v", p, p.Capped)
	}
}

func TestBenchPattern(t *testing.T) {
	if got := BenchPattern("BenchmarkA/x.y(1)/z"); got != `^BenchmarkA$/^x\.y\(1\)$/^z$` {
		t.Errorf("got %s", got)
	}
}

// TestCountBenchmarks counts every benchmark of an ordinary run and writes
// the counts in Go benchmark format that reads back as exact.
func TestCountBenchmarks(t *testing.T) {
	opts := InstructionOptions{Valgrind: valgrind(t), Target: 5_000_000, MaxAlloc: 64 << 20}
	bin := workBinary(t)
	ctx := context.Background()
	// Every benchmark but Long, whose count alone takes seconds.
	cmd := exec.Command(bin.Path, "-test.run=^$", "-test.bench=^Benchmark(Spin|Alloc|Write|NoisySetup|Setup|Fixed)$", "-test.benchmem", "-test.benchtime=100x", "-test.count=2")
	cmd.Dir = bin.Package.Dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ordinary run: %v\n%s", err, out)
	}
	ordinary, err := Parse(bytes.NewReader(out), "ordinary")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	counted, err := CountBenchmarks(ctx, bin, ordinary, 2, opts, func(done, total int, name string) { seen = append(seen, name) })
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*CountedBenchmark{}
	for _, c := range counted {
		byName[stripProcs(string(c.Result.Name))] = c
	}
	for _, name := range []string{"Spin/1000", "Spin/2000", "Alloc", "NoisySetup", "Setup"} {
		c := byName[name]
		if c == nil || c.Err != nil || len(c.Counts) != 2 {
			t.Fatalf("%s: %+v (counted: %v)\n%s", name, c, slices.Collect(maps.Keys(byName)), out)
		}
	}
	for _, name := range []string{"Spin/1000", "Spin/2000", "Alloc"} {
		if b := byName[name].Counts[0].Blocking; b > 0.01 {
			t.Errorf("%s: %.3f blocking system calls per operation, want none", name, b)
		}
	}
	// One write(2) per operation: whether the runtime hands the processor
	// to another thread during it depends on timing.
	if c := byName["Write"]; c == nil || c.Err == nil || len(c.Counts) != 0 ||
		!strings.Contains(c.Err.Error(), "makes 1 blocking system call per operation") {
		t.Errorf("BenchmarkWrite makes a system call per operation but was counted: %+v", c)
	}
	// Refused either way: its counts are noise, which reads as no work per
	// operation or, when the noise is large, as work depending on timing.
	if c := byName["Fixed"]; c == nil || c.Err == nil || len(c.Counts) != 0 ||
		!strings.Contains(c.Err.Error(), "does not run b.N") && !strings.Contains(c.Err.Error(), "depends on timing") {
		t.Errorf("BenchmarkFixed ignores b.N but was counted: %+v", c)
	}
	if len(seen) != len(counted)+1 || seen[len(seen)-1] != "" {
		t.Errorf("progress calls: %q", seen)
	}
	// 4 KiB per operation: the cap allows 64 MiB / 4 KiB - 1 - 2 ops (the
	// longer run also executes testing's first run and the shorter run's).
	if a := byName["Alloc"]; a.Counts[0].N > 16381 {
		t.Errorf("BenchmarkAlloc counted over %d ops, above the allocation cap", a.Counts[0].N)
	}

	var buf bytes.Buffer
	if err := WriteInstructions(&buf, counted); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(&buf, "counts")
	if err != nil || len(back.Warnings) > 0 {
		t.Fatalf("reading the counts back: %v %v\n%s", err, back.Warnings, buf.String())
	}
	if got := back.Units.GetAssumption(UnitInstructions); got != benchmath.AssumeExact {
		t.Errorf("instructions/op assumption %v, want exact:\n%s", got, buf.String())
	}
	if len(back.Results) != 5 { // Spin/1000, Spin/2000, Alloc, NoisySetup, Setup
		t.Fatalf("%d results, want 5:\n%s", len(back.Results), buf.String())
	}
	for _, r := range back.Results {
		v, ok := r.Value(UnitInstructions)
		want := byName[stripProcs(string(r.Name))].PerOp()
		if !ok || v != want || r.GetConfig("pkg") != "example.com/work" {
			t.Errorf("%s: %v %v (want %v), pkg %q", r.Name, v, ok, want, r.GetConfig("pkg"))
		}
	}
}

// countFrom counts testdata/work's benchmarks as an ordinary run of
// lines (Go benchmark format) planned them, once each, and requires one
// count of every benchmark named.
func countFrom(t *testing.T, opts InstructionOptions, lines ...string) []*CountedBenchmark {
	t.Helper()
	ordinary, err := Parse(strings.NewReader("pkg: example.com/work\n"+strings.Join(lines, "\n")+"\n"), "ordinary")
	if err != nil {
		t.Fatal(err)
	}
	counted, err := CountBenchmarks(context.Background(), workBinary(t), ordinary, 1, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counted {
		if c.Err != nil || len(c.Counts) != 1 {
			t.Fatalf("%s: %+v", c.Result.Name, c)
		}
	}
	return counted
}

// TestCountBenchmarksReplans counts a benchmark planned from a time far
// too long, as a loaded machine measures: its first count covers one
// operation, which its set-up's random length hides, and the count must
// still come out as its operations' work.
func TestCountBenchmarksReplans(t *testing.T) {
	opts := InstructionOptions{Valgrind: valgrind(t), Target: 20_000_000}
	if n := opts.PlanIterations(1e8, 0, 0).N; n != minCounted {
		t.Fatalf("planned %d operations from 0.1 s/op, want the fewest, %d", n, minCounted)
	}
	counted := countFrom(t, opts, "BenchmarkNoisySetup 1 100000000 ns/op", "BenchmarkSpin/1000 1 100000000 ns/op")
	noisy, spin := counted[0].PerOp(), counted[1].PerOp()
	t.Logf("NoisySetup %.0f instructions/op over %d ops, Spin/1000 %.0f over %d", noisy, counted[0].Counts[0].N, spin, counted[1].Counts[0].N)
	if d := math.Abs(noisy/spin - 1); d > 0.02 {
		t.Errorf("NoisySetup counted %.0f instructions/op, Spin/1000 %.0f: %.1f%% apart, want the same work within 2%%", noisy, spin, 100*d)
	}
}

// TestCountBenchmarksOneTime counts a benchmark whose set-up executes
// more than the operations planned for the target: the operations are
// planned again to execute more than the run's one-time work.
func TestCountBenchmarksOneTime(t *testing.T) {
	opts := InstructionOptions{Valgrind: valgrind(t), Target: 5_000_000}
	c := countFrom(t, opts, "BenchmarkSetup 1 4000 ns/op")[0].Counts[0]
	t.Logf("Setup: %.0f instructions/op over %d ops; one-time work %.0f", c.PerOp, c.N, c.OneTime())
	if ops := float64(c.N) * c.PerOp; ops < c.OneTime() {
		t.Errorf("the operations executed %.0f instructions, less than the run's one-time %.0f", ops, c.OneTime())
	}
	if c.PerOp < 11000 || c.PerOp > 13000 {
		t.Errorf("Setup: %.0f instructions/op, want Spin/1000's 12,000", c.PerOp)
	}
}

// TestCountBenchmarksAllocation plans a count from samples whose B/op
// includes a set-up spread over few operations: the cap on allocation
// follows the operations' own B/op, the smallest sample's.
func TestCountBenchmarksAllocation(t *testing.T) {
	opts := InstructionOptions{Valgrind: valgrind(t), Target: 5_000_000, MaxAlloc: 64 << 20}
	counted := countFrom(t, opts,
		"BenchmarkAlloc 1 900000 ns/op 1048576 B/op 1 allocs/op",
		"BenchmarkAlloc 10000 1000 ns/op 4096 B/op 1 allocs/op")
	// 1 MiB per operation would cap the count at 61 operations, 4 KiB at
	// 16381.
	if n := counted[0].Counts[0].N; n <= 61 || n > 16381 {
		t.Errorf("BenchmarkAlloc counted over %d operations, want more than 1 MiB per operation allows and at most what 4 KiB allows", n)
	}
}

// TestCountBenchmarksAllocationLoaded plans a count from one sample of
// one operation whose B/op holds a set-up's allocation, as the only
// sample a loaded machine measures in its time: the first count, capped
// at what that B/op allows, is planned again from the operations' own
// B/op, which the count measures, so how many operations are counted
// does not depend on the load the ordinary run saw.
func TestCountBenchmarksAllocationLoaded(t *testing.T) {
	opts := InstructionOptions{Valgrind: valgrind(t), Target: 5_000_000, MaxAlloc: 64 << 20}
	c := countFrom(t, opts, "BenchmarkAlloc 1 900000 ns/op 1048576 B/op 1 allocs/op")[0].Counts[0]
	t.Logf("Alloc: %.0f instructions/op and %.0f B/op over %d ops", c.PerOp, c.BytesPerOp, c.N)
	if c.BytesPerOp < 4096 || c.BytesPerOp > 4096+64 {
		t.Errorf("the count measured %.0f B/op, want BenchmarkAlloc's 4096", c.BytesPerOp)
	}
	// 1 MiB per operation caps the count at 61 operations, 4 KiB at
	// 16381.
	if c.N <= 61 || c.N > 16381 {
		t.Errorf("BenchmarkAlloc counted over %d operations, want more than 1 MiB per operation allows and at most what 4 KiB allows", c.N)
	}
}

// TestCountBenchmarksIgnoresTime counts one benchmark planned from the
// time a quiet machine measures and from one a loaded machine measures,
// a thousand times longer: both counts are taken over the operations the
// count itself plans, so what a run's fixed costs add to an operation is
// the same whatever the load.
func TestCountBenchmarksIgnoresTime(t *testing.T) {
	opts := InstructionOptions{Valgrind: valgrind(t), Target: 5_000_000}
	quiet := countFrom(t, opts, "BenchmarkSpin/1000 100000 100 ns/op")[0].Counts[0]
	loaded := countFrom(t, opts, "BenchmarkSpin/1000 1 100000 ns/op")[0].Counts[0]
	t.Logf("Spin/1000: %.0f instructions/op over %d ops planned from 100 ns/op, %.0f over %d from 100 µs/op", quiet.PerOp, quiet.N, loaded.PerOp, loaded.N)
	if !settled(quiet.N, loaded.N) {
		t.Errorf("counted over %d operations planned from a quiet machine's time, %d from a loaded one's: want the same within a quarter", quiet.N, loaded.N)
	}
}

// TestGateCountedNotes checks that a benchmark refused on both sides of a
// gate is noted once, as the head has it, and one refused in the base
// only says so.
func TestGateCountedNotes(t *testing.T) {
	result := func(name string) *benchfmt.Result {
		r := &benchfmt.Result{Name: benchfmt.Name(name)}
		r.SetConfig("pkg", "example.com/work")
		return r
	}
	capped := &AllocationCap{BytesPerOp: 4096, Limit: 1 << 20, Wanted: 10000, Counted: 253}
	base := []*CountedBenchmark{
		{Result: result("Write"), Err: errors.New("base reason")},
		{Result: result("Old"), Err: errors.New("only in the base")},
		{Result: result("Spin")},
	}
	head := []*CountedBenchmark{
		{Result: result("Write"), Err: errors.New("head reason")},
		{Result: result("Old")},
		{Result: result("Alloc"), Capped: capped},
	}
	got := GateCountedNotes(base, head)
	want := []CountNote{
		{Benchmark: "example.com/work BenchmarkWrite", Err: head[0].Err},
		{Benchmark: "example.com/work BenchmarkAlloc", Capped: capped},
		{Benchmark: "example.com/work BenchmarkOld", BaseOnly: true, Err: base[1].Err},
	}
	if !slices.Equal(got, want) {
		t.Errorf("notes:\n%+v\nwant:\n%+v", got, want)
	}
}
