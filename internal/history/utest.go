package history

import (
	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// A uTestMemo runs benchstat's Mann-Whitney U test
// (benchmath.AssumeNothing.Compare) on many pairs of samples and computes
// each distinct test only once.
//
// For small samples the test's p-value comes from the exact distribution of
// U, which go-moremath builds anew on every call: about 13 µs for two
// samples of 10, most of the time of change detection over thousands of
// commits. Yet the result depends on the samples only through their sizes,
// the smaller U statistic and, when values tie, the sizes of the tied groups
// in rank order. Runs of one benchmark share sizes and their U statistics
// fall on a few dozen values, so along a history nearly every test is one
// already made. A miss asks benchmath itself, so every result is
// benchmath's to the bit, warnings included.
type uTestMemo struct {
	results map[uTestKey]benchmath.Comparison
	ties    []byte // scratch for the tie vector
}

// A uTestKey is what a U test's result depends on.
type uTestKey struct {
	n1, n2 int
	alpha  float64
	// twoU is twice the smaller of the two U statistics (U counts a tie
	// between the samples as one half).
	twoU int
	// ties holds the sizes of the groups of equal values in rank order
	// when any group has two or more values, and is "" otherwise.
	ties string
}

func newUTestMemo() *uTestMemo {
	return &uTestMemo{results: make(map[uTestKey]benchmath.Comparison)}
}

// compare returns benchmath.AssumeNothing.Compare(s1, s2). The samples'
// values must be sorted, as benchmath.NewSample leaves them. The result's
// Warnings may be shared with other results and must not be modified.
func (m *uTestMemo) compare(s1, s2 *benchmath.Sample) benchmath.Comparison {
	key, ok := m.key(s1.Values, s2.Values)
	if !ok {
		return benchmath.AssumeNothing.Compare(s1, s2)
	}
	key.alpha = s1.Thresholds.CompareAlpha
	if c, ok := m.results[key]; ok {
		return c
	}
	c := benchmath.AssumeNothing.Compare(s1, s2)
	m.results[key] = c
	return c
}

// key computes the U statistic and tie vector of sorted samples x and y as
// go-moremath's MannWhitneyUTest does (ranks from 1, a group of equal values
// sharing its average rank). It reports false when the result is cheap to
// compute anyway (the normal approximation for large samples) or when
// benchmath should handle the input itself (an empty sample, NaN). Group
// sizes are kept in bytes, so samples of more than 255 values in all are
// never memoized.
func (m *uTestMemo) key(x, y []float64) (uTestKey, bool) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 || n1+n2 > 255 ||
		max(n1, n2) > max(stats.MannWhitneyExactLimit, stats.MannWhitneyTiesExactLimit) {
		return uTestKey{}, false
	}
	ties := m.ties[:0]
	hasTies := false
	// twoR1 is twice the rank sum of x; ranked counts the values ranked
	// so far. Integers keep it exact.
	twoR1, ranked := 0, 0
	for i, j := 0, 0; i < n1 || j < n2; {
		var v float64
		if j == n2 || i < n1 && x[i] < y[j] {
			v = x[i]
		} else {
			v = y[j]
		}
		c1, c2 := 0, 0
		for ; i < n1 && x[i] == v; i++ {
			c1++
		}
		for ; j < n2 && y[j] == v; j++ {
			c2++
		}
		t := c1 + c2
		if t == 0 {
			// NaN equals nothing, itself included.
			return uTestKey{}, false
		}
		// The group takes ranks ranked+1 … ranked+t, on average
		// (2·ranked+t+1)/2.
		twoR1 += c1 * (2*ranked + t + 1)
		ranked += t
		if t > 1 {
			hasTies = true
		}
		ties = append(ties, byte(t)) // t <= n1+n2 <= 255
	}
	m.ties = ties
	if hasTies && (n1 > stats.MannWhitneyTiesExactLimit || n2 > stats.MannWhitneyTiesExactLimit) ||
		!hasTies && (n1 > stats.MannWhitneyExactLimit || n2 > stats.MannWhitneyExactLimit) {
		return uTestKey{}, false
	}
	twoU := twoR1 - n1*(n1+1)
	twoU = min(twoU, 2*n1*n2-twoU)
	key := uTestKey{n1: n1, n2: n2, twoU: twoU}
	if hasTies {
		key.ties = string(ties)
	}
	return key, true
}
