package gate

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/measure"
)

// Bisection finds the first commit between a good and a bad one at which
// a benchmark's exact measure moved beyond a threshold. Exact measures make
// it deterministic: a commit's count is the same on a quiet machine and a
// busy one, so every commit is measured once and the search needs
// O(log n) builds, where bisecting by wall time needs many samples per
// commit and can still be wrong.

// Measures of bisect's --measure, and the unit each follows.
var bisectUnits = map[string]string{
	"instructions": bench.UnitInstructions,
	"allocs":       "allocs/op",
	"bytes":        "B/op",
}

// BisectUnit returns the unit that a measure of bisect's --measure names:
// instructions (instructions/op, counted under valgrind), allocs
// (allocs/op) or bytes (B/op).
func BisectUnit(m string) (string, error) {
	if u, ok := bisectUnits[m]; ok {
		return u, nil
	}
	return "", fmt.Errorf("--measure %q: want instructions, allocs or bytes", m)
}

// A BisectInputError is a bisection refused before anything was measured
// or recorded: the commits or the pattern name nothing that can be
// searched. Its message is one line saying what to change.
type BisectInputError struct{ Msg string }

func (e *BisectInputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &BisectInputError{fmt.Sprintf(format, args...)}
}

// ErrBisectNotMeasured wraps the failure to measure the good or the bad
// commit: without both ends there is nothing to search between.
var ErrBisectNotMeasured = errors.New("cannot measure")

// BisectOptions configure a bisection.
type BisectOptions struct {
	// Dir is the module directory in the user's work tree; default ".".
	// Each commit is checked out into a temporary worktree, so the work
	// tree itself is never touched and may have changes.
	Dir string
	// Good and Bad are git references: the commit where the measure was
	// as wanted and a later one where it is not. Good must be an
	// ancestor of Bad.
	Good, Bad string
	// Bench is the -test.bench regular expression of the benchmarks
	// followed; required.
	Bench string
	// Packages are package patterns; default ".".
	Packages []string
	// Unit is the measure followed: instructions/op (default), allocs/op
	// or B/op (see BisectUnit).
	Unit string
	// Threshold is the relative change from the good commit beyond which
	// a commit counts as moved: 0.01 for 1%; 0 for any change.
	Threshold float64
	// Benchtime is the -test.benchtime of the ordinary run that finds the
	// benchmarks and measures allocations; default DefaultBenchtime.
	Benchtime string
	// Instructions configure counts (instructions/op); Valgrind is found
	// on PATH when empty.
	Instructions bench.InstructionOptions
	// Progress, if set, is told of each commit as its measuring begins
	// (Verdict "") and as it ends.
	Progress func(BisectStep)
}

// Verdicts of a measured commit.
const (
	BisectGood    = "good"    // the measure is within the threshold of the good commit's
	BisectBad     = "bad"     // it moved beyond the threshold, as at the bad commit
	BisectSkipped = "skipped" // not measured: see the step's Reason
)

// A BisectStep is one commit the bisection built: what it measured there
// and what it concluded.
type BisectStep struct {
	gitstate.PathCommit
	// Role is "good" or "bad" for the commits named, "probe" for those
	// the search chose.
	Role string `json:"role"`
	// Verdict is BisectGood, BisectBad or BisectSkipped; "" while it is
	// being measured.
	Verdict string `json:"verdict"`
	// Reason says why a commit was skipped: it does not build, or its
	// test binary lacks a benchmark, or a count failed.
	Reason string        `json:"reason,omitempty"`
	Values []BisectValue `json:"values,omitempty"`
	// Elapsed is how long building and measuring took.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Record is what was measured, as a benchmark run of the commit with
	// the followed unit only, for the store; nil when skipped.
	Record *bench.RunRecord `json:"-"`
}

// A BisectValue is one benchmark's measure at a commit.
type BisectValue struct {
	Package   string  `json:"package"`
	Benchmark string  `json:"benchmark"`
	Value     float64 `json:"value"`
	// Change is relative to the good commit (see measure.Change).
	Change float64 `json:"change"`
}

// A BisectBenchmark is a benchmark the pattern matched at both ends.
type BisectBenchmark struct {
	Package   string  `json:"package"`
	Benchmark string  `json:"benchmark"`
	Good      float64 `json:"good"`
	Bad       float64 `json:"bad"`
	Change    float64 `json:"change"`
	// Moved marks a change beyond the threshold: the search follows
	// these, in the direction they moved.
	Moved bool `json:"moved"`
}

// A BisectEnd is the good or the bad commit as the user named it.
type BisectEnd struct {
	Ref string `json:"ref"`
	gitstate.PathCommit
}

// A BisectResult is what a bisection found.
type BisectResult struct {
	Good      BisectEnd `json:"good"`
	Bad       BisectEnd `json:"bad"`
	Unit      string    `json:"unit"`
	Threshold float64   `json:"threshold"`
	Bench     string    `json:"bench"`
	// PathCommits is how many commits lie on bad's first-parent path
	// after good, bad included: the commits searched.
	PathCommits int               `json:"path_commits"`
	Benchmarks  []BisectBenchmark `json:"benchmarks"`
	// Moved reports whether any benchmark moved beyond the threshold
	// from good to bad; without one there is nothing to find.
	Moved bool `json:"moved"`
	// FirstBad is the first commit measured bad whose predecessor on the
	// path was measured good: the answer, unless Candidates is set.
	FirstBad *BisectStep `json:"first_bad,omitempty"`
	// LastGood is the commit measured good just before it (the good
	// commit itself when the path's first commit is the answer).
	LastGood *BisectStep `json:"last_good,omitempty"`
	// Candidates is set when skipped commits lie between LastGood and
	// FirstBad: the change began at one of them or at FirstBad, which
	// are listed oldest first.
	Candidates []gitstate.PathCommit `json:"candidates,omitempty"`
	// Steps are the commits built, in the order they were; Skipped those
	// of them that were skipped.
	Steps   []BisectStep `json:"steps"`
	Skipped []BisectStep `json:"skipped"`
	// Builds counts the commits built; Counted those measured (builds
	// minus skips).
	Builds  int `json:"builds"`
	Counted int `json:"counted"`
	// Explanations say, for each benchmark that moved, where between the
	// last good commit and the first bad one its measure changed: the
	// functions and lines (instructions/op) or the allocation sites
	// (allocs/op, B/op), exactly, as the gate explains its changes. Only
	// when the two are parent and child.
	Explanations []Explanation `json:"explanations,omitempty"`
	// Notes are what a reader should know: an explanation that could
	// not be made, a last good commit that is not the answer's parent.
	Notes   []string      `json:"notes,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Exact reports whether the answer is one commit: it was found and no
// skipped commit leaves it open.
func (r *BisectResult) Exact() bool { return r.FirstBad != nil && len(r.Candidates) == 0 }

// ExitCode is the exit status of a bisection: 0 when it found where the
// measure moved (exactly or among skipped commits), 1 when it had not
// moved between good and bad and there was nothing to find.
func (r *BisectResult) ExitCode() int {
	if !r.Moved {
		return 1
	}
	return 0
}

// moved reports whether a value moved from the good commit's beyond the
// threshold, in the direction dir (+1 up, -1 down, 0 either).
func moved(good, v, threshold float64, dir int) bool {
	c := measure.Change(good, v)
	if math.IsNaN(c) || math.Abs(c) <= threshold {
		return false
	}
	return dir == 0 || (c > 0) == (dir > 0)
}

// searchPath is the search itself, on a path of n commits whose last is
// known bad and whose predecessor (index -1) is known good. probe measures
// the commit at index i and returns its verdict. It returns the last index
// measured good (-1 for the good commit) and the first measured bad after
// it: every commit between them was skipped. Each probe is the commit
// nearest the middle of what is left that was not skipped, as git bisect
// skip moves to a neighbour.
func searchPath(n int, probe func(i int) (string, error)) (lo, hi int, err error) {
	lo, hi = -1, n-1
	skipped := make(map[int]bool)
	for {
		i := nextProbe(lo, hi, skipped)
		if i < 0 {
			return lo, hi, nil
		}
		v, err := probe(i)
		if err != nil {
			return lo, hi, err
		}
		switch v {
		case BisectGood:
			lo = i
		case BisectBad:
			hi = i
		default:
			skipped[i] = true
		}
	}
}

// nextProbe returns the index strictly between lo and hi, not skipped,
// nearest their middle (the later of two equally near), or -1 when none
// is left.
func nextProbe(lo, hi int, skipped map[int]bool) int {
	mid := lo + (hi-lo)/2
	for d := 0; d < hi-lo; d++ {
		for _, i := range []int{mid + d, mid - d} {
			if i > lo && i < hi && !skipped[i] {
				return i
			}
		}
	}
	return -1
}

// benchKey names a benchmark: its package and full name.
type benchKey struct{ pkg, name string }

func (k benchKey) String() string {
	if k.pkg == "" {
		return "Benchmark" + k.name
	}
	return k.pkg + " Benchmark" + k.name
}

// keyList writes benchmark names for a message, a few at most.
func keyList(keys []benchKey) string {
	var names []string
	for i, k := range keys {
		if i == 3 {
			names = append(names, "and others")
			break
		}
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}
