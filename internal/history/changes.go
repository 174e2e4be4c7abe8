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
	// change of a noisy measure must exceed; default 4. The typical
	// change is a median absolute deviation, about two thirds of a
	// standard deviation for normal noise, so 4 is about 2.7 standard
	// deviations: a benchmark that never changes gets a false mark about
	// once in 150 commits before the U test filters further.
	NoiseFactor float64
	// MinCommits is how many commits the noise estimate of a noisy
	// measure (sec/op) needs; with fewer, such a measure is not marked.
	// Default 5. Exact and allocation measures need no noise estimate
	// and are marked from the second commit on.
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

// Deterministic reports whether unit counts allocations: allocs/op and B/op
// repeat from run to run of unchanged code, up to the odd run that
// allocates a little more (a map growing, a buffer pool refilled). A step
// of such a unit whose samples do not overlap is the code's.
func Deterministic(unit string) bool {
	return unit == "allocs/op" || unit == "B/op"
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
	// (+0.10 is 10% higher); ±Inf when the previous median is 0.
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

// A Detection is DetectChanges' verdict on one benchmark metric.
type Detection struct {
	Unit    string
	Commits []Step
	// Noise is the typical relative change of the median from one commit
	// to the next (0.02 is 2%), NaN for exact units and when there are
	// too few commits to tell. It is the median absolute deviation of the
	// log ratios of adjacent medians, steps left out, so that noise that
	// halves a benchmark counts the same as noise that doubles it.
	Noise float64
	// Threshold is the smallest relative change that is marked: a change
	// is marked when the median grows by more than this factor or
	// shrinks by more than its reciprocal (1+Threshold = (1+Noise)^NoiseFactor);
	// for an exact unit, Options.ExactChange. A step of an allocation
	// unit whose samples do not overlap is marked whatever its size.
	Threshold float64
	// Warnings say why results may be weak (too few samples or commits);
	// each distinct warning once.
	Warnings []error
}

// DetectChanges summarises each commit's samples as benchstat does and marks
// the commits where the metric changed significantly. points must be in
// commit order, oldest first, and of one series: one branch on one machine;
// points without samples are skipped. A commit is marked, from the second
// commit on, when
//
//   - the unit is exact (see Exact) and its median moved by more than
//     opts.ExactChange;
//   - the unit counts allocations (see Deterministic), the U test separates
//     the two commits' samples (p <= opts.Alpha) and they do not overlap:
//     the step between them is wider than the spread within either;
//   - otherwise, the U test separates the samples and the median moved by
//     more than opts.NoiseFactor times the series' noise, which needs
//     opts.MinCommits commits.
//
// The noise is the median absolute deviation of the log ratios of adjacent
// medians over the series, with the steps already marked left out and
// estimated again until no new step is found: a real step is a change, not
// noise, so it does not raise the yardstick that judges it, and early
// commits are judged like late ones.
func DetectChanges(unit string, points []Point, opts Options) Detection {
	opts = opts.withDefaults()
	out := Detection{Unit: unit, Noise: math.NaN(), Threshold: math.NaN()}
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
	for i := 1; i < len(out.Commits); i++ {
		c := &out.Commits[i]
		c.Compared = true
		if measure.Constant(samples[i-1].Values, samples[i].Values) {
			// The U test has nothing to rank and would warn about
			// it; for exact units such as allocs/op this is the
			// usual, healthy case.
			c.P = 1
		} else if Exact(unit) {
			// benchstat's answer for an exact unit, as compare
			// gives it: any difference is one.
			c.P = benchmath.AssumeExact.Compare(samples[i-1], samples[i]).P
		} else {
			cmp := utest.compare(samples[i-1], samples[i])
			warn(cmp.Warnings...)
			c.P = cmp.P
		}
		c.Delta = measure.Change(out.Commits[i-1].Summary.Center, c.Summary.Center)
	}
	mark := func(c *Step) {
		c.Changed = true
		c.Better = measure.Improves(unit, nil, 1, 1+c.Delta)
	}
	if Exact(unit) {
		out.Threshold = opts.ExactChange
		for i := range out.Commits {
			if c := &out.Commits[i]; c.Compared && math.Abs(c.Delta) > opts.ExactChange {
				mark(c)
			}
		}
		return out
	}
	// steps are the commits judged changed so far; their log ratios are
	// left out of the noise.
	steps := make([]bool, len(out.Commits))
	if Deterministic(unit) {
		for i := 1; i < len(out.Commits); i++ {
			if c := &out.Commits[i]; c.P <= opts.Alpha && separated(samples[i-1], samples[i]) {
				mark(c)
				steps[i] = true
			}
		}
	}
	noise, ok := seriesNoise(out.Commits, steps, opts)
	if !ok {
		if len(out.Commits) > 1 {
			warn(fmt.Errorf("need >= %d commits to tell changes of %s from noise; have %d", opts.MinCommits, unit, len(out.Commits)))
		}
		return out
	}
	out.Noise = math.Expm1(noise)
	out.Threshold = math.Expm1(opts.NoiseFactor * noise)
	for i := range out.Commits {
		c := &out.Commits[i]
		// Infinite (from or to zero) and NaN log ratios count as
		// beyond any threshold: the U test alone decides them.
		if c.Changed || !c.Compared || c.P > opts.Alpha || math.Abs(math.Log1p(c.Delta)) <= opts.NoiseFactor*noise {
			continue
		}
		mark(c)
	}
	return out
}

// maxNoiseRounds bounds how often the noise is estimated again with the
// steps found left out; a handful of rounds settle any real series.
const maxNoiseRounds = 8

// seriesNoise estimates the noise of a series on the log scale: the median
// absolute deviation of the log ratios of adjacent medians, leaving out the
// commits in steps and, round by round, those beyond opts.NoiseFactor times
// the estimate whose U test is significant. It reports false when fewer
// than opts.MinCommits-1 ratios are left to estimate from; a round that
// would leave too few keeps the estimate before it.
func seriesNoise(commits []Step, steps []bool, opts Options) (float64, bool) {
	steps = slices.Clone(steps)
	ratios := func() []float64 {
		var lrs []float64
		for i, c := range commits {
			if lr := math.Log1p(c.Delta); c.Compared && !steps[i] && !math.IsInf(lr, 0) && !math.IsNaN(lr) {
				lrs = append(lrs, lr)
			}
		}
		return lrs
	}
	lrs := ratios()
	if len(lrs) < opts.MinCommits-1 {
		return math.NaN(), false
	}
	noise := medianAbs(lrs)
	for range maxNoiseRounds {
		found := false
		for i, c := range commits {
			if c.Compared && !steps[i] && c.P <= opts.Alpha && math.Abs(math.Log1p(c.Delta)) > opts.NoiseFactor*noise {
				steps[i], found = true, true
			}
		}
		if !found {
			break
		}
		lrs = ratios()
		if len(lrs) < opts.MinCommits-1 {
			break
		}
		noise = medianAbs(lrs)
	}
	return noise, true
}

// separated reports whether sorted samples a and b do not overlap and the
// gap between them is at least as wide as the spread within either: a step
// of a measure that barely varies, not two draws of a noisy one.
func separated(a, b *benchmath.Sample) bool {
	av, bv := a.Values, b.Values
	lo, hi := av, bv
	if av[0] > bv[0] {
		lo, hi = bv, av
	}
	gap := hi[0] - lo[len(lo)-1]
	return gap > 0 && gap >= lo[len(lo)-1]-lo[0] && gap >= hi[len(hi)-1]-hi[0]
}

// medianAbs is the median absolute value of log ratios: their median
// absolute deviation from 0, the ratio of unchanged code. Centred on 0
// rather than on their median, the real steps among them move neither the
// centre nor, while they are fewer than half, the median.
func medianAbs(xs []float64) float64 {
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x)
	}
	return measure.Center(dev)
}
