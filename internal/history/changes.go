package history

import (
	"fmt"
	"math"
	"slices"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/perfscope/perfscope/internal/measure"
)

// A Point is one commit's samples of one benchmark metric.
type Point struct {
	Commit string
	Time   time.Time
	Values []float64
}

// Options tune DetectChanges; zero fields take the defaults.
type Options struct {
	// Alpha is the significance level of the U test between adjacent
	// commits; default 0.05, benchstat's.
	Alpha float64
	// Confidence is the level of the median's confidence interval;
	// default 0.95, benchstat's.
	Confidence float64
	// NoiseFactor is how many times the typical commit-to-commit change a
	// change must exceed; default 4. The typical change is a median
	// absolute deviation, about two thirds of a standard deviation for
	// normal noise, so 4 is about 2.7 standard deviations: a benchmark
	// that never changes gets a false mark about once in 150 commits
	// before the U test filters further.
	NoiseFactor float64
	// MinCommits is how many commits the noise estimate needs; with fewer,
	// nothing is marked. Default 5. Exact units need no noise estimate.
	MinCommits int
	// ExactChange is the relative change of an exact unit's median (see
	// Exact) that is marked; default 0.01, the gate's threshold for
	// instruction counts, which repeat within about 0.3%.
	ExactChange float64
}

// Exact reports whether unit is measured exactly: instruction counts
// repeat whatever the machine's load, so any change beyond
// Options.ExactChange is the code's, and neither the U test nor the
// series' noise is needed to tell.
func Exact(unit string) bool {
	return measure.Exact(unit, nil)
}

func (o Options) withDefaults() Options {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.NoiseFactor == 0 {
		o.NoiseFactor = 4
	}
	if o.MinCommits == 0 {
		o.MinCommits = 5
	}
	if o.ExactChange == 0 {
		o.ExactChange = 0.01
	}
	return o
}

// A Step is one commit's summary and its comparison with the
// commit before it: one step of the series.
type Step struct {
	Commit  string
	Time    time.Time
	N       int
	Summary benchmath.Summary // median and its confidence interval
	// Compared is false for the first commit, which has nothing before it.
	Compared bool
	// Delta is the relative change of the median from the previous commit
	// (+0.10 is 10% higher), measure.Change: ±Inf when the previous median
	// is 0.
	Delta float64
	// P is the U test's p-value against the previous commit.
	P float64
	// Changed marks a change that passed both the U test and the noise
	// threshold.
	Changed bool
	// Better is +1 when a change is an improvement, -1 when it is a
	// regression, 0 when unchanged or the unit does not say.
	Better int
}

// Changes is DetectChanges' verdict on one benchmark metric.
type Changes struct {
	Unit    string
	Commits []Step
	// Noise is the typical relative change of the median from one commit
	// to the next (0.02 is 2%), NaN when there are too few commits to
	// tell. It is the median absolute deviation of the log ratios of
	// adjacent medians, so that noise that halves a benchmark counts the
	// same as noise that doubles it.
	Noise float64
	// Threshold is the smallest relative change that is marked: a change
	// is marked when the median grows by more than this factor or
	// shrinks by more than its reciprocal (1+Threshold = (1+Noise)^NoiseFactor).
	Threshold float64
	// Warnings say why results may be weak (too few samples or commits);
	// each distinct warning once.
	Warnings []error
}

// DetectChanges summarises each commit's samples as benchstat does and marks
// the commits where the metric changed significantly. points must be in
// commit order, oldest first; points without samples are skipped. The
// yardstick is the whole series: a step is one adjacent pair among many, so
// it cannot raise the median noise that judges it, and early commits are
// judged like late ones. An exact unit (see Exact) is marked wherever its
// median moved by more than opts.ExactChange, from the second commit on.
func DetectChanges(unit string, points []Point, opts Options) Changes {
	opts = opts.withDefaults()
	out := Changes{Unit: unit, Noise: math.NaN(), Threshold: math.NaN()}
	seen := make(map[string]bool)
	warn := func(errs ...error) {
		for _, err := range errs {
			if !seen[err.Error()] {
				seen[err.Error()] = true
				out.Warnings = append(out.Warnings, err)
			}
		}
	}

	thresholds := &benchmath.Thresholds{CompareAlpha: opts.Alpha}
	out.Commits = make([]Step, 0, len(points))
	samples := make([]*benchmath.Sample, 0, len(points))
	for _, p := range points {
		if len(p.Values) == 0 {
			continue
		}
		// NewSample sorts in place; the caller's slice stays as it was.
		s := benchmath.NewSample(slices.Clone(p.Values), thresholds)
		sum := benchmath.AssumeNothing.Summary(s, opts.Confidence)
		warn(sum.Warnings...)
		out.Commits = append(out.Commits, Step{Commit: p.Commit, Time: p.Time, N: len(p.Values), Summary: sum})
		samples = append(samples, s)
	}
	if len(out.Commits) == 0 {
		out.Commits = nil
	}

	utest := newUTestMemo()
	logRatios := make([]float64, 0, len(out.Commits))
	for i := 1; i < len(out.Commits); i++ {
		c := &out.Commits[i]
		c.Compared = true
		if measure.Constant(samples[i-1].Values, samples[i].Values) {
			// The U test has nothing to rank and would warn about
			// it; for exact units such as allocs/op this is the
			// usual, healthy case.
			c.P = 1
		} else {
			cmp := utest.compare(samples[i-1], samples[i])
			warn(cmp.Warnings...)
			c.P = cmp.P
		}
		c.Delta = measure.Change(out.Commits[i-1].Summary.Center, c.Summary.Center)
		if lr := math.Log1p(c.Delta); !math.IsInf(lr, 0) && !math.IsNaN(lr) {
			logRatios = append(logRatios, lr)
		}
	}
	mark := func(i int) {
		c := &out.Commits[i]
		c.Changed = true
		c.Better = measure.Improves(unit, nil, out.Commits[i-1].Summary.Center, c.Summary.Center)
	}
	if Exact(unit) {
		out.Threshold = opts.ExactChange
		for i := range out.Commits {
			if c := &out.Commits[i]; c.Compared && math.Abs(c.Delta) > opts.ExactChange {
				mark(i)
			}
		}
		return out
	}
	if len(out.Commits) < opts.MinCommits || len(logRatios) < opts.MinCommits-1 {
		if len(out.Commits) > 1 {
			warn(fmt.Errorf("need >= %d commits to tell changes from noise; have %d", opts.MinCommits, len(out.Commits)))
		}
		return out
	}
	noise := mad(logRatios)
	out.Noise = math.Expm1(noise)
	out.Threshold = math.Expm1(opts.NoiseFactor * noise)

	for i := range out.Commits {
		c := &out.Commits[i]
		// Infinite (from or to zero) and NaN log ratios count as
		// beyond any threshold: the U test alone decides them.
		if !c.Compared || c.P > opts.Alpha || math.Abs(math.Log1p(c.Delta)) <= opts.NoiseFactor*noise {
			continue
		}
		mark(i)
	}
	return out
}

// mad is the median absolute deviation from the median: robust to
// the few real changes among the many noisy ones.
func mad(xs []float64) float64 {
	med := measure.Center(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	return measure.Center(dev)
}
