package profseries

import (
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

// GaugeSeries reads g off windows, which are of g.Type: per step (aligned
// to multiples of step since the Unix epoch) the total of g.SampleType,
// as a rate or a mean (see Gauge.Rate). Windows whose shape lacks the
// sample type are left out.
func GaugeSeries(windows []Window, g Gauge, step time.Duration) []GaugePoint {
	if step <= 0 {
		step = time.Minute
	}
	type acc struct {
		sum     float64
		covered time.Duration
		n       int
	}
	steps := map[int64]*acc{}
	for _, w := range windows {
		col := -1
		for i, st := range w.Shape.SampleTypes {
			if st.Type == g.SampleType {
				col = i
				break
			}
		}
		if col < 0 {
			continue
		}
		var total int64
		for _, s := range w.Samples {
			if col < len(s.Values) {
				total += s.Values[col]
			}
		}
		k := w.Start.UnixNano() / int64(step)
		a := steps[k]
		if a == nil {
			a = &acc{}
			steps[k] = a
		}
		a.sum += float64(total)
		a.covered += w.Duration
		a.n++
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

// StepFor chooses the step of a series over [from, to) so that it has
// about points steps, rounded up to a whole number of interval (the scrape
// interval), at least one interval.
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
	return (step + interval - 1) / interval * interval
}
