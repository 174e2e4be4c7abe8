package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// UnitInstructions is the unit of instruction counts per benchmark
// operation. Counts do not vary with the machine's load, so results carry
// "Unit instructions/op assume=exact" and benchstat tests them as exact.
const UnitInstructions = "instructions/op"

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
	// Timeout bounds one run under valgrind. Default 3 minutes.
	Timeout time.Duration
}

func (o InstructionOptions) withDefaults() InstructionOptions {
	if o.Target <= 0 {
		o.Target = 200_000_000
	}
	if o.MaxAlloc <= 0 {
		o.MaxAlloc = 2 << 30
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
	return o
}

// An IterationPlan is how many operations an instruction count of one
// benchmark runs, and why.
type IterationPlan struct {
	// N is the number of operations of the shorter of the two runs; the
	// longer runs 2N.
	N int
	// Note, when set, says the plan had to give up precision (the
	// allocation cap allowed fewer operations than wanted).
	Note string
}

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
	n = max(n, 1)
	var plan IterationPlan
	// Both runs together execute 1 + N and 1 + 2N operations (testing
	// runs every benchmark once before the requested count).
	if bytesPerOp > 0 {
		if most := int((float64(o.MaxAlloc)/bytesPerOp - 1) / 2); most < n {
			plan.Note = fmt.Sprintf("%s of allocation per operation: counted over %d operations instead of %d to stay under %d MiB with the collector off; the count is less precise",
				strconv.FormatFloat(bytesPerOp, 'f', 0, 64)+" B", max(most, 1), n, o.MaxAlloc>>20)
			n = max(most, 1)
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
	// N is the operations of the shorter run (the longer ran 2N).
	N int
	// Short and Long are the two runs' whole-program counts.
	Short, Long int64
}

// CountInstructions runs benchmark name (full name, sub-benchmarks
// included, without a "-N" GOMAXPROCS suffix) of bin under valgrind's
// cachegrind at n and 2n operations and returns the instructions of one
// operation: everything the process does besides the operations — start-up,
// testing's own work, the benchmark's set-up — is the same in both runs and
// cancels. The runs use one processor and no garbage collector, the two
// sources of instructions whose amount depends on timing; allocation itself
// is counted, the collector's work is not (allocs/op and B/op report it).
func CountInstructions(ctx context.Context, bin Binary, name string, n int, opts InstructionOptions) (InstructionCount, error) {
	opts = opts.withDefaults()
	short, err := cachegrind(ctx, bin, name, n, opts)
	if err != nil {
		return InstructionCount{}, err
	}
	long, err := cachegrind(ctx, bin, name, 2*n, opts)
	if err != nil {
		return InstructionCount{}, err
	}
	c := InstructionCount{Name: name, N: n, Short: short, Long: long, PerOp: float64(long-short) / float64(n)}
	if long <= short {
		return c, fmt.Errorf("%s: %d operations counted no more instructions than %d (%d, %d): the benchmark does not run b.N operations", name, 2*n, n, long, short)
	}
	return c, nil
}

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

// cachegrind runs one benchmark at n operations under cachegrind and
// returns the instructions the whole process executed.
func cachegrind(ctx context.Context, bin Binary, name string, n int, opts InstructionOptions) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	out, err := os.CreateTemp("", "perfscope-cachegrind-")
	if err != nil {
		return 0, fmt.Errorf("count instructions: %w", err)
	}
	out.Close()
	defer os.Remove(out.Name())
	cmd := exec.CommandContext(ctx, opts.Valgrind, "--tool=cachegrind", "--cache-sim=no", "--branch-sim=no",
		"--cachegrind-out-file="+out.Name(),
		bin.Path, "-test.run=^$", "-test.bench="+BenchPattern(name), "-test.benchtime="+strconv.Itoa(n)+"x",
		"-test.count=1", "-test.cpu=1")
	cmd.Dir = bin.Package.Dir
	// GODEBUG=cpu.rdtscp=off keeps the runtime off an instruction some
	// valgrind builds cannot run.
	cmd.Env = append(os.Environ(), "GOGC=off", "GOMAXPROCS=1", "GODEBUG=cpu.rdtscp=off")
	var stderr, stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return 0, fmt.Errorf("%s: no result under valgrind within %v", name, opts.Timeout)
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		msg := strings.TrimSpace(failureLines(stdout.String()) + "\n" + valgrindErrors(stderr.String()))
		return 0, fmt.Errorf("%s under valgrind: %w: %s", name, err, firstLines(msg, 10))
	}
	if !ranBenchmark(stdout.String(), name) {
		return 0, fmt.Errorf("%s: the test binary of %s ran no such benchmark", name, bin.Package.ImportPath)
	}
	return readCachegrindTotal(out.Name())
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

// readCachegrindTotal reads the "summary:" line of a cachegrind output
// file: the instructions the whole program executed.
func readCachegrindTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read cachegrind output: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "summary:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				break
			}
			return strconv.ParseInt(fields[0], 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read cachegrind output %s: %w", filepath.Base(path), err)
	}
	return 0, fmt.Errorf("cachegrind output %s has no summary line", filepath.Base(path))
}
