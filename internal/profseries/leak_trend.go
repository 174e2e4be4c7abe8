package profseries

import (
	"math"
	"slices"
	"time"
)

// A point is one value of one stack at one instant.
type point struct {
	t time.Time
	v float64
}

// A Trend is how a level (goroutines, bytes in use) moved over a run of
// snapshots, judged by rank: the Mann–Kendall test says whether it rises
// more often than chance allows, the Theil–Sen slope how fast. Both use
// only the order of the values and the median of pairwise slopes, so one
// outlier, a garbage collection's sawtooth or the heap profile's sampling
// noise moves neither much.
type Trend struct {
	// Points is the number of values judged (after binning, see
	// trendOf).
	Points int `json:"points"`
	// S is the Mann–Kendall statistic: pairs rising minus pairs falling.
	S int `json:"s"`
	// Z is S's standard score, with the tie correction and the
	// continuity correction of one; P is the one-sided p-value of a rise
	// (the chance of a Z this large or larger with no trend).
	Z float64 `json:"z"`
	P float64 `json:"p"`
	// Slope is the Theil–Sen slope in units per second; LaterSlope the
	// same over the later half of the points alone, to tell a level that
	// keeps rising from one that stepped up once and stayed.
	Slope      float64 `json:"slope_per_second"`
	LaterSlope float64 `json:"later_slope_per_second"`
	// First and Last are the fitted level at the first and last point:
	// the median intercept of Theil–Sen's line.
	First float64 `json:"first"`
	Last  float64 `json:"last"`
}

// maxTrendPoints bounds the values a trend compares pairwise (n²/2
// pairs): longer runs are binned by time, each bin its median.
const maxTrendPoints = 240

// trendOf judges the points, ordered by time: rankTrend, then fit.
func trendOf(ps []point) Trend {
	ps = binMedians(ps, maxTrendPoints)
	tr := rankTrend(ps)
	tr.fit(ps)
	return tr
}

// rankTrend is the Mann–Kendall half of a trend of the points, ordered
// by time and binned (binMedians to maxTrendPoints): Points, S, Z and P.
// Runs longer than maxTrendPoints are first reduced to the medians of that
// many equal spans of time, which also smooths a sawtooth shorter than a
// bin. It compares the values pairwise without allocating for each pair,
// so a query judging thousands of stacks fits the slopes (fit) of those
// whose rise is significant alone.
func rankTrend(ps []point) Trend {
	tr := Trend{Points: len(ps)}
	if len(ps) < 3 {
		return tr
	}
	tr.S, tr.Z, tr.P = mannKendall(ps)
	return tr
}

// fit adds the Theil–Sen half of the trend of the same points as
// rankTrend's: the slopes and the fitted first and last levels.
func (tr *Trend) fit(ps []point) {
	if len(ps) < 3 {
		return
	}
	var b float64
	tr.Slope, b = theilSen(ps)
	t0 := ps[0].t
	tr.First = b
	tr.Last = b + tr.Slope*ps[len(ps)-1].t.Sub(t0).Seconds()
	tr.LaterSlope, _ = theilSen(ps[len(ps)/2:])
}

// mannKendall returns the Mann–Kendall statistic S of ps, its standard
// score and the one-sided p-value of an upward trend, with ties
// corrected for in the variance.
func mannKendall(ps []point) (int, float64, float64) {
	n := len(ps)
	s := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			switch {
			case ps[j].v > ps[i].v:
				s++
			case ps[j].v < ps[i].v:
				s--
			}
		}
	}
	vs := make([]float64, n)
	for i, p := range ps {
		vs[i] = p.v
	}
	slices.Sort(vs)
	fn := float64(n)
	variance := fn * (fn - 1) * (2*fn + 5)
	for i := 0; i < n; {
		j := i
		for j < n && vs[j] == vs[i] {
			j++
		}
		if t := float64(j - i); t > 1 {
			variance -= t * (t - 1) * (2*t + 5)
		}
		i = j
	}
	variance /= 18
	if variance <= 0 {
		return s, 0, 1 // every value equal: no trend
	}
	var z float64
	switch {
	case s > 0:
		z = float64(s-1) / math.Sqrt(variance)
	case s < 0:
		z = float64(s+1) / math.Sqrt(variance)
	}
	return s, z, 0.5 * math.Erfc(z/math.Sqrt2)
}

// theilSen returns the median of the slopes between every two points (per
// second) and the median intercept at the first point's time.
func theilSen(ps []point) (slope, intercept float64) {
	if len(ps) < 2 {
		if len(ps) == 1 {
			return 0, ps[0].v
		}
		return 0, 0
	}
	t0 := ps[0].t
	slopes := make([]float64, 0, len(ps)*(len(ps)-1)/2)
	for i := range ps {
		for j := i + 1; j < len(ps); j++ {
			dt := ps[j].t.Sub(ps[i].t).Seconds()
			if dt > 0 {
				slopes = append(slopes, (ps[j].v-ps[i].v)/dt)
			}
		}
	}
	slope = median(slopes)
	icpts := make([]float64, len(ps))
	for i, p := range ps {
		icpts[i] = p.v - slope*p.t.Sub(t0).Seconds()
	}
	return slope, median(icpts)
}

// median returns the median of vs, reordering them; 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	m := len(vs) / 2
	if len(vs)%2 == 1 {
		return vs[m]
	}
	return (vs[m-1] + vs[m]) / 2
}

// binMedians reduces ps to at most n points: the span is cut into n equal
// bins of time, each non-empty bin giving its median value at its median
// time.
func binMedians(ps []point, n int) []point {
	if len(ps) <= n {
		return ps
	}
	t0, span := ps[0].t, ps[len(ps)-1].t.Sub(ps[0].t)
	out := make([]point, 0, n)
	var vs []float64 // one bin's values, reused
	for i := 0; i < len(ps); {
		k := int(int64(ps[i].t.Sub(t0)) * int64(n) / int64(span+1))
		j := i
		vs = vs[:0]
		for j < len(ps) && int(int64(ps[j].t.Sub(t0))*int64(n)/int64(span+1)) == k {
			vs = append(vs, ps[j].v)
			j++
		}
		out = append(out, point{t: ps[i+(j-i)/2].t, v: median(vs)})
		i = j
	}
	return out
}
