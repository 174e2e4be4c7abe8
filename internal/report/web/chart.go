package web

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/measure"
)

// The trend chart is drawn on the server as inline SVG: no script, nothing
// to load, and a page of a thousand commits is one response. Commits are
// spaced evenly in their order, as on the Go performance dashboard: dates
// are uneven and would bunch busy days together.

// Chart geometry, in SVG user units; the SVG scales to the page's width.
const (
	chartW, chartH              = 1000.0, 320.0
	chartLeft, chartRight       = 70.0, 10.0
	chartTop, chartBottom       = 10.0, 40.0
	chartPlotW, chartPlotH      = chartW - chartLeft - chartRight, chartH - chartTop - chartBottom
	chartYTicks, chartXLabelMax = 5, 6
)

// TrendChart renders v as an SVG chart: the confidence band, the median
// line, one point per commit and the change points, each linked to the
// comparison of its commit with the previous one. link makes that link from
// the two refs.
func TrendChart(v *history.Series, link func(base, head string) string) template.HTML {
	n := len(v.Commits)
	if n == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range v.Commits {
		for _, y := range []float64{c.Median, deref(c.Lo, c.Median), deref(c.Hi, c.Median)} {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}
	if lo == hi {
		lo, hi = lo-math.Max(math.Abs(lo)*0.05, 1e-12), hi+math.Max(math.Abs(hi)*0.05, 1e-12)
	}
	pad := (hi - lo) * 0.08
	lo, hi = lo-pad, hi+pad
	if lo < 0 && v.Commits[0].Median >= 0 {
		lo = math.Min(0, lo+pad) // metrics are not negative: do not draw below 0
	}
	x := func(i int) float64 {
		if n == 1 {
			return chartLeft + chartPlotW/2
		}
		return chartLeft + chartPlotW*float64(i)/float64(n-1)
	}
	y := func(val float64) float64 { return chartTop + chartPlotH*(1-(val-lo)/(hi-lo)) }

	// About 260 bytes per commit; growing the buffer as it fills would
	// copy a large chart many times. A strings.Builder hands its bytes
	// over without another copy at the end.
	var b chartWriter
	b.Grow(4096 + 300*n)
	fmt.Fprintf(&b, `<svg class="trend" viewBox="0 0 %g %g" role="img" aria-label="%s over %d commits" xmlns="http://www.w3.org/2000/svg">`,
		chartW, chartH, template.HTMLEscapeString(v.Name+" "+v.Unit), n)

	// Axes and y ticks.
	b.WriteString(`<g class="axis">`)
	// A tick whose label reads as the one before it (steps finer than
	// the unit is written) says nothing: it is left out.
	prevLabel := ""
	for _, val := range yTicks(lo, hi, v.Unit) {
		label := measure.Format(val, v.Unit)
		if label == prevLabel {
			continue
		}
		prevLabel = label
		yy := y(val)
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`,
			chartLeft, chartW-chartRight, yy, yy, chartLeft-6, yy+4, template.HTMLEscapeString(label))
	}
	dateFormat := xDateFormat(v.Commits[0].Time, v.Commits[n-1].Time)
	prevDate := ""
	for _, i := range xLabelIndexes(n) {
		date := v.Commits[i].Time.Format(dateFormat)
		if date == prevDate {
			continue // commits of one day: the day once
		}
		prevDate = date
		// The first and last labels are anchored inside the plot's
		// width so that neither is clipped at the chart's edge.
		anchor := "middle"
		switch {
		case n > 1 && i == 0:
			anchor = "start"
		case n > 1 && i == n-1:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="%s">%s</text>`, x(i), chartH-chartBottom+18, anchor, date)
	}
	b.WriteString(`</g>`)

	// Confidence band, over each run of commits that have an interval:
	// along the upper bounds, back along the lower. None is drawn where
	// there is no interval (too few samples).
	for from := 0; from < n; {
		if !HasInterval(v.Commits[from]) {
			from++
			continue
		}
		to := from
		for to+1 < n && HasInterval(v.Commits[to+1]) {
			to++
		}
		b.WriteString(`<path class="band" d="`)
		for i := from; i <= to; i++ {
			if i == from {
				b.WriteByte('M')
			} else {
				b.WriteByte('L')
			}
			b.xy(x(i), y(*v.Commits[i].Hi), ' ')
		}
		for i := to; i >= from; i-- {
			b.WriteByte('L')
			b.xy(x(i), y(*v.Commits[i].Lo), ' ')
		}
		b.WriteString(`Z"/>`)
		from = to + 1
	}

	b.WriteString(`<polyline class="median" points="`)
	for i, c := range v.Commits {
		b.xy(x(i), y(c.Median), ',')
		b.WriteByte(' ')
	}
	b.WriteString(`"/>`)

	// Points, then change points on top of them.
	b.WriteString(`<g class="points">`)
	for i, c := range v.Commits {
		if c.Changed {
			continue
		}
		b.WriteString(`<circle class="pt" cx="`)
		b.num(x(i))
		b.WriteString(`" cy="`)
		b.num(y(c.Median))
		b.WriteString(`" r="2.5" data-commit="`)
		template.HTMLEscape(&b, []byte(c.Ref))
		b.WriteString(`"><title>`)
		template.HTMLEscape(&b, []byte(pointTitle(c, v.Unit)))
		b.WriteString(`</title></circle>`)
	}
	for i, c := range v.Commits {
		if !c.Changed {
			continue
		}
		class := "change"
		switch c.Better {
		case 1:
			class += " better"
		case -1:
			class += " worse"
		}
		fmt.Fprintf(&b, `<a href="%s"><circle class="%s" cx="%.1f" cy="%.1f" r="6" data-commit="%s"><title>%s</title></circle></a>`,
			template.HTMLEscapeString(link(c.Previous, c.Ref)), class, x(i), y(c.Median),
			template.HTMLEscapeString(c.Ref), template.HTMLEscapeString(pointTitle(c, v.Unit)+"\nclick to compare with the previous commit"))
	}
	b.WriteString(`</g></svg>`)
	return template.HTML(b.String())
}

// yTicks chooses the values of the y axis's lines between lo and hi: round
// steps (1, 2, 2.5 or 5 times a power of ten) of the unit as it is printed,
// so that labels read "1 KiB, 1.5 KiB, 2 KiB" rather than "0.84Ki, 1.304Ki".
func yTicks(lo, hi float64, unit string) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	// Sizes are printed in powers of 1024: step in that scale.
	base := 1.0
	if unit == "B/op" {
		for base*1024 <= math.Max(math.Abs(lo), math.Abs(hi)) {
			base *= 1024
		}
	}
	raw := (hi - lo) / base / chartYTicks
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow * 10
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*pow >= raw {
			step = m * pow
			break
		}
	}
	step *= base
	var ticks []float64
	for t := math.Ceil(lo/step) * step; t <= hi+step*1e-9; t += step {
		ticks = append(ticks, t)
	}
	return ticks
}

// xDateFormat is the layout of the dates under a chart from first to last:
// the day, or the hour as well when the commits span less than three days.
func xDateFormat(first, last time.Time) string {
	if last.Sub(first) < 72*time.Hour {
		return "Jan 2 15:04"
	}
	return "2006-01-02"
}

// xLabelIndexes chooses the commits of n that get a date under the chart:
// evenly spaced, at most chartXLabelMax, always the first and the last, and
// none so close to the last that their labels would overlap.
func xLabelIndexes(n int) []int {
	if n == 0 {
		return nil
	}
	step := max(1, (n+chartXLabelMax-1)/chartXLabelMax)
	var idx []int
	for i := 0; i < n; i += step {
		idx = append(idx, i)
	}
	if last := idx[len(idx)-1]; last != n-1 {
		if len(idx) > 1 && n-1-last < step/2+1 {
			idx = idx[:len(idx)-1]
		}
		idx = append(idx, n-1)
	}
	return idx
}

// Sparkline geometry, in pixels: it sits in a table row.
const sparkW, sparkH, sparkPad = 120.0, 26.0, 3.0

// Sparkline renders the medians of v's latest n commits as a small line,
// with the changes among them marked and the latest value as a dot.
func Sparkline(v *history.Series, n int) template.HTML {
	commits := v.Commits[max(0, len(v.Commits)-n):]
	if len(commits) == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range commits {
		lo, hi = math.Min(lo, c.Median), math.Max(hi, c.Median)
	}
	if lo == hi {
		lo, hi = lo-1, hi+1 // a flat line in the middle
	}
	x := func(i int) float64 {
		if len(commits) == 1 {
			return sparkW - sparkPad
		}
		return sparkPad + (sparkW-2*sparkPad)*float64(i)/float64(len(commits)-1)
	}
	y := func(val float64) float64 { return sparkPad + (sparkH-2*sparkPad)*(1-(val-lo)/(hi-lo)) }
	var b chartWriter
	fmt.Fprintf(&b, `<svg class="spark" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="%s over the latest %d commits" xmlns="http://www.w3.org/2000/svg"><polyline points="`,
		sparkW, sparkH, sparkW, sparkH, template.HTMLEscapeString(v.Unit), len(commits))
	for i, c := range commits {
		b.xy(x(i), y(c.Median), ',')
		b.WriteByte(' ')
	}
	b.WriteString(`"/>`)
	for i, c := range commits {
		if c.Changed {
			fmt.Fprintf(&b, `<circle class="change %s" cx="%.1f" cy="%.1f" r="2.5"/>`, BetterClass(c.Better), x(i), y(c.Median))
		}
	}
	last := len(commits) - 1
	fmt.Fprintf(&b, `<circle class="last" cx="%.1f" cy="%.1f" r="2"/></svg>`, x(last), y(commits[last].Median))
	return template.HTML(b.String())
}

// chartWriter builds the SVG text, with numbers written without fmt.
type chartWriter struct {
	strings.Builder
	scratch [32]byte
}

// num writes v with one decimal.
func (w *chartWriter) num(v float64) {
	w.Write(strconv.AppendFloat(w.scratch[:0], v, 'f', 1, 64))
}

// xy writes "x<sep>y" with one decimal.
func (w *chartWriter) xy(x, y float64, sep byte) {
	w.num(x)
	w.WriteByte(sep)
	w.num(y)
}

// pointTitle is a point's tooltip.
func pointTitle(c history.Commit, unit string) string {
	s := gitstate.ShortRef(c.Ref) + "  " + c.Time.Format("2006-01-02 15:04")
	if c.Branch != "" {
		s += "  " + c.Branch
	}
	if by := CommitBy(c.Subject, c.Author); by != "" {
		s += "\n" + by
	}
	s += "\nmedian " + measure.Format(c.Median, unit)
	if c.Lo != nil && c.Hi != nil {
		s += "  [" + measure.Format(*c.Lo, unit) + ", " + measure.Format(*c.Hi, unit) + "]"
	}
	if c.Delta != nil {
		s += "\n" + measure.FormatChange(*c.Delta) + " vs previous"
		if c.P != nil {
			s += "  p=" + strconv.FormatFloat(*c.P, 'f', 3, 64)
		}
	}
	return s
}

// HasInterval reports whether c's median has a confidence interval.
func HasInterval(c history.Commit) bool { return c.Lo != nil && c.Hi != nil }
