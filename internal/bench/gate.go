package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ErrDirty means the work tree has uncommitted changes and the caller did
// not allow them.
var ErrDirty = errors.New("the work tree has uncommitted changes")

// GateOptions configure the measurement half of a gate run.
type GateOptions struct {
	// Dir is the module directory in the head work tree; default ".".
	Dir string
	// BaseRef is the git reference of the base ("main", "HEAD~1").
	BaseRef string
	// Packages are package patterns; default "./...".
	Packages []string
	// AllowDirty lets uncommitted changes count as the head.
	AllowDirty bool
	// Rounds, Bench and Benchtime: see InterleaveOptions.
	Rounds           int
	Bench, Benchtime string
	// Progress, if set, is called as benchmarks start and finish.
	Progress func(Progress)
	// Instructions configure instruction counts (GateBuild.Count).
	Instructions InstructionOptions
	// CountProgress, if set, is called before each instruction count
	// with the side ("base", "head") and the benchmark.
	CountProgress func(side string, done, total int, name string)
}

// A GateRun is what the gate measured: both sides' results from the same
// interleaved run, with what they were built from.
type GateRun struct {
	Meta       Meta   // of the head (working tree)
	BaseCommit string // full hash
	// Packages are the import paths benchmarked; MissingInBase those
	// that exist only in the head.
	Packages, MissingInBase []string
	Base, Head              *Results
	Raw                     *Interleaved
	// Rounds is how many rounds ran, extensions included.
	Rounds int
	// Build and Measure are how long building and running took.
	Build, Measure time.Duration
	// Counted are the instruction counts of the base and the head, when
	// Count ran; their results are part of Base and Head too.
	CountedBase, CountedHead []*CountedBenchmark
}

// RunGate builds the test binaries of the base and of the working tree
// (see BuildGate) and runs opts.Rounds interleaved rounds of them. After
// measuring began, the partial GateRun is returned with any error.
func RunGate(ctx context.Context, opts GateOptions) (*GateRun, error) {
	g, err := BuildGate(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	err = g.Measure(ctx, opts.Rounds)
	return g.Run, err
}

// A GateBuild is the base's and the head's test binaries, built and ready
// to run interleaved rounds, with everything measured so far. Close it to
// remove the base's worktree and the binaries.
type GateBuild struct {
	// Run is what was measured so far.
	Run *GateRun

	opts       GateOptions
	base, head []Binary
	worktree   *Worktree
	bins       string
	start      time.Time // of the first round
	// warm holds the binaries measured warm from now on (see
	// RunInterleaved).
	warm map[string]bool
}

// BuildGate builds the test binaries of the base (checked out into a
// temporary git worktree) and of the working tree. Errors wrap ErrNotGit,
// ErrUnknownRef, ErrDirty or are a *BuildError.
func BuildGate(ctx context.Context, opts GateOptions) (*GateBuild, error) {
	if opts.Dir == "" {
		opts.Dir = "."
	}
	if len(opts.Packages) == 0 {
		opts.Packages = []string{"./..."}
	}
	if opts.Bench == "" {
		opts.Bench = "."
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("module directory: %w", err)
	}
	root, err := RepoRoot(ctx, dir)
	if err != nil {
		return nil, err
	}
	baseCommit, err := ResolveRef(ctx, root, opts.BaseRef)
	if err != nil {
		return nil, err
	}
	meta, err := Environment(ctx, dir)
	if err != nil {
		return nil, err
	}
	if meta.Dirty && !opts.AllowDirty {
		return nil, ErrDirty
	}
	pkgs, err := ListPackages(ctx, dir, opts.Packages)
	if err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no packages with tests match %v", opts.Packages)
	}
	run := &GateRun{Meta: meta, BaseCommit: baseCommit}
	for _, p := range pkgs {
		run.Packages = append(run.Packages, p.ImportPath)
	}

	start := time.Now()
	wt, err := AddWorktree(ctx, root, baseCommit)
	if err != nil {
		return nil, err
	}
	g := &GateBuild{Run: run, opts: opts, worktree: wt, warm: make(map[string]bool)}
	built := false
	defer func() {
		if !built {
			g.Close()
		}
	}()
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, fmt.Errorf("module directory: %w", err)
	}
	baseDir := filepath.Join(wt.Dir, rel)
	if _, err := os.Stat(baseDir); err != nil {
		return nil, &BuildError{Tree: "base", Package: rel, Output: "the module directory does not exist at " + opts.BaseRef}
	}
	if g.bins, err = os.MkdirTemp("", "perfscope-gate-"); err != nil {
		return nil, fmt.Errorf("create build directory: %w", err)
	}
	if g.head, _, err = BuildTests(ctx, "head", dir, run.Packages, g.bins); err != nil {
		return nil, err
	}
	if g.base, run.MissingInBase, err = BuildTests(ctx, "base", baseDir, run.Packages, g.bins); err != nil {
		return nil, err
	}
	run.Build = time.Since(start)
	run.Raw = &Interleaved{}
	built = true
	return g, nil
}

// Measure runs rounds more interleaved rounds and adds them to g.Run. On
// an error g.Run keeps everything measured, the interrupted round's output
// included, while its Rounds counts only the rounds completed.
func (g *GateBuild) Measure(ctx context.Context, rounds int) error {
	run := g.Run
	if run.Rounds == 0 {
		g.start = time.Now()
	}
	raw, err := RunInterleaved(ctx, InterleaveOptions{
		Base: g.base, Head: g.head, Rounds: rounds, FirstRound: run.Rounds + 1,
		Bench: g.opts.Bench, Benchtime: g.opts.Benchtime, Progress: g.opts.Progress, Warm: g.warm,
	})
	if raw != nil {
		run.Raw.Base = append(run.Raw.Base, raw.Base...)
		run.Raw.Head = append(run.Raw.Head, raw.Head...)
		run.Raw.Cold = mergeSorted(run.Raw.Cold, raw.Cold)
	}
	run.Base, _ = Parse(bytes.NewReader(run.Raw.Base), "base")
	run.Head, _ = Parse(bytes.NewReader(run.Raw.Head), "head")
	run.Measure = time.Since(g.start)
	if err != nil {
		return err
	}
	run.Rounds += rounds
	return nil
}

// Binaries returns the base's and the head's test binaries of the package
// with import path pkg; ok is false when a side has none.
func (g *GateBuild) Binaries(pkg string) (base, head Binary, ok bool) {
	find := func(bins []Binary) (Binary, bool) {
		for _, b := range bins {
			if b.Package.ImportPath == pkg {
				return b, true
			}
		}
		return Binary{}, false
	}
	base, okBase := find(g.base)
	head, okHead := find(g.head)
	return base, head, okBase && okHead
}

// Close removes the base's worktree and the test binaries.
func (g *GateBuild) Close() {
	if g.bins != "" {
		os.RemoveAll(g.bins)
	}
	g.worktree.Remove()
}

// Count counts the instructions of the benchmarks the rounds so far
// measured for which keep (nil: every one) reports true, given the
// package's import path and the benchmark's name, on both sides at once,
// reps times each (see CountBenchmarks),
// and adds the counts to g.Run's Base and Head results and to its raw
// output, so a saved run keeps them. Counts do not depend on what else
// runs, so the sides share the machine's processors without disturbing
// each other. Benchmarks that could not be counted keep their Err in
// g.Run.CountedBase and CountedHead; the error is only for cancellation.
func (g *GateBuild) Count(ctx context.Context, reps int, opts InstructionOptions, keep func(pkg, name string) bool) error {
	run := g.Run
	type side struct {
		name    string
		bins    []Binary
		results *Results
		counted []*CountedBenchmark
		err     error
	}
	sides := []*side{{name: "base", bins: g.base, results: run.Base}, {name: "head", bins: g.head, results: run.Head}}
	var wg sync.WaitGroup
	for _, s := range sides {
		wg.Go(func() {
			var progress func(done, total int, bench string)
			if g.opts.CountProgress != nil {
				progress = func(done, total int, bench string) { g.opts.CountProgress(s.name, done, total, bench) }
			}
			// Plan from the ordinary run's results alone: earlier counts
			// carry neither time nor allocation.
			ordinary := &Results{}
			for _, r := range s.results.Results {
				if _, counted := r.Value(UnitInstructions); !counted && (keep == nil || keep(r.GetConfig("pkg"), string(r.Name))) {
					ordinary.Results = append(ordinary.Results, r)
				}
			}
			for _, bin := range s.bins {
				c, err := CountBenchmarks(ctx, bin, ordinary, reps, opts, progress)
				s.counted = append(s.counted, c...)
				if err != nil {
					s.err = err
					return
				}
			}
		})
	}
	wg.Wait()
	run.CountedBase = append(run.CountedBase, sides[0].counted...)
	run.CountedHead = append(run.CountedHead, sides[1].counted...)
	for i, raw := range []*[]byte{&run.Raw.Base, &run.Raw.Head} {
		s := sides[i]
		if s.err != nil {
			return s.err
		}
		out, res, err := instructionResults(s.counted)
		if err != nil {
			return err
		}
		*raw = append(*raw, out...)
		addResults(s.results, res)
	}
	return nil
}
