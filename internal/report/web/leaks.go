package web

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report"
)

// Leaks is the leaks page: the form (target selector and range, as typed),
// what is wrong with it if anything, and the leaks named with the series
// judged.
type Leaks struct {
	Target, Since string
	// Problem says why nothing is shown: bad input, or no snapshots in
	// the range.
	Problem string
	Method  string
	Range   string
	Leaks   []LeakRow
	Judged  []JudgedRow
	// Ran is true when a report was computed (Problem is empty).
	Ran bool
}

// A JudgedRow is one series judged, with why part of it was not.
type JudgedRow struct {
	profseries.LeakSeries
	Target string
	Note   string
}

// A LeakRow is one leak as the page shows it.
type LeakRow struct {
	Target, Type       string
	Sentence, Evidence string
	Wait               string
	Stack              []string
	// Chart draws the stack's level in each snapshot judged, with the
	// trend fitted to them dashed.
	Chart TimeChart
	// Service is the address of the service page over the leak's
	// snapshots, with the series of the function the stack ends in.
	Service string
}

// NewLeaks lays out a leak report; rep nil shows the form and problem
// alone.
func NewLeaks(target, since, problem string, rep *profseries.LeakReport) *Leaks {
	l := &Leaks{Target: target, Since: since, Problem: problem}
	if rep == nil {
		return l
	}
	l.Ran = true
	l.Method = report.LeakMethod(rep)
	l.Range = seriesRange(rep.From, rep.To)
	for _, j := range rep.Judged {
		l.Judged = append(l.Judged, JudgedRow{LeakSeries: j, Target: j.Target.String(), Note: report.LeakSeriesNote(rep, j)})
	}
	for _, k := range rep.Leaks {
		row := LeakRow{Target: k.Target.String(), Type: k.Type, Sentence: report.LeakSentence(k), Evidence: report.LeakEvidence(k), Stack: k.Stack}
		if k.Wait != "" {
			row.Wait = k.Wait + " at " + report.ShortFrame(k.At)
		}
		row.Chart = leakChart(k)
		fn, _, _ := strings.Cut(k.At, " ")
		row.Service = ServiceQuery{Target: k.Target.String(), Type: k.Type, Function: fn,
			From: k.From.UTC().Format(time.RFC3339), To: k.To.Add(time.Second).UTC().Format(time.RFC3339)}.Href()
		l.Leaks = append(l.Leaks, row)
	}
	return l
}

// leakChart draws a leak's levels over the snapshots judged, and the
// Theil–Sen line fitted to them: the trend the leak was named on.
func leakChart(k profseries.Leak) TimeChart {
	c := TimeChart{Title: report.LeakLevelsTitle(k)}
	n := len(k.Levels)
	if n < 2 {
		c.Empty = true
		return c
	}
	pts := make([]profseries.GaugePoint, n)
	for i, l := range k.Levels {
		pts[i] = profseries.GaugePoint{Start: l.At, Value: l.Value, Scrapes: 1}
	}
	from, to := pts[0].Start, pts[n-1].Start
	label := func(v float64) string { return GaugeValue(v, k.Unit) }
	fit := []profseries.GaugePoint{{Start: from, Value: k.Trend.First}, {Start: to, Value: k.Trend.Last}}
	if k.Trend.First < 0 && k.Trend.Last > 0 {
		// No level is below nothing: the line starts where it crosses 0.
		f := -k.Trend.First / (k.Trend.Last - k.Trend.First)
		fit[0] = profseries.GaugePoint{Start: from.Add(time.Duration(f * float64(to.Sub(from))))}
	}
	c.Latest, c.Peak = label(pts[n-1].Value), label(slices.MaxFunc(pts, func(a, b profseries.GaugePoint) int { return cmp.Compare(a.Value, b.Value) }).Value)
	c.SVG = drawTimeChart(timeSeries{points: pts, step: to.Sub(from) / time.Duration(n-1), from: from, to: to,
		name: c.Title, label: label, fit: fit})
	return c
}
