package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	// Extend, if set, is called with everything measured once the
	// rounds are done and returns how many more rounds to run; 0 stops.
	// The gate uses it to keep measuring while the samples are too
	// noisy to decide. It must not look at which side is ahead, or the
	// extra rounds would bias the test.
	Extend func(rounds int, base, head *Results) int
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
}

// RunGate builds the test binaries of the base (checked out into a
// temporary git worktree) and of the working tree, then runs them
// interleaved. Errors wrap ErrNotGit, ErrUnknownRef, ErrDirty or are a
// *BuildError when the gate cannot start; after measuring began, the
// partial GateRun is returned with the error.
func RunGate(ctx context.Context, opts GateOptions) (*GateRun, error) {
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
	defer wt.Remove()
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, fmt.Errorf("module directory: %w", err)
	}
	baseDir := filepath.Join(wt.Dir, rel)
	if _, err := os.Stat(baseDir); err != nil {
		return nil, &BuildError{Tree: "base", Package: rel, Output: "the module directory does not exist at " + opts.BaseRef}
	}
	bins, err := os.MkdirTemp("", "perfscope-gate-")
	if err != nil {
		return nil, fmt.Errorf("create build directory: %w", err)
	}
	defer os.RemoveAll(bins)
	headBins, _, err := BuildTests(ctx, "head", dir, run.Packages, bins)
	if err != nil {
		return nil, err
	}
	baseBins, missing, err := BuildTests(ctx, "base", baseDir, run.Packages, bins)
	if err != nil {
		return nil, err
	}
	run.MissingInBase = missing
	run.Build = time.Since(start)

	start = time.Now()
	run.Raw = &Interleaved{}
	rounds := opts.Rounds
	for rounds > 0 {
		raw, err := RunInterleaved(ctx, InterleaveOptions{
			Base: baseBins, Head: headBins, Rounds: rounds, FirstRound: run.Rounds + 1,
			Bench: opts.Bench, Benchtime: opts.Benchtime, Progress: opts.Progress,
		})
		if raw != nil {
			run.Raw.Base = append(run.Raw.Base, raw.Base...)
			run.Raw.Head = append(run.Raw.Head, raw.Head...)
		}
		run.Base, _ = Parse(bytes.NewReader(run.Raw.Base), "base")
		run.Head, _ = Parse(bytes.NewReader(run.Raw.Head), "head")
		run.Measure = time.Since(start)
		if err != nil {
			return run, err
		}
		run.Rounds += rounds
		rounds = 0
		if opts.Extend != nil {
			rounds = opts.Extend(run.Rounds, run.Base, run.Head)
		}
	}
	return run, nil
}
