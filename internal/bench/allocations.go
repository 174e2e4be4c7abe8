package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/fetch"
)

// An AllocRun is a benchmark run twice with every allocation recorded: at
// minOperations and at minOperations + N operations, so that the
// difference of its two memory profiles, divided by N, is what one
// operation allocates, as an instruction count's difference is what one
// executes.
type AllocRun struct {
	Short, Long *profile.Profile
	N           int
	// Module is the import path of the benchmark's module and Root its
	// directory (see ModuleRelative).
	Module, Root string
}

// RecordAllocations runs benchmark name (as benchfmt names it: without
// "Benchmark", with any "-N" suffix) of bin at minOperations and minOperations + n
// operations (n at least 1) with -test.memprofile and
// -test.memprofilerate=1: every allocation is in the profiles, which
// are exact counts. The profiles are read through fetch's bounded reader.
func RecordAllocations(ctx context.Context, bin Binary, name string, n int) (*AllocRun, error) {
	n = max(n, 1)
	name = "Benchmark" + stripProcs(name)
	dir, err := os.MkdirTemp("", "perfscope-allocs-")
	if err != nil {
		return nil, fmt.Errorf("record allocations: %w", err)
	}
	defer os.RemoveAll(dir)
	root := moduleRoot(bin.Package.Dir)
	module, err := output(ctx, bin.Package.Dir, "go", "list", "-f", "{{with .Module}}{{.Path}}{{end}}", ".")
	if err != nil {
		return nil, fmt.Errorf("record allocations: %w", err)
	}
	run := &AllocRun{N: n, Module: strings.TrimSpace(module), Root: root}
	for _, ops := range []int{minOperations, minOperations + n} {
		path := filepath.Join(dir, strconv.Itoa(ops)+".mem.pb.gz")
		cmd := command(ctx, bin.Package.Dir, bin.Path, "-test.run=^$", "-test.bench="+BenchPattern(name),
			"-test.benchtime="+strconv.Itoa(ops)+"x", "-test.count=1", "-test.cpu=1",
			"-test.memprofile="+path, "-test.memprofilerate=1")
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s with every allocation recorded: %w: %s", name, err, firstLines(strings.TrimSpace(failureLines(string(out))), 10))
		}
		if !ranBenchmark(string(out), name) {
			return nil, fmt.Errorf("%s: the test binary of %s ran no such benchmark", name, bin.Package.ImportPath)
		}
		p, _, err := fetch.ParseFile(ctx, path, fetch.Limits{})
		if err != nil {
			return nil, fmt.Errorf("%s: read its memory profile: %w", name, err)
		}
		if ops == minOperations {
			run.Short = p
		} else {
			run.Long = p
		}
	}
	return run, nil
}
