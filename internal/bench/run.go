package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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
	// .perfscope/bench/<time>-<commit>.txt under Dir. Until the run ends
	// it is written as Output+PartialSuffix.
	Output string
	// Progress, if set, is called as benchmarks start and finish. Setting
	// it also lists the benchmarks of the test binaries before they run,
	// so that each Progress places its benchmark in the whole job.
	Progress func(Progress)
	// Building, if set, is told the import paths of the packages whose
	// tests are about to be built, a step that takes seconds without
	// output (report.BuildingTests says it in a line).
	Building func(packages []string)
	// Log receives output that is not results (build errors, what the
	// test binaries print on stderr); nil discards it.
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
	// Notes are what a reader should know about the measurements that
	// is not a failure.
	Notes []string
	// CountNotes are what limited or prevented instruction counts, such
	// as a benchmark counted by time only.
	CountNotes []CountNote
	// Interrupted is set when the run was stopped early (its context was
	// cancelled, as Ctrl-C does): Results are those measured until then,
	// and the results file ends with "interrupted: true".
	Interrupted bool
	// Counted are the instruction counts of the run's benchmarks, with
	// their per-function profiles, when instructions were counted.
	Counted []*CountedBenchmark
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
func (o Options) TestArgs() []string { return o.testFlags("-") }

// binaryArgs returns the same flags as a test binary takes them.
func (o Options) binaryArgs() []string { return o.testFlags("-test.") }

func (o Options) testFlags(prefix string) []string {
	o = o.withDefaults()
	args := []string{prefix + "run", "^$", prefix + "bench", o.Bench, prefix + "benchmem", prefix + "count", strconv.Itoa(o.Count)}
	if o.Benchtime != "" {
		args = append(args, prefix+"benchtime", o.Benchtime)
	}
	if o.CPU != "" {
		args = append(args, prefix+"cpu", o.CPU)
	}
	return args
}

// Run benchmarks the packages one at a time (one package at a time keeps
// the progress honest), appending each package's output to the results
// file as it arrives. It builds each package's test binary ("go test -c")
// and runs it itself, as "go test" would, in the package's directory (see
// command for why not under "go test"). A package whose tests do not build
// or whose benchmarks fail does not stop the others; Run returns an error
// naming the failed packages together with the RunRecord, whose results
// file keeps everything measured.
//
// The results file is written as Output+PartialSuffix and renamed Output
// when the run ends. When ctx is cancelled, the benchmark running is
// killed, the results measured until then are kept, the file ends with
// "interrupted: true" and the RunRecord says Interrupted.
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
	out, err := createResults(opts.Output)
	if err != nil {
		return nil, err
	}
	defer out.f.Close()
	for _, l := range meta.ConfigLines() {
		if _, err := io.WriteString(out, l+"\n"); err != nil {
			return nil, fmt.Errorf("write results file: %w", err)
		}
	}
	tmp, err := os.MkdirTemp("", "perfscope-bench-")
	if err != nil {
		return nil, fmt.Errorf("create temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	if opts.Building != nil {
		paths := make([]string, len(pkgs))
		for i, p := range pkgs {
			paths[i] = p.ImportPath
		}
		opts.Building(paths)
	}
	run := &RunRecord{Meta: meta, Path: opts.Output, Args: opts.TestArgs()}
	bins := make([]Binary, len(pkgs))
	for i, pkg := range pkgs {
		run.Packages = append(run.Packages, PackageRun{ImportPath: pkg.ImportPath})
		bins[i] = Binary{Package: pkg, Path: testBinaryPath(tmp, "", i)}
		if err := buildTest(ctx, opts.Dir, bins[i]); err != nil {
			run.Packages[i].Err = err
			fmt.Fprintln(opts.Log, err)
		}
		if ctx.Err() != nil {
			break
		}
	}

	// Counting the benchmarks first gives a person watching an overall
	// position.
	var counts []int
	total := 0
	if opts.Progress != nil && ctx.Err() == nil {
		for i, bin := range bins {
			var names []string
			if run.Packages[i].Err == nil {
				if names, err = ListBenchmarks(ctx, bin, opts.Bench); err != nil {
					counts, total = nil, 0
					break
				}
			}
			counts = append(counts, len(names))
			total += len(names)
		}
	}

	args := opts.binaryArgs()
	stem := strings.TrimSuffix(opts.Output, filepath.Ext(opts.Output))
	for i, bin := range bins {
		if ctx.Err() != nil {
			break
		}
		pr := &run.Packages[i]
		if pr.Err != nil {
			continue
		}
		args := slices.Clone(args)
		if opts.CPUProfile {
			pr.CPUProfile, _ = filepath.Abs(stem + "." + fileSafe(pr.ImportPath) + ".cpu.pb.gz")
			args = append(args, "-test.cpuprofile", pr.CPUProfile)
		}
		if opts.MemProfile {
			pr.MemProfile, _ = filepath.Abs(stem + "." + fileSafe(pr.ImportPath) + ".mem.pb.gz")
			args = append(args, "-test.memprofile", pr.MemProfile)
		}
		base := Progress{Package: pr.ImportPath, PackageIndex: i + 1, Packages: len(pkgs), Rounds: opts.Count}
		if total > 0 {
			base.Benchmarks, base.BenchmarkIndex = total, 1
			for _, n := range counts[:i] {
				base.BenchmarkIndex += n
			}
		}
		w := newProgressWriter(out, base, opts.Progress)
		if err := runBinary(ctx, bin, args, w, opts.Log); err != nil && ctx.Err() == nil {
			pr.Err = err
		}
	}
	run.Interrupted = ctx.Err() != nil
	if err := out.finish(run.Interrupted); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(opts.Output)
	if err != nil {
		return nil, fmt.Errorf("read results file: %w", err)
	}
	run.Results, _ = Parse(bytes.NewReader(data), opts.Output)
	if c := configValue(run.Results, "cpu"); c != "" {
		run.Meta.CPU = strings.Join(strings.Fields(c), " ")
	}
	if run.Interrupted {
		return run, fmt.Errorf("benchmarks interrupted; the results measured until then are in %s: %w", opts.Output, ctx.Err())
	}
	var failed []string
	var errs []error
	for _, p := range run.Packages {
		if p.Err != nil {
			failed = append(failed, p.ImportPath)
			errs = append(errs, fmt.Errorf("%s: %w", p.ImportPath, p.Err))
		}
	}
	if len(failed) > 0 {
		return run, fmt.Errorf("benchmarks failed in %s (other results are in %s): %w", strings.Join(failed, ", "), opts.Output, errors.Join(errs...))
	}
	return run, nil
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
