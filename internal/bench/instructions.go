package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/cputime"
	"github.com/perfscope/perfscope/internal/measure"
)

// UnitInstructions is the unit of instruction counts per benchmark
// operation. Counts do not vary with the machine's load, so results carry
// "Unit instructions/op assume=exact" and benchstat tests them as exact.
const UnitInstructions = measure.Instructions

// ErrNoValgrind means valgrind, which counts instructions, is not
// installed.
var ErrNoValgrind = errors.New("valgrind is not installed (Debian/Ubuntu: apt-get install valgrind; macOS: not available, use --measure time)")

// FindValgrind returns the path of valgrind, or ErrNoValgrind.
func FindValgrind() (string, error) {
	p, err := exec.LookPath("valgrind")
	if err != nil {
		return "", ErrNoValgrind
	}
	return p, nil
}

// InstructionOptions configure instruction counting. The zero value is
// usable once Valgrind is set.
type InstructionOptions struct {
	// Valgrind is the valgrind executable (FindValgrind).
	Valgrind string
	// Target is how many instructions the counted operations of one
	// measurement should add up to; more makes the fixed noise of a run
	// (scheduler, timers: tens of thousands of instructions) a smaller
	// share. Default 200 million, about a second under valgrind.
	Target int64
	// MaxAlloc caps what a measurement may allocate: the collector is off
	// while counting (its work depends on timing), so every allocation
	// stays in memory until the run ends. Default 2 GiB.
	MaxAlloc int64
	// Timeout bounds the CPU time of one run under valgrind where the
	// system reports it (Linux), so that a run given up does not depend
	// on the machine's load; its wall time is bounded at
	// wallTimeouts times that, for a run that waits without computing.
	// Elsewhere it bounds the wall time. Default DefaultCountTimeout.
	Timeout time.Duration
	// TimingLimit is the share of an operation's instructions that
	// thread hand-offs during its blocking system calls may add (see
	// HandoffInstructions) beyond which its count is not used: whether
	// the runtime hands the processor over during a call depends on
	// timing, so such a count changes with the machine's load. Default
	// 0.0025, a quarter of the gate's default 1% threshold.
	TimingLimit float64
}

func (o InstructionOptions) withDefaults() InstructionOptions {
	if o.Target <= 0 {
		o.Target = DefaultCountTarget
	}
	if o.MaxAlloc <= 0 {
		o.MaxAlloc = 2 << 30
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultCountTimeout
	}
	if o.TimingLimit <= 0 {
		o.TimingLimit = 0.0025
	}
	return o
}

// DefaultCountTarget is the instructions the operations of a count
// execute in all unless InstructionOptions.Target says otherwise: enough
// that what a run's one-time work varies by (tens of thousands of
// instructions) is a few ten-thousandths of them.
const DefaultCountTarget = 200_000_000

// DefaultCountTimeout bounds one run of a count under valgrind unless
// InstructionOptions.Timeout says otherwise.
const DefaultCountTimeout = 3 * time.Minute

// wallTimeouts is how many times a run's CPU bound its wall time may
// take: beside four CPU burners on two cores a run gets a third of a
// core.
const wallTimeouts = 5

// errCPUTime is why a run was given up once it used its CPU time.
var errCPUTime = errors.New("its CPU time ran out")

// HandoffInstructions bounds what one blocking system call of a counted
// run can add to the count when, during the call, the runtime's monitor
// hands the processor to another thread (which looks for work, finds
// none and parks again, and the caller takes the processor back on its
// return). Whether it does depends on how long the call takes in wall
// time, so on the machine's load. Measured on the examples' HTTP
// handlers, one such call per operation, under two CPU burners: up to
// 3,800 more instructions per operation than on a quiet machine.
const HandoffInstructions = 5000

// An IterationPlan is how many operations an instruction count of one
// benchmark counts, and why.
type IterationPlan struct {
	// N is the operations counted: the longer of the two runs executes N
	// more than the shorter, which executes minOperations.
	N int
	// Capped, when set, says the plan had to give up precision: the
	// allocation cap allowed fewer operations than wanted.
	Capped *AllocationCap
}

// An AllocationCap is how the allocation cap limited a count: with the
// collector off, the operations counted may allocate at most Limit bytes
// (InstructionOptions.MaxAlloc).
type AllocationCap struct {
	// BytesPerOp is what one operation allocates.
	BytesPerOp float64
	Limit      int64
	// Wanted is the operations the plan wanted to count; Counted, those
	// it counts.
	Wanted, Counted int
	// Over is set when even the fewest operations a count runs, Shorter
	// in its shorter run and Longer in its longer, allocate more than
	// Limit: the count runs them anyway, with the collector off.
	Over            bool
	Shorter, Longer int
}

// minOperations is the operations the shorter run of a count executes:
// the fewest that hold all of a run's one-time work. testing runs a b.N
// benchmark once before the requested count, except at -benchtime=1x, where
// that first run is the whole of it (b.Loop benchmarks run exactly the
// count): runs of 1 and 2 operations execute 1 and 3, and their difference
// would be two operations. From 2 on, both runs include the same first run,
// which cancels.
const minOperations = 2

// minCounted is the fewest operations a count counts (the longer run's
// operations beyond the shorter's). An operation's cost can differ a
// little from one process to the next: the runtime seeds each map's and
// sync.Map's hash from the random state of the thread that creates it,
// and which thread that is depends on timing (measured: 0.18% of
// encoding/json's decoding, through its type cache). The count's
// difference of two processes carries the shorter run's operations (its
// minOperations and testing's first run) at the other process's cost, so
// it adds that difference times (minOperations+1)/N; at 8, three eighths
// of it. The shorter run is kept at the fewest operations for the same
// reason.
const minCounted = 8

// assumedInstructionsPerNs estimates the instructions one nanosecond of a
// benchmark executes, to size the first count before any is known; a wrong
// guess costs time, never accuracy, and Count re-plans from the count.
const assumedInstructionsPerNs = 3

// PlanIterations chooses N for a benchmark from its ordinary run's ns/op
// and B/op (0 when unknown), or from a previous count's instructions/op
// when instrPerOp > 0.
func (o InstructionOptions) PlanIterations(nsPerOp, bytesPerOp, instrPerOp float64) IterationPlan {
	o = o.withDefaults()
	perOp := instrPerOp
	if perOp <= 0 {
		perOp = nsPerOp * assumedInstructionsPerNs
	}
	n := 1000
	if perOp > 0 {
		n = int(math.Ceil(float64(o.Target) / perOp))
	}
	n = max(n, minCounted)
	var plan IterationPlan
	// The longer run executes 1 + minOperations + N operations (testing
	// runs a b.N benchmark once before the requested count).
	if bytesPerOp > 0 {
		capped := AllocationCap{BytesPerOp: bytesPerOp, Limit: o.MaxAlloc, Wanted: n}
		switch most := int(float64(o.MaxAlloc)/bytesPerOp) - 1 - minOperations; {
		case most < 1:
			capped.Over, capped.Shorter, capped.Longer = true, minOperations, minOperations+1
			n = 1
			capped.Counted, plan.Capped = n, &capped
		case most < n:
			n = most
			capped.Counted, plan.Capped = n, &capped
		}
	}
	plan.N = min(n, 1_000_000_000)
	return plan
}

// An InstructionCount is the instructions one operation of a benchmark
// executes, from the difference of two runs under valgrind.
type InstructionCount struct {
	// Name is the benchmark's full name without the GOMAXPROCS suffix.
	Name string
	// PerOp is instructions per operation.
	PerOp float64
	// N is the operations counted: the shorter run executed
	// minOperations, the longer minOperations + N.
	N int
	// Short and Long are the two runs' whole-program counts.
	Short, Long int64
	// Blocking is the blocking system calls of one operation (those
	// during which valgrind lets other threads run), not counting the
	// runtime's own (see runtimeCalls).
	Blocking float64
	// Profile is where one operation's instructions are: per function
	// and per source line, from the same two runs.
	Profile *OpProfile
	// BytesPerOp is what one operation allocates, from the same two runs
	// (their B/op times their operations, subtracted): unlike the B/op of
	// an ordinary run, it holds none of the set-up's allocation, however
	// few operations a loaded machine ran. NaN when a run did not report
	// it.
	BytesPerOp float64
}

// OneTime is what the shorter run executed besides its minOperations
// operations: start-up, the benchmark's set-up, testing's first run of it.
func (c InstructionCount) OneTime() float64 {
	return float64(c.Short) - minOperations*c.PerOp
}

// TimingShare is the share of the count that thread hand-offs during its
// blocking system calls could add: Blocking × HandoffInstructions / PerOp.
func (c InstructionCount) TimingShare() float64 {
	if c.PerOp <= 0 {
		return 0
	}
	return c.Blocking * HandoffInstructions / c.PerOp
}

// CountInstructions runs benchmark name (full name, sub-benchmarks
// included, without a "-N" GOMAXPROCS suffix) of bin under valgrind's
// callgrind at minOperations and minOperations + n operations (n at least
// 1) and returns the instructions of one operation: everything the process
// does besides the operations — start-up, testing's own work, the
// benchmark's set-up — is the same in both runs and cancels. The runs use
// one processor and no garbage collector, the two sources of instructions
// whose amount depends on timing; allocation itself is counted, the
// collector's work is not (allocs/op and B/op report it). The runtime's
// system monitor, which runs on a wall-clock schedule, is not counted
// either (see readCallgrindThreads).
func CountInstructions(ctx context.Context, bin Binary, name string, n int, opts InstructionOptions) (InstructionCount, error) {
	opts = opts.withDefaults()
	n = max(n, 1)
	short, err := countRun(ctx, bin, name, minOperations, opts)
	if err != nil {
		return InstructionCount{}, err
	}
	long, err := countRun(ctx, bin, name, minOperations+n, opts)
	if err != nil {
		return InstructionCount{}, err
	}
	c := InstructionCount{Name: name, N: n, Short: short.file.Total, Long: long.file.Total,
		PerOp:      float64(long.file.Total-short.file.Total) / float64(n),
		BytesPerOp: max(long.bytes-short.bytes, 0) / float64(n),
		Profile:    opProfile(short.file, long.file, n, moduleRoot(bin.Package.Dir))}
	// A few more calls in one run than the other are the runtime's own
	// (waking its network poller reads and writes an event file), as
	// many as timing makes them; the operations' own calls come in
	// numbers that grow with n.
	if more := long.blocking - short.blocking; more >= minBlockingCalls {
		c.Blocking = float64(more) / float64(n)
	}
	if c.Long <= c.Short {
		return c, fmt.Errorf("%s: %d operations counted no more instructions than %d (%d, %d): %w", name, minOperations+n, minOperations, c.Long, c.Short, errNoOperations)
	}
	return c, nil
}

// errNoOperations is the error of a count whose longer run executed no
// more instructions than its shorter one.
var errNoOperations = errors.New("the benchmark does not run b.N operations")

// BenchPattern is the -test.bench pattern that selects exactly one
// benchmark by its full name: testing matches each slash-separated level
// of a name with its own expression.
func BenchPattern(name string) string {
	levels := strings.Split(name, "/")
	for i, l := range levels {
		levels[i] = "^" + regexp.QuoteMeta(l) + "$"
	}
	return strings.Join(levels, "/")
}

// countEnv returns the environment of a counted run: settings that take out
// of the count the runtime's work whose amount depends on timing, which
// would otherwise make two counts of the same code differ with the
// machine's load.
//   - GOMAXPROCS=1: one processor, so no goroutine spins looking for work
//     while another runs.
//   - GOGC=off: the collector runs when the heap grows, not per operation.
//   - asyncpreemptoff=1: the runtime preempts a goroutine that ran 10ms of
//     wall time with a signal; under valgrind that is every few operations,
//     at times that depend on the load.
//   - memprofilerate=0: allocation profiling records a stack at random
//     intervals.
//   - cpu.rdtscp=off keeps the runtime off an instruction some valgrind
//     builds cannot run.
func countEnv() []string {
	return []string{"GOGC=off", "GOMAXPROCS=1", "GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1,memprofilerate=0"}
}

// minBlockingCalls is how many more blocking system calls the run of 2n
// operations must make than the run of n before they are taken as the
// operations' own.
const minBlockingCalls = 8

// A countedRun is what one run under callgrind counted.
type countedRun struct {
	// file is the instructions the process executed, by function and
	// line, on every thread but the runtime's system monitor's (see
	// readCallgrindThreads).
	file *CachegrindFile
	// blocking is the blocking system calls the process made (see
	// readValgrindLog).
	blocking int64
	// bytes is what the benchmark's reported run allocated (B/op times
	// its operations); NaN when its result line has no B/op.
	bytes float64
}

// limitCPU cancels with errCPUTime once process pid has used limit of CPU
// time, looking every second until ctx is done.
func limitCPU(ctx context.Context, pid int, limit time.Duration, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if used, ok := cputime.Of(pid); ok && used >= limit {
				cancel(errCPUTime)
				return
			}
		}
	}
}

// countRun runs one benchmark at n operations under valgrind's callgrind,
// one output file per thread, and returns what the process executed.
// Callgrind counts the same instructions as cachegrind does, at about the
// same speed without its cache simulation, and can tell threads apart.
func countRun(ctx context.Context, bin Binary, name string, n int, opts InstructionOptions) (countedRun, error) {
	_, cpuKnown := cputime.Of(os.Getpid())
	wall := opts.Timeout
	if cpuKnown {
		wall *= wallTimeouts
	}
	ctx, cancelWall := context.WithTimeout(ctx, wall)
	defer cancelWall()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	started := func(pid int) {
		if cpuKnown {
			go limitCPU(ctx, pid, opts.Timeout, cancel)
		}
	}
	dir, err := os.MkdirTemp("", "perfscope-callgrind-")
	if err != nil {
		return countedRun{}, fmt.Errorf("count instructions: %w", err)
	}
	defer os.RemoveAll(dir)
	out, log := filepath.Join(dir, "callgrind.out"), filepath.Join(dir, "valgrind.log")
	prog, args := fixedAddresses(opts.Valgrind, "--tool=callgrind", "--separate-threads=yes",
		"--compress-strings=no", "--compress-pos=no", "--dump-instr=no", "--collect-jumps=no",
		"--callgrind-out-file="+out, "--trace-syscalls=yes", "--log-file="+log,
		bin.Path, "-test.run=^$", "-test.bench="+BenchPattern(name), "-test.benchtime="+strconv.Itoa(n)+"x",
		"-test.count=1", "-test.cpu=1", "-test.benchmem")
	var stderr, stdout bytes.Buffer
	newCmd := func() *exec.Cmd {
		cmd := command(ctx, bin.Package.Dir, prog, args...)
		cmd.Env = append(os.Environ(), countEnv()...)
		stdout.Reset()
		stderr.Reset()
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		return cmd
	}
	_, runErr := runWithFixedSeed(newCmd, "callgrind-", started)
	blocking, messages, logErr := readValgrindLog(log)
	if runErr != nil {
		if errors.Is(context.Cause(ctx), errCPUTime) {
			return countedRun{}, fmt.Errorf("%s: no result under valgrind within %v of CPU time", name, opts.Timeout)
		}
		if ctx.Err() == context.DeadlineExceeded {
			return countedRun{}, fmt.Errorf("%s: no result under valgrind within %v", name, wall)
		}
		if ctx.Err() != nil {
			return countedRun{}, ctx.Err()
		}
		msg := strings.TrimSpace(failureLines(stdout.String()) + "\n" + strings.TrimSpace(stderr.String()) + "\n" + valgrindErrors(messages))
		return countedRun{}, fmt.Errorf("%s under valgrind: %w: %s", name, runErr, firstLines(msg, 10))
	}
	if logErr != nil {
		return countedRun{}, logErr
	}
	if !ranBenchmark(stdout.String(), name) {
		return countedRun{}, fmt.Errorf("%s: the test binary of %s ran no such benchmark", name, bin.Package.ImportPath)
	}
	file, _, err := readCallgrindThreads(out)
	if err != nil {
		return countedRun{}, err
	}
	return countedRun{file: file, blocking: blocking, bytes: allocatedBytes(stdout.String(), name)}, nil
}

// allocatedBytes is what the run of benchmark name in test output
// allocated: its result line's B/op times its operations; NaN without
// them.
func allocatedBytes(out, name string) float64 {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != name {
			continue
		}
		ops, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		for i := 2; i+1 < len(f); i++ {
			if f[i+1] == "B/op" {
				if b, err := strconv.ParseFloat(f[i], 64); err == nil {
					return b * ops
				}
			}
		}
	}
	return math.NaN()
}

// runtimeCalls are system calls valgrind lets other threads run during
// that the Go runtime makes on its own, not through the syscall package,
// so it never hands the processor over during them: waiting for work or
// time (parking a thread, sleeping, polling the network; how many there
// are is a consequence of timing, not an opportunity for it), and
// managing memory and threads.
var runtimeCalls = map[string]bool{
	"futex": true, "nanosleep": true, "clock_nanosleep": true,
	"epoll_wait": true, "epoll_pwait": true, "epoll_pwait2": true, "sched_yield": true,
	"mmap": true, "munmap": true, "madvise": true, "mprotect": true, "mremap": true,
	"clone": true, "clone3": true, "prctl": true,
}

// readValgrindLog reads a log of valgrind's --trace-syscalls=yes: it
// counts the blocking system calls (the ones valgrind marks "[async]",
// during which other threads run) other than runtimeCalls, and returns
// valgrind's other messages.
func readValgrindLog(path string) (blocking int64, messages string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", fmt.Errorf("read valgrind's log: %w", err)
	}
	defer f.Close()
	var keep []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "SYSCALL[") {
			if len(keep) < 200 {
				keep = append(keep, l)
			}
			continue
		}
		// A blocking call is logged when it starts,
		// "SYSCALL[pid,tid](nr) sys_NAME ( args ) --> [async] ...",
		// and again when it returns, without its name.
		_, call, ok := strings.Cut(l, ") sys_")
		if !ok || !strings.HasSuffix(strings.TrimSpace(l), "--> [async] ...") {
			continue
		}
		if name, _, _ := strings.Cut(call, " "); !runtimeCalls[strings.TrimSuffix(name, "(")] {
			blocking++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, "", fmt.Errorf("read valgrind's log: %w", err)
	}
	return blocking, strings.Join(keep, "\n"), nil
}

// ranBenchmark reports whether test output holds a result line of the
// benchmark name.
func ranBenchmark(out, name string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return true
		}
	}
	return false
}

// valgrindErrors keeps valgrind's own lines that explain a failure,
// dropping its banner.
func valgrindErrors(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "==") && (strings.Contains(l, "Copyright") || strings.Contains(l, "Command:") ||
			strings.Contains(l, "Cachegrind, ") || strings.Contains(l, "Using Valgrind") || strings.TrimSpace(strings.TrimLeft(l, "=0123456789")) == "") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// A CountedBenchmark is one benchmark's instruction count, or why it has
// none.
type CountedBenchmark struct {
	// Result is the benchmark's result in the ordinary run the count was
	// planned from; its name and configuration label the count.
	Result *benchfmt.Result
	// Counts holds one count per repetition.
	Counts []InstructionCount
	// Capped says how the allocation cap limited the count, if it did.
	Capped *AllocationCap
	// Err is why the benchmark could not be counted (it crashed, timed out
	// or does not run b.N operations under valgrind); its other measures
	// still stand.
	Err error
}

// PerOp is the median of the repetitions' counts, rounded to whole
// instructions; NaN without repetitions.
func (c *CountedBenchmark) PerOp() float64 {
	v := make([]float64, len(c.Counts))
	for i, n := range c.Counts {
		v[i] = n.PerOp
	}
	return math.Round(measure.Center(v))
}

// MiddleCounts returns the counts among counts that have a profile whose
// instructions per operation are their median: the middle one, or the two
// middle ones of an even number (the median is then their mean). What
// explains a median, on a page or in a gate's report, is their profile:
// the runtime's scheduler now and then adds a few thousand instructions
// to one run on a timing of its own, which the median leaves out where a
// mean of every count would spread it over each function's share. Nil
// when no count has a profile.
func MiddleCounts(counts []InstructionCount) []InstructionCount {
	var ps []InstructionCount
	for _, c := range counts {
		if c.Profile != nil {
			ps = append(ps, c)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b InstructionCount) int { return cmp.Compare(a.PerOp, b.PerOp) })
	if n := len(ps); n%2 == 1 {
		return ps[n/2 : n/2+1]
	}
	return ps[len(ps)/2-1 : len(ps)/2+1]
}

// CountBenchmarks counts the instructions of every benchmark of bin that
// ordinary — results of an ordinary run of the same binary — holds, reps
// times each, planning each benchmark's operations from its ns/op and
// B/op. A benchmark that cannot be counted keeps its error in its
// CountedBenchmark; the others go on. The error is only for
// cancellation. progress, when set, is called before each benchmark.
func CountBenchmarks(ctx context.Context, bin Binary, ordinary *Results, reps int, opts InstructionOptions, progress func(done, total int, name string)) ([]*CountedBenchmark, error) {
	opts = opts.withDefaults()
	reps = max(reps, 1)
	type stats struct {
		first     *benchfmt.Result
		ns, bytes []float64
	}
	byName := make(map[string]*stats)
	var order []string
	for _, r := range ordinary.Results {
		if pkg := r.GetConfig("pkg"); pkg != "" && pkg != bin.Package.ImportPath {
			continue
		}
		name := string(r.Name)
		s := byName[name]
		if s == nil {
			s = &stats{first: r}
			byName[name] = s
			order = append(order, name)
		}
		if v, ok := r.Value("sec/op"); ok {
			s.ns = append(s.ns, v*1e9)
		}
		if v, ok := r.Value("B/op"); ok {
			s.bytes = append(s.bytes, v)
		}
	}
	var out []*CountedBenchmark
	for i, name := range order {
		if progress != nil {
			progress(i, len(order), name)
		}
		s := byName[name]
		cb := &CountedBenchmark{Result: s.first}
		out = append(out, cb)
		// Every sample's B/op is the operations' allocation plus the
		// set-up's spread over its b.N, so the smallest is the closest
		// to the operations' own and still not below it; a sample of
		// one or two operations (a loaded machine, a long set-up) would
		// otherwise cap the count at a few hundred.
		bytes := 0.0
		if len(s.bytes) > 0 {
			bytes = slices.Min(s.bytes)
		}
		ns := 0.0 // unknown: PlanIterations' default
		if len(s.ns) > 0 {
			ns = measure.Center(s.ns)
		}
		plan := opts.PlanIterations(ns, bytes, 0)
		cb.Capped = plan.Capped
		// benchfmt names drop the "Benchmark" prefix; testing needs it.
		base := "Benchmark" + stripProcs(name)
	counting:
		for range reps {
			c, err := CountInstructions(ctx, bin, base, plan.N, opts)
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			if err != nil && !errors.Is(err, errNoOperations) {
				cb.Err = err
				break
			}
			// The first count replaces the guess from time: a count
			// whose operations its own result would plan otherwise is
			// taken again over those, or, when the operations added nothing
			// the two runs' one-time work did not hide (a time measured
			// on a loaded machine, a set-up of a thousand operations'
			// work), with sixteen times as many; a few times at most.
			// The run's one-time work (start-up, set-up, testing's first
			// run) varies by a few tenths of a percent from run to run;
			// counted operations executing less than it are planned
			// again to execute twice as much, which keeps that variation
			// a smaller share of an operation.
			firstPerOp := math.NaN()
			for try := 0; len(cb.Counts) == 0 && try < 3; try++ {
				if try == 0 {
					firstPerOp = c.PerOp
				}
				target := opts
				target.Target = max(opts.Target, int64(2*c.OneTime()))
				perOp := c.PerOp
				if err != nil || perOp <= 0 {
					perOp = float64(target.Target) / float64(16*plan.N)
				}
				// The count's own B/op replaces the ordinary run's,
				// which on a loaded machine holds a set-up spread over
				// a few operations and would cap the count at as few.
				if !math.IsNaN(c.BytesPerOp) {
					bytes = c.BytesPerOp
				}
				again := target.PlanIterations(0, bytes, perOp)
				// The count is taken over the operations its own
				// result plans, not those a time guessed: a time
				// measured on a busy machine is longer than on a
				// quiet one, and what a run's fixed costs add to each
				// operation shrinks with the operations counted, so a
				// count planned from time would change with the load.
				if err == nil && c.PerOp > 0 && settled(plan.N, again.N) {
					break
				}
				plan = again
				cb.Capped = plan.Capped
				c, err = CountInstructions(ctx, bin, base, plan.N, opts)
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
				if err != nil && !errors.Is(err, errNoOperations) {
					cb.Err = err
					break counting
				}
			}
			if err != nil {
				cb.Err = err
				break
			}
			// Operations that add almost nothing where the plan expected
			// the target are not operations: the benchmark does its work
			// regardless of b.N.
			if float64(c.Long-c.Short) < float64(opts.Target)/10 {
				cb.Err = fmt.Errorf("%s: %d more operations added only %d instructions: the benchmark does not run b.N operations", base, c.N, c.Long-c.Short)
				// Even an empty loop costs a few instructions an
				// operation: below one, the operations are not there.
				if !math.IsNaN(firstPerOp) && firstPerOp > 2*c.PerOp && c.PerOp >= 1 {
					// A first count far above the second is work
					// that came once, such as a timer firing in
					// the slow valgrind run.
					cb.Err = fmt.Errorf("%s: counts of %.0f and %.0f instructions per operation disagree: the benchmark's work depends on timing", base, firstPerOp, c.PerOp)
				}
				break
			}
			if share := c.TimingShare(); share > opts.TimingLimit {
				calls := strconv.FormatFloat(c.Blocking, 'g', 2, 64)
				cb.Err = fmt.Errorf("%s makes %s blocking system call%s per operation, during which the runtime may or may not hand the processor to another thread, depending on timing; that adds up to %d instructions a call, up to %.2g%% of its %.0f per operation, so its count changes with the machine's load. To count it, keep system calls out of the measured loop (write to memory rather than to a file or socket)",
					base, calls, plural(calls), HandoffInstructions, 100*share, c.PerOp)
				break
			}
			cb.Counts = append(cb.Counts, c)
		}
	}
	if progress != nil {
		progress(len(order), len(order), "")
	}
	return out, nil
}

// settled reports whether a count over counted operations is where a
// plan of planned operations would take it: within a quarter, where what
// a run's fixed costs add to each operation moves by less than the
// counts' own spread.
func settled(counted, planned int) bool {
	r := float64(planned) / float64(counted)
	return r >= 0.8 && r <= 1.25
}

// WriteInstructions writes counted benchmarks in Go benchmark format:
// the unit's metadata ("assume=exact better=lower", see measure.Metadata), then one result line per counted
// benchmark, under its ordinary result's name and configuration, so the
// counts group with the benchmark's other measures.
func WriteInstructions(w io.Writer, counted []*CountedBenchmark) error {
	bw := benchfmt.NewWriter(w)
	for _, meta := range measure.Metadata(UnitInstructions) {
		if err := bw.Write(meta); err != nil {
			return fmt.Errorf("write instruction counts: %w", err)
		}
	}
	for _, c := range counted {
		if len(c.Counts) == 0 {
			continue
		}
		r := c.Result.Clone()
		r.Iters = c.Counts[len(c.Counts)-1].N
		v := c.PerOp()
		r.Values = []benchfmt.Value{{Value: v, Unit: UnitInstructions, OrigValue: v, OrigUnit: UnitInstructions}}
		if err := bw.Write(r); err != nil {
			return fmt.Errorf("write instruction counts: %w", err)
		}
	}
	return nil
}

// plural is "s" unless the number n spells is one.
func plural(n string) string {
	if n == "1" {
		return ""
	}
	return "s"
}

// stripProcs removes the "-N" GOMAXPROCS suffix testing adds to a
// benchmark's name when N is not 1.
func stripProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}
