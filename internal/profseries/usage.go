package profseries

import (
	"github.com/google/pprof/profile"

	"maps"
	"slices"
	"time"
)

// A Gauge is one resource of a target read off its profiles over time:
// CPU in cores, heap in use in bytes, goroutines in number.
type Gauge struct {
	// Name is what the gauge measures, in the user's words.
	Name string
	// Type is the profile type it is read from, SampleType the sample
	// type summed, Unit the unit of its values.
	Type, SampleType, Unit string
	// Rate divides each step's sum by the time the step's samples cover
	// (CPU nanoseconds per second are cores); otherwise a step's value is
	// the mean of its scrapes' sums (snapshots).
	Rate bool
}

// The gauges the services page shows for every target.
var (
	CPUCores      = Gauge{Name: "CPU", Type: CPU, SampleType: "cpu", Unit: "cores", Rate: true}
	HeapInUse     = Gauge{Name: "heap in use", Type: Heap, SampleType: "inuse_space", Unit: "bytes"}
	GoroutineLive = Gauge{Name: "goroutines", Type: Goroutine, SampleType: "goroutine", Unit: "count"}
)

// Gauges lists them in the order they are shown.
var Gauges = []Gauge{CPUCores, HeapInUse, GoroutineLive}

// A GaugePoint is a gauge's value over one step.
type GaugePoint struct {
	// Start is the step's start; the step covers [Start, Start+step).
	Start time.Time `json:"start"`
	Value float64   `json:"value"`
	// Scrapes counts the scrapes the step holds; steps without any are
	// left out, so a gap in collection is a gap, never a zero.
	Scrapes int `json:"scrapes"`
}

// GaugeOf returns the gauge read off profiles of type typ, if any: the
// one a store records for each scrape of that type as it is stored.
func GaugeOf(typ string) (Gauge, bool) {
	for _, g := range Gauges {
		if g.Type == typ {
			return g, true
		}
	}
	return Gauge{}, false
}

// Total sums g's sample type over samples of shape sh; false when the
// shape lacks it.
func (g Gauge) Total(sh Shape, samples []Sample) (int64, bool) {
	col := -1
	for i, st := range sh.SampleTypes {
		if st.Type == g.SampleType {
			col = i
			break
		}
	}
	if col < 0 {
		return 0, false
	}
	var total int64
	for _, s := range samples {
		if col < len(s.Values) {
			total += s.Values[col]
		}
	}
	return total, true
}

// A GaugeSum is what a gauge's points are made of: over scrapes starting
// at Start (one scrape, or the scrapes of a bucket that starts there), the
// sum of their totals, of the time they cover, and their count.
type GaugeSum struct {
	Start    time.Time
	Total    int64
	Duration time.Duration
	Scrapes  int
}

// WindowSums are the GaugeSums of windows, which are of g.Type, one per
// window (a merged window counts as one scrape). Windows whose shape
// lacks the sample type are left out.
func WindowSums(windows []Window, g Gauge) []GaugeSum {
	out := make([]GaugeSum, 0, len(windows))
	for _, w := range windows {
		if total, ok := g.Total(w.Shape, w.Samples); ok {
			out = append(out, GaugeSum{Start: w.Start, Total: total, Duration: w.Duration, Scrapes: 1})
		}
	}
	return out
}

// GaugeSeries reads g off windows, which are of g.Type (see GaugePoints).
func GaugeSeries(windows []Window, g Gauge, step time.Duration) []GaugePoint {
	return GaugePoints(WindowSums(windows, g), g, step)
}

// GaugePoints sums sums per step (aligned to multiples of step since the
// Unix epoch, each sum in the step of its Start): the total of
// g.SampleType, as a rate or a mean over the scrapes (see Gauge.Rate).
// A sum of scrapes is exactly the sum of its scrapes' sums as long as the
// totals stay under 2^53, which holds for nanoseconds of CPU and bytes of
// heap over years.
func GaugePoints(sums []GaugeSum, g Gauge, step time.Duration) []GaugePoint {
	if step <= 0 {
		step = time.Minute
	}
	type acc struct {
		sum     float64
		covered time.Duration
		n       int
	}
	steps := map[int64]*acc{}
	for _, s := range sums {
		if s.Scrapes == 0 {
			continue
		}
		k := floorDiv(s.Start.UnixNano(), int64(step))
		a := steps[k]
		if a == nil {
			a = &acc{}
			steps[k] = a
		}
		a.sum += float64(s.Total)
		a.covered += s.Duration
		a.n += s.Scrapes
	}
	keys := slices.Sorted(maps.Keys(steps))
	out := make([]GaugePoint, 0, len(keys))
	for _, k := range keys {
		a := steps[k]
		pt := GaugePoint{Start: time.Unix(0, k*int64(step)).UTC(), Scrapes: a.n}
		switch {
		case g.Rate && a.covered > 0:
			pt.Value = a.sum / float64(a.covered)
		case g.Rate:
			continue // a rate over no time says nothing
		default:
			pt.Value = a.sum / float64(a.n)
		}
		out = append(out, pt)
	}
	return out
}

// floorDiv divides rounding down, so that times before the epoch fall in
// the step they are in.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// SeriesSteps is about how many steps SeriesStep divides a range into.
const SeriesSteps = 240

// SeriesStep is the step of a series over [from, to) where none is asked:
// about SeriesSteps steps of at least 10 s, the scraper's default interval
// (an hour in steps of 20 s, a day in steps of ten minutes), as the
// service page draws them.
func SeriesStep(from, to time.Time) time.Duration {
	return StepFor(from, to, SeriesSteps, 10*time.Second)
}

// StepFor chooses the step of a series over [from, to) so that it has
// about points steps, rounded up to a whole number of interval (the scrape
// interval), at least one interval, and up to a minute where a minute is
// not a whole number of steps (40 s); a step of a minute or more is rounded
// up to the next of 1, 2, 5, 10, 15, 20 or 30 minutes, or of 1, 2, 3, 6, 12
// or 24 hours: steps a store answers from its sums per minute, ten
// minutes or hour without reading every scrape.
func StepFor(from, to time.Time, points int, interval time.Duration) time.Duration {
	if points < 1 {
		points = 1
	}
	if interval <= 0 {
		interval = 10 * time.Second
	}
	step := to.Sub(from) / time.Duration(points)
	if step < interval {
		return interval
	}
	step = (step + interval - 1) / interval * interval
	if step < time.Minute && time.Minute%step != 0 {
		step = time.Minute // 40 s or 50 s would cut minutes in parts
	}
	if step <= time.Minute {
		return step
	}
	for _, nice := range niceSteps {
		if step <= nice && nice%interval == 0 {
			return nice
		}
	}
	return step
}

// niceSteps are the steps of a minute or more StepFor chooses from.
var niceSteps = []time.Duration{
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// ScrapeTotal is Total over the interned samples of profile p.
func (g Gauge) ScrapeTotal(p *profile.Profile, samples []Sample) (int64, bool) {
	return g.Total(shapeOf(p), samples)
}
