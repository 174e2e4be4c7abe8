package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/gitstate"
)

// Options configure a benchmark run ("perfscope bench").
type Options struct {
	// Dir is the directory "go test" runs in; default ".".
	Dir string
	// Packages are package patterns; default ".".
	Packages []string
	// Bench is the -bench regular expression; default ".".
	Bench string
	// Count is -count, the samples per benchmark; default 10.
	Count int
	// Benchtime and CPU are passed as -benchtime and -cpu when set.
	Benchtime, CPU string
	// CPUProfile and MemProfile save a profile per package beside the
	// results file: RESULTS.<package>.cpu.pb.gz and .mem.pb.gz.
	CPUProfile, MemProfile bool
	// Output is the results file; default
	// .perfscope/bench/<time>-<commit>.txt under Dir.
	Output string
	// Progress, if set, is called as benchmarks start and finish. Setting
	// it also counts the benchmarks before the run (building the test
	// binaries the run then finds in the cache), so that each Progress
	// places its benchmark in the whole job.
	Progress func(Progress)
	// Status, if set, is told in one line of a step that takes seconds
	// without output, before it starts.
	Status func(msg string)
	// Log receives "go test" output that is not results (build errors,
	// test failures); nil discards it.
	Log io.Writer
}

// A RunRecord is a finished benchmark run: what ran, where and on what, and the
// parsed results, everything needed to record it in history.
type RunRecord struct {
	Meta Meta
	// Path is the results file written, in Go benchmark format.
	Path string
	// Packages are the packages benchmarked, in order.
	Packages []PackageRun
	// Results are all parsed results, in file order.
	Results *Results
	// Args are the "go test" flags used (without package).
	Args []string
}

// A PackageRun is one package's part of a RunRecord.
type PackageRun struct {
	ImportPath string `json:"import_path"`
	// CPUProfile and MemProfile are the saved profiles, if requested.
	CPUProfile string `json:"cpu_profile,omitempty"`
	MemProfile string `json:"mem_profile,omitempty"`
	// Err is why this package's benchmarks failed, if they did; the
	// results measured before the failure are kept.
	Err error `json:"-"`
}

func (o Options) withDefaults() Options {
	if o.Dir == "" {
		o.Dir = "."
	}
	if len(o.Packages) == 0 {
		o.Packages = []string{"."}
	}
	if o.Bench == "" {
		o.Bench = "."
	}
	if o.Count <= 0 {
		o.Count = 10
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// TestArgs returns the "go test" benchmark flags for the options.
func (o Options) TestArgs() []string {
	o = o.withDefaults()
	args := []string{"-run", "^$", "-bench", o.Bench, "-benchmem", "-count", strconv.Itoa(o.Count)}
	if o.Benchtime != "" {
		args = append(args, "-benchtime", o.Benchtime)
	}
	if o.CPU != "" {
		args = append(args, "-cpu", o.CPU)
	}
	return args
}

// Run benchmarks the packages one at a time (go test accepts profile
// flags for a single package only, and one package at a time keeps the
// progress honest), appending each package's output to the results file
// as it arrives. A package whose benchmarks fail does not stop the
// others; Run returns an error naming the failed packages together with
// the RunRecord, whose results file keeps everything measured.
func Run(ctx context.Context, opts Options) (*RunRecord, error) {
	opts = opts.withDefaults()
	meta, err := Environment(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	pkgs, err := ListPackages(ctx, opts.Dir, opts.Packages)
	if err != nil {
		return nil, err
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no packages with tests match %s", strings.Join(opts.Packages, " "))
	}
	if opts.Output == "" {
		opts.Output = filepath.Join(opts.Dir, ".perfscope", "bench", defaultName(meta))
	}
	if err := os.MkdirAll(filepath.Dir(opts.Output), 0o755); err != nil {
		return nil, fmt.Errorf("create results directory: %w", err)
	}
	out, err := os.Create(opts.Output)
	if err != nil {
		return nil, fmt.Errorf("create results file: %w", err)
	}
	defer out.Close()
	var header bytes.Buffer
	for _, l := range meta.ConfigLines() {
		header.WriteString(l + "\n")
	}
	if _, err := out.Write(header.Bytes()); err != nil {
		return nil, fmt.Errorf("write results file: %w", err)
	}
	tmp, err := os.MkdirTemp("", "perfscope-bench-")
	if err != nil {
		return nil, fmt.Errorf("create temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	// Counting the benchmarks first gives a person watching an overall
	// position; the test binaries it builds are the run's, from the cache.
	var counts []int
	total := 0
	if opts.Progress != nil {
		if opts.Status != nil {
			what := pkgs[0].ImportPath
			if len(pkgs) > 1 {
				what = fmt.Sprintf("%d packages", len(pkgs))
			}
			opts.Status("building the tests of " + what + " to count their benchmarks")
		}
		for _, pkg := range pkgs {
			names, err := ListBenchmarks(ctx, opts.Dir, pkg.ImportPath, opts.Bench)
			if err != nil {
				counts, total = nil, 0
				break
			}
			counts = append(counts, len(names))
			total += len(names)
		}
	}

	run := &RunRecord{Meta: meta, Path: opts.Output, Args: opts.TestArgs()}
	var all bytes.Buffer
	all.Write(header.Bytes())
	var failed []string
	stem := strings.TrimSuffix(opts.Output, filepath.Ext(opts.Output))
	for i, pkg := range pkgs {
		pr := PackageRun{ImportPath: pkg.ImportPath}
		args := append([]string{"test"}, run.Args...)
		// -o keeps the test binary that profiling flags would
		// otherwise leave in the current directory.
		args = append(args, "-o", filepath.Join(tmp, fmt.Sprintf("%d.test", i)))
		if opts.CPUProfile {
			pr.CPUProfile, _ = filepath.Abs(stem + "." + fileSafe(pkg.ImportPath) + ".cpu.pb.gz")
			args = append(args, "-cpuprofile", pr.CPUProfile)
		}
		if opts.MemProfile {
			pr.MemProfile, _ = filepath.Abs(stem + "." + fileSafe(pkg.ImportPath) + ".mem.pb.gz")
			args = append(args, "-memprofile", pr.MemProfile)
		}
		args = append(args, pkg.ImportPath)
		base := Progress{Package: pkg.ImportPath, PackageIndex: i + 1, Packages: len(pkgs), Rounds: opts.Count}
		if total > 0 {
			base.Benchmarks, base.BenchmarkIndex = total, 1
			for _, n := range counts[:i] {
				base.BenchmarkIndex += n
			}
		}
		var stdout bytes.Buffer
		w := newProgressWriter(io.MultiWriter(out, &stdout), base, opts.Progress)
		if err := goTest(ctx, opts.Dir, args, w, opts.Log); err != nil {
			pr.Err = err
			failed = append(failed, pkg.ImportPath)
		}
		all.Write(stdout.Bytes())
		run.Packages = append(run.Packages, pr)
		if ctx.Err() != nil {
			break
		}
	}
	if err := out.Close(); err != nil {
		return nil, fmt.Errorf("write results file: %w", err)
	}
	run.Results, _ = Parse(bytes.NewReader(all.Bytes()), opts.Output)
	if c := configValue(run.Results, "cpu"); c != "" {
		run.Meta.CPU = strings.Join(strings.Fields(c), " ")
	}
	if ctx.Err() != nil {
		return run, fmt.Errorf("benchmarks interrupted; results so far are in %s: %w", opts.Output, ctx.Err())
	}
	if len(failed) > 0 {
		var errs []error
		for _, p := range run.Packages {
			if p.Err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.ImportPath, p.Err))
			}
		}
		return run, fmt.Errorf("benchmarks failed in %s (other results are in %s): %w", strings.Join(failed, ", "), opts.Output, errors.Join(errs...))
	}
	return run, nil
}

// goTest runs "go test" with stdout to w. stderr (and, on failure, the
// non-result part of stdout that "go test" uses for build errors and
// panics) goes to log.
func goTest(ctx context.Context, dir string, args []string, w, log io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stdout = w
	cmd.Stderr = io.MultiWriter(&stderr, log)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("go test: %s", firstLines(msg, 10))
		}
		return fmt.Errorf("go test: %w (see the results file for its output)", err)
	}
	return nil
}

// defaultName names a results file by start time and commit so files sort
// by time and say what they measured.
func defaultName(m Meta) string {
	name := m.Time.UTC().Format("20060102T150405Z")
	if m.Commit != "" {
		name += "-" + gitstate.Short(m.Commit)
		if m.Dirty {
			name += "-dirty"
		}
	}
	return name + ".txt"
}

func fileSafe(importPath string) string {
	return strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(importPath)
}

func configValue(r *Results, key string) string {
	if r == nil {
		return ""
	}
	for _, res := range r.Results {
		if v := res.GetConfig(key); v != "" {
			return v
		}
	}
	return ""
}
