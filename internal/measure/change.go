package measure

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Change is the relative change from base to head: +0.10 is 10% higher,
// -0.5 half. Equal values (both 0 included) are no change. From 0 to
// anything else there is no ratio: Change is +Inf (or -Inf towards a
// negative value), which is beyond every threshold and which no caller can
// mistake for a percentage; FormatChange writes it "from 0".
func Change(base, head float64) float64 {
	switch {
	case base == head:
		return 0
	case base == 0:
		return math.Copysign(math.Inf(1), head)
	}
	return head/base - 1
}

// Center is the center of a sample as benchstat reports it: the median.
// xs is not modified; an empty sample's center is NaN.
func Center(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds)
	return benchmath.AssumeNothing.Summary(s, 0.95).Center
}

// Constant reports whether every value of every sample is one and the same
// number: nothing for a test to rank, and for counts such as allocs/op the
// usual, healthy case. No values at all are not constant.
func Constant(samples ...[]float64) bool {
	first, seen := 0.0, false
	for _, s := range samples {
		for _, x := range s {
			switch {
			case !seen:
				first, seen = x, true
			case x != first:
				return false
			}
		}
	}
	return seen
}
