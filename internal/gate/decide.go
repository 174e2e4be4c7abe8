package gate

import (
	"cmp"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/perfscope/perfscope/internal/measure"
)

// A Verdict is the gate's conclusion about one measurement.
type Verdict string

const (
	// Regression: significant after correction and worse than the
	// threshold.
	Regression Verdict = "regression"
	// Improvement: significant after correction and better than the
	// threshold.
	Improvement Verdict = "improvement"
	// Unchanged: no significant change beyond the threshold.
	Unchanged Verdict = "unchanged"
	// TooFewSamples: even perfectly separated samples of these sizes
	// could not be significant, so nothing can be concluded.
	TooFewSamples Verdict = "too few samples"
	// TooNoisy: no significant change, but the samples are so noisy
	// that a change as large as the threshold could hide in them (the
	// median's confidence interval is wider than the threshold). The
	// gate says so rather than pass a regression it could not see.
	TooNoisy Verdict = "too noisy"
	// NotGated: a unit the gate does not judge, or one ignored by
	// configuration; reported only.
	NotGated Verdict = "not gated"
	// Added and Removed: the benchmark exists on one side only.
	Added   Verdict = "added"
	Removed Verdict = "removed"
)

// A Judgement is the gate's conclusion about one Measurement with the
// numbers behind it.
type Judgement struct {
	Measurement
	Verdict Verdict `json:"verdict"`
	// BaseMedian and HeadMedian are benchstat's centers; Change is
	// HeadMedian/BaseMedian - 1.
	BaseMedian float64 `json:"base_median"`
	HeadMedian float64 `json:"head_median"`
	Change     float64 `json:"change"`
	// P is the U-test p-value; AdjustedP is it after Holm–Bonferroni
	// across all judged measurements (1 when not judged).
	P         float64 `json:"p"`
	AdjustedP float64 `json:"adjusted_p"`
	// Threshold is the relative change that counts (0.05 = 5%); a
	// regression must exceed it.
	Threshold float64 `json:"threshold"`
	// Exact reports a measurement decided by its medians alone:
	// instructions/op always, allocs/op and B/op when every sample of
	// each side is the same number. Its P and AdjustedP stay 1, and its
	// Resolution is half the range of a side's samples relative to their
	// median; beyond a quarter of the threshold it is too noisy to decide.
	Exact bool `json:"exact"`
	// Resolution is the half-width of the 95% confidence interval of
	// the noisier side's median, relative to that median: changes
	// smaller than this cannot be told from noise. +Inf when a side has
	// too few samples for an interval.
	Resolution float64 `json:"-"`
	// Warnings are benchmath's warnings about the samples.
	Warnings []string `json:"warnings,omitempty"`
}

// A Decision is the gate's overall result.
type Decision struct {
	Judgements []Judgement `json:"judgements"`
	// Regressions, Improvements and Undecided count judgements.
	Regressions  int `json:"regressions"`
	Improvements int `json:"improvements"`
	Undecided    int `json:"undecided"`
	// Tests is the size of the family Holm's correction ran over.
	Tests int     `json:"tests"`
	Alpha float64 `json:"alpha"`
	// UndecidedFails reports whether an undecided measurement fails the
	// gate (exit 2): always when wall time is the only measure, and with
	// instruction counts only when strict.
	UndecidedFails bool `json:"undecided_fails"`
}

// ExitCode is the gate's exit status for the decision: 1 on any
// regression, else 2 if something could not be decided and that fails
// the gate (UndecidedFails), else 0.
func (d *Decision) ExitCode() int {
	switch {
	case d.Regressions > 0:
		return 1
	case d.Undecided > 0 && d.UndecidedFails:
		return 2
	}
	return 0
}

// NeedsMoreRounds reports whether more rounds could let an undecided gate
// decide: some gated measurement has too few samples, or a median less
// certain than its threshold. It looks only at sample sizes and spread,
// never at which side is ahead, so measuring more because of it does not
// bias the test the way rerunning until significant would.
func (d *Decision) NeedsMoreRounds() bool {
	for _, j := range d.Judgements {
		switch {
		case j.Exact, j.Verdict == NotGated, j.Verdict == Added, j.Verdict == Removed:
			continue
		case j.Verdict == TooFewSamples:
			return true
		}
		if j.Threshold > 0 && j.Resolution > j.Threshold {
			return true
		}
	}
	return false
}

// Decide judges every measurement. An exact measurement (see
// Judgement.Exact) is a regression when its median worsens by more than
// its threshold: the count is the same on every run, so no test is
// needed. Any other measurement is a regression only if its U-test
// p-value stays below alpha after Holm–Bonferroni correction across all
// such measurements AND its median worsens by more than its threshold.
// The statistics are benchmath's, exactly as benchstat's.
//
// Decide is a pure function of its inputs, so studies of the gate's error
// rates (resampled A/A runs, injected slowdowns) run the gate's own logic.
func Decide(ms []Measurement, cfg Config) *Decision {
	cfg = cfg.withDefaults()
	// Compile the rules on a copy: callers validated them when loading,
	// and Decide must not write to a config shared between goroutines.
	cfg.Benchmarks = slices.Clone(cfg.Benchmarks)
	_ = cfg.Validate()
	th := benchmath.DefaultThresholds
	th.CompareAlpha = cfg.Alpha
	d := &Decision{Alpha: cfg.Alpha, UndecidedFails: cfg.Measure != MeasureInstructions || cfg.Strict}
	var tested []int
	for _, m := range ms {
		j := Judgement{Measurement: m, P: 1, AdjustedP: 1}
		threshold, gated := cfg.rule(m.Package, m.Benchmark, m.Unit)
		j.Threshold = threshold
		if gated && measure.Better(m.Unit, nil) == 0 {
			// A threshold on a unit nobody said the better direction
			// of cannot tell a regression from an improvement.
			gated = false
			j.Warnings = append(j.Warnings, "not gated: which direction is better for "+m.Unit+" is unknown (a custom unit reported without \"better\" metadata)")
		}
		switch {
		case len(m.Base) == 0:
			j.Verdict = Added
		case len(m.Head) == 0:
			j.Verdict = Removed
		case exact(m):
			j.Exact = true
			// benchstat's center, the median, as for every measure.
			j.BaseMedian = measure.Center(m.Base)
			j.HeadMedian = measure.Center(m.Head)
			j.Change = measure.Change(j.BaseMedian, j.HeadMedian)
			j.Resolution = max(halfRange(m.Base, j.BaseMedian), halfRange(m.Head, j.HeadMedian))
			switch {
			case !gated:
				j.Verdict = NotGated
			case j.Resolution > j.Threshold/4:
				// Counts of the same code that disagree by this
				// much come from code whose work depends on
				// timing; they cannot tell a change of the
				// threshold's size.
				j.Verdict = TooNoisy
			default:
				j.Verdict = direction(j)
			}
		default:
			bs := benchmath.NewSample(slices.Clone(m.Base), &th)
			hs := benchmath.NewSample(slices.Clone(m.Head), &th)
			bsum := benchmath.AssumeNothing.Summary(bs, 0.95)
			hsum := benchmath.AssumeNothing.Summary(hs, 0.95)
			j.BaseMedian, j.HeadMedian = bsum.Center, hsum.Center
			j.Resolution = max(halfWidth(bsum), halfWidth(hsum))
			j.Change = measure.Change(j.BaseMedian, j.HeadMedian)
			c := benchmath.AssumeNothing.Compare(bs, hs)
			j.P = c.P
			for _, w := range c.Warnings {
				j.Warnings = append(j.Warnings, w.Error())
			}
			switch {
			case !gated:
				j.Verdict = NotGated
			case measure.Constant(m.Base, m.Head):
				// Identical constant samples (allocs/op
				// usually) cannot reject anything; like
				// Tarone's rule for discrete tests, leaving
				// them out of the family costs no error
				// control and keeps power for the rest.
				j.Verdict = Unchanged
			default:
				j.Verdict = Unchanged
				tested = append(tested, len(d.Judgements))
			}
		}
		d.Judgements = append(d.Judgements, j)
	}

	// A test whose samples are too small to ever reach alpha/m cannot
	// be decided at all: say so instead of passing it silently.
	candidates := len(tested)
	type sizes struct{ n1, n2 int }
	minPs := make(map[sizes]float64) // the exact test is costly; sizes repeat
	tested = slices.DeleteFunc(tested, func(i int) bool {
		j := &d.Judgements[i]
		sz := sizes{len(j.Base), len(j.Head)}
		p, ok := minPs[sz]
		if !ok {
			p = minP(sz.n1, sz.n2, &th)
			minPs[sz] = p
		}
		if p*float64(candidates) > cfg.Alpha {
			j.Verdict = TooFewSamples
			return true
		}
		return false
	})

	// Holm–Bonferroni: the k-th smallest p (0-based) is compared with
	// alpha/(m-k); the first failure stops every larger p.
	d.Tests = len(tested)
	slices.SortStableFunc(tested, func(a, b int) int { return cmp.Compare(d.Judgements[a].P, d.Judgements[b].P) })
	running := 0.0
	for k, i := range tested {
		j := &d.Judgements[i]
		// Adjusted p-values are monotone, as Holm's procedure
		// requires: a larger p never gets a smaller adjusted p.
		running = max(running, min(1, j.P*float64(d.Tests-k)))
		j.AdjustedP = running
	}
	for _, i := range tested {
		j := &d.Judgements[i]
		if j.AdjustedP > cfg.Alpha {
			continue
		}
		j.Verdict = direction(*j)
	}
	for _, i := range tested {
		j := &d.Judgements[i]
		if j.Verdict == Unchanged && tooNoisy(*j) {
			j.Verdict = TooNoisy
		}
	}
	for _, j := range d.Judgements {
		switch j.Verdict {
		case Regression:
			d.Regressions++
		case Improvement:
			d.Improvements++
		case TooFewSamples, TooNoisy:
			d.Undecided++
		}
	}
	return d
}

// tooNoisy reports whether a measurement the test did not find changed
// cannot be called unchanged either: its medians are less certain than
// the threshold, or they moved beyond the threshold and the samples could
// not confirm it (B/op 11 → 15, +36%, p=0.85) — which a threshold of 0,
// where any spread is "less certain", cannot tell by the first rule.
func tooNoisy(j Judgement) bool {
	return j.Threshold > 0 && j.Resolution > j.Threshold || math.Abs(j.Change) > j.Threshold
}

// direction is the verdict of a change already known to be real: a
// regression or an improvement beyond the threshold, else unchanged. A
// change from 0 (an infinite Change) is beyond every threshold.
func direction(j Judgement) Verdict {
	if math.Abs(j.Change) <= j.Threshold {
		return Unchanged
	}
	switch measure.Improves(j.Unit, nil, j.BaseMedian, j.HeadMedian) {
	case -1:
		return Regression
	case 1:
		return Improvement
	}
	return Unchanged
}

// exact reports whether a measurement is decided by its medians alone:
// instruction counts, whose few repetitions differ by fractions of a
// percent whatever the machine does, and allocation measures that are the
// same number in every sample of each side (allocation of parallel
// benchmarks varies, and goes to the U-test).
func exact(m Measurement) bool {
	switch {
	case measure.Exact(m.Unit, nil):
		return true
	case m.Unit == "allocs/op", m.Unit == "B/op":
		return measure.Constant(m.Base) && measure.Constant(m.Head)
	}
	return false
}

// halfRange is half the range of xs relative to their median m: how far
// apart repeated counts of the same code came out.
func halfRange(xs []float64, m float64) float64 {
	if m == 0 {
		return 0
	}
	return (slices.Max(xs) - slices.Min(xs)) / 2 / math.Abs(m)
}

// halfWidth is the relative half-width of a summary's confidence
// interval, as benchmath computed it.
func halfWidth(s benchmath.Summary) float64 {
	if s.Center == 0 {
		if s.Lo == s.Hi {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs((s.Hi - s.Lo) / 2 / s.Center)
}

// minP is the smallest p-value the U-test can give for samples of these
// sizes: that of two perfectly separated samples, computed by the same
// test.
func minP(n1, n2 int, th *benchmath.Thresholds) float64 {
	a, b := make([]float64, n1), make([]float64, n2)
	for i := range a {
		a[i] = float64(i)
	}
	for i := range b {
		b[i] = float64(n1 + i)
	}
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(a, th), benchmath.NewSample(b, th)).P
}
