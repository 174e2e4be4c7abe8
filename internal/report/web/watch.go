package web

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/units"
)

// The watch pages show what 'perfscope scrape' stores: every target with
// its health and sparklines (/services), and one service over a time range
// (/services/view): its resources over time, the flame graph and top table
// of the range, a comparison of two ranges, one function over time and the
// findings. Every view is a permalink: its whole state is in the query.

// ServicesPath and ServicePath are where the watch pages are served.
const (
	ServicesPath = "/services"
	ServicePath  = "/services/view"
	// ServiceFlamePath is where pprof's UI of a range is mounted.
	ServiceFlamePath = "/services/pprof"
)

// A GaugeLine is one gauge of one target over a range, for a sparkline or
// a chart.
type GaugeLine struct {
	Gauge  profseries.Gauge
	Points []profseries.GaugePoint
	Step   time.Duration
	// Targets counts the targets whose scrapes the points merge; over
	// several, a gauge is their mean per target.
	Targets int
}

// A TargetHealth is what the scraper running in the server knows of a
// target: Known is false when no scraper runs or it has no such target.
type TargetHealth struct {
	Known      bool
	Up         bool
	LastError  string
	LastScrape time.Time
}

// A ServiceTarget is one scraped target as the services page is given it.
type ServiceTarget struct {
	Labels profseries.Labels
	// Types lists the profile types stored of it; Last is its newest
	// stored scrape.
	Types []string
	Last  time.Time
	// Version is the version label of its latest scrapes, if any.
	Version string
	Health  TargetHealth
	// Gauges has every gauge of profseries.Gauges, without points for
	// the types not stored.
	Gauges []GaugeLine
}

// ServicesPage is the data of /services.
type ServicesPage struct {
	Since   string // the range of the sparklines, "6h"
	Ranges  []RangeLink
	Rows    []ServiceRow
	Scraper bool // a scraper runs in this server
}

// A ServiceRow is one target's row.
type ServiceRow struct {
	Name, Selector string
	Href           string
	Types, Version string
	Status         string // "up", "down" or "stored"
	LastError      string
	LastScrape     string
	Sparks         []Spark
}

// A Spark is one gauge's sparkline and latest value.
type Spark struct {
	Name, Latest string
	SVG          template.HTML
}

// A RangeLink is one choice of the time-range picker.
type RangeLink struct {
	Label, Href string
	Here        bool
}

// Presets are the ranges the pickers offer, as durations ago.
var Presets = []string{"15m", "1h", "6h", "24h", "7d"}

// NewServicesPage lays out the services page at time now: one row per
// target, the sparklines over [from, to).
func NewServicesPage(since string, from, to, now time.Time, targets []ServiceTarget, scraper bool) *ServicesPage {
	p := &ServicesPage{Since: since, Scraper: scraper}
	for _, r := range Presets {
		p.Ranges = append(p.Ranges, RangeLink{Label: r, Href: ServicesPath + "?since=" + url.QueryEscape(r), Here: r == since})
	}
	for _, t := range targets {
		sel := t.Labels.String()
		row := ServiceRow{Name: targetName(t.Labels), Selector: sel, Href: ServiceHref(url.Values{"target": {sel}}),
			Types: strings.Join(t.Types, ", "), Version: t.Version, Status: "stored"}
		last := t.Last
		if t.Health.Known {
			row.Status = "down"
			if t.Health.Up {
				row.Status = "up"
			}
			row.LastError = t.Health.LastError
			if !t.Health.LastScrape.IsZero() {
				last = t.Health.LastScrape
			}
		}
		row.LastScrape = ago(now, last)
		for _, g := range t.Gauges {
			s := Spark{Name: g.Gauge.Name, Latest: "no data"}
			if !slices.Contains(t.Types, g.Gauge.Type) {
				s.Latest = "no " + g.Gauge.Type + " stored"
			}
			if n := len(g.Points); n > 0 {
				s.Latest = GaugeValue(g.Points[n-1].Value, g.Gauge.Unit)
				s.SVG = gaugeSparkline(g, from, to)
			}
			row.Sparks = append(row.Sparks, s)
		}
		p.Rows = append(p.Rows, row)
	}
	return p
}

// targetName is a target's short name: its job and instance, or its label
// set when it has neither.
func targetName(ls profseries.Labels) string {
	job, inst := ls.Get("job"), ls.Get("instance")
	switch {
	case job != "" && inst != "":
		return job + " · " + inst
	case job != "":
		return job
	case inst != "":
		return inst
	}
	return ls.String()
}

// ago writes how long before now t was: "12s ago", "3m ago", or the date
// beyond a day.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.UTC().Format("2006-01-02 15:04:05")
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// GaugeValue writes a gauge's value in its unit: "1.23 cores", "45.6 MiB",
// "1,204 goroutines".
func GaugeValue(v float64, unit string) string {
	switch unit {
	case "bytes":
		return units.Bytes(v)
	case "cores":
		return units.Number(v) + " cores"
	case "count":
		return units.Count(v)
	}
	return units.Number(v) + " " + unit
}

// ServiceHref is the address of the service page with query q.
func ServiceHref(q url.Values) string { return ServicePath + "?" + q.Encode() }

// gaugeSparkline draws g's points over [from, to) as a sparkline; x is
// time, so a gap in scrapes is a gap in the line.
func gaugeSparkline(g GaugeLine, from, to time.Time) template.HTML {
	var b chartWriter
	fmt.Fprintf(&b, `<svg class="spark" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="%s over the range" xmlns="http://www.w3.org/2000/svg">`,
		sparkW, sparkH, sparkW, sparkH, template.HTMLEscapeString(g.Gauge.Name))
	x, y := timeScale(from, to, sparkPad, sparkW-sparkPad), valueScale(g.Points, sparkH-sparkPad, sparkPad)
	writeLines(&b, g.Points, g.Step, x, y)
	last := g.Points[len(g.Points)-1]
	fmt.Fprintf(&b, `<circle class="last" cx="%.1f" cy="%.1f" r="2"/></svg>`, x(last.Start), y(last.Value))
	return template.HTML(b.String())
}

// timeScale maps [from, to] onto [x0, x1].
func timeScale(from, to time.Time, x0, x1 float64) func(time.Time) float64 {
	span := float64(to.Sub(from))
	if span <= 0 {
		span = 1
	}
	return func(t time.Time) float64 { return x0 + (x1-x0)*float64(t.Sub(from))/span }
}

// valueScale maps [0, max of points] onto [bottom, top]: gauges start at
// zero, so a line's height is its size.
func valueScale(points []profseries.GaugePoint, bottom, top float64) func(float64) float64 {
	hi := 0.0
	for _, p := range points {
		hi = math.Max(hi, p.Value)
	}
	if hi == 0 {
		hi = 1
	}
	return func(v float64) float64 { return bottom - (bottom-top)*v/hi }
}

// writeLines writes points as polylines, broken where scrapes are missing
// for more than two steps.
func writeLines(b *chartWriter, points []profseries.GaugePoint, step time.Duration, x func(time.Time) float64, y func(float64) float64) {
	open := false
	for i, p := range points {
		if i > 0 && p.Start.Sub(points[i-1].Start) > 2*step {
			b.WriteString(`"/>`)
			open = false
		}
		if !open {
			b.WriteString(`<polyline points="`)
			open = true
		}
		b.xy(x(p.Start), y(p.Value), ',')
		b.WriteByte(' ')
	}
	if open {
		b.WriteString(`"/>`)
	}
}

// A TimeChart is a gauge or share drawn over the page's range: an SVG a
// script can zoom (drag across it to choose a range) through its data-from
// and data-to attributes.
type TimeChart struct {
	Title string
	SVG   template.HTML
	// Latest and Peak summarise it in words for whoever cannot see it.
	Latest, Peak string
	Empty        bool
}

// Time chart geometry, in SVG user units; it scales to the page's width.
const (
	tcW, tcH         = 1000.0, 120.0
	tcLeft, tcRight  = 80.0, 10.0
	tcTop, tcBottom  = 8.0, 24.0
	tcXLabels        = 6
	tcYLabelsPerAxis = 3
)

// A Release marks on a time chart when a version began: where the line
// breaks for a restart and a level may step.
type Release struct {
	At time.Time
	// Label is what began: "1.0 → 1.1".
	Label string
}

// Releases marks when each version of vs after the first began, in
// time order (profseries.Versions).
func Releases(vs []profseries.Version) []Release {
	var out []Release
	for i := 1; i < len(vs); i++ {
		out = append(out, Release{At: vs[i].First, Label: vs[i-1].Value + " → " + vs[i].Value})
	}
	return out
}

// NewTimeChart draws g's points over [from, to), with a marked line
// where each of releases that falls in the range began.
func NewTimeChart(g GaugeLine, from, to time.Time, releases []Release) TimeChart {
	c := TimeChart{Title: g.Gauge.Name + " (" + g.Gauge.Unit + ")"}
	if g.Targets > 1 {
		c.Title += ", mean per target of " + strconv.Itoa(g.Targets)
	}
	if len(g.Points) == 0 {
		c.Empty = true
		return c
	}
	peak := slices.MaxFunc(g.Points, func(a, b profseries.GaugePoint) int { return cmp.Compare(a.Value, b.Value) })
	c.Latest = GaugeValue(g.Points[len(g.Points)-1].Value, g.Gauge.Unit)
	c.Peak = GaugeValue(peak.Value, g.Gauge.Unit)
	c.SVG = timeChart(g.Points, g.Step, from, to, g.Gauge.Name, func(v float64) string { return GaugeValue(v, g.Gauge.Unit) }, releases)
	return c
}

// timeChart draws points over [from, to) with a y axis labelled by label
// and an x axis of times; the SVG carries the range for zooming.
func timeChart(points []profseries.GaugePoint, step time.Duration, from, to time.Time, name string, label func(float64) string, releases []Release) template.HTML {
	return drawTimeChart(timeSeries{points: points, step: step, from: from, to: to, name: name, label: label, releases: releases, zoom: true})
}

// A timeSeries is what a time chart draws: points over [from, to), broken
// where more than two steps apart, with a y axis labelled by label; fit,
// when set, a fitted line drawn dashed over them; zoom makes it a chart
// dragging across zooms into (see watch.js).
type timeSeries struct {
	points   []profseries.GaugePoint
	step     time.Duration
	from, to time.Time
	name     string
	label    func(float64) string
	releases []Release
	fit      []profseries.GaugePoint
	zoom     bool
}

func drawTimeChart(c timeSeries) template.HTML {
	points, step, from, to, releases := c.points, c.step, c.from, c.to, c.releases
	class := "timechart"
	if c.zoom {
		class += " zoom"
	}
	var b chartWriter
	fmt.Fprintf(&b, `<svg class="%s" viewBox="0 0 %g %g" role="img" aria-label="%s from %s to %s" data-from="%d" data-to="%d" data-x0="%g" data-x1="%g" xmlns="http://www.w3.org/2000/svg">`,
		class, tcW, tcH, template.HTMLEscapeString(c.name), from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339),
		from.UnixMilli(), to.UnixMilli(), tcLeft/tcW, (tcW-tcRight)/tcW)
	x := timeScale(from, to, tcLeft, tcW-tcRight)
	scaled := append(slices.Clone(points), c.fit...)
	y := valueScale(scaled, tcH-tcBottom, tcTop)
	hi := 0.0
	for _, p := range scaled {
		hi = math.Max(hi, p.Value)
	}
	for i := 0; i <= tcYLabelsPerAxis-1; i++ {
		v := hi * float64(i) / float64(tcYLabelsPerAxis-1)
		fmt.Fprintf(&b, `<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/>`, tcLeft, tcW-tcRight, y(v), y(v))
		fmt.Fprintf(&b, `<text class="ylabel" x="%g" y="%.1f">%s</text>`, tcLeft-6, y(v)+4, template.HTMLEscapeString(c.label(v)))
	}
	layout := "15:04"
	switch span := to.Sub(from); {
	case span > 24*time.Hour:
		layout = "Jan 2 15:04"
	case span < 10*time.Minute:
		layout = "15:04:05" // labels a minute apart or less, where minutes would mislabel them
	}
	seen := map[string]bool{}
	for i := range tcXLabels {
		t := from.Add(time.Duration(float64(to.Sub(from)) * float64(i) / float64(tcXLabels-1)))
		s := t.UTC().Format(layout)
		if seen[s] {
			continue
		}
		seen[s] = true
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case tcXLabels - 1:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text class="xlabel" x="%.1f" y="%g" text-anchor="%s">%s</text>`, x(t), tcH-6, anchor, s)
	}
	for _, r := range releases {
		if r.At.Before(from) || !r.At.Before(to) {
			continue
		}
		// Anchored to the line's left unless that would run off the right.
		anchor, dx := "start", 3.0
		if x(r.At) > tcW-tcRight-120 {
			anchor, dx = "end", -3
		}
		fmt.Fprintf(&b, `<g class="release"><title>%s began at %s</title><line x1="%.1f" x2="%.1f" y1="%g" y2="%g"/><text x="%.1f" y="%g" text-anchor="%s">%s</text></g>`,
			template.HTMLEscapeString(r.Label), r.At.UTC().Format(time.RFC3339), x(r.At), x(r.At), tcTop, tcH-tcBottom,
			x(r.At)+dx, tcTop+10, anchor, template.HTMLEscapeString(r.Label))
	}
	b.WriteString(`<g class="line">`)
	writeLines(&b, points, step, x, y)
	b.WriteString(`</g>`)
	if len(c.fit) > 1 {
		b.WriteString(`<polyline class="fit" points="`)
		for _, p := range c.fit {
			b.xy(x(p.Start), y(p.Value), ',')
			b.WriteByte(' ')
		}
		b.WriteString(`"/>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// A ServiceQuery is the state of the service page as typed: every field
// is a query parameter, kept as the user wrote it.
type ServiceQuery struct {
	Target, Type, From, To string
	// BaseTarget is the compared range's selector when it is not
	// Target's (one version against another).
	BaseTarget string
	// BaseFrom and BaseTo, when set, compare the range with this one.
	BaseFrom, BaseTo string
	// Function is the function whose series is shown.
	Function string
	// Sort orders the top table (flat, cum, name); Search filters it.
	Sort, Search string
}

// Values is q as a query string's values, empty fields left out.
func (q ServiceQuery) Values() url.Values {
	v := url.Values{}
	for _, kv := range [][2]string{{"target", q.Target}, {"base_target", q.BaseTarget}, {"type", q.Type}, {"from", q.From}, {"to", q.To},
		{"base_from", q.BaseFrom}, {"base_to", q.BaseTo}, {"fn", q.Function}, {"sort", q.Sort}, {"search", q.Search}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	return v
}

// Href is the address of the page of q.
func (q ServiceQuery) Href() string { return ServiceHref(q.Values()) }

// ServicePage is the data of /services/view.
type ServicePage struct {
	Q ServiceQuery
	// Problem says what was wrong with the query; the form keeps what
	// was typed. The rest of the page is empty then.
	Problem string
	// From and To are the range resolved, in UTC.
	From, To string
	Presets  []RangeLink
	Types    []RangeLink
	// Empty says the range holds no scrapes; Nearest links a range of
	// the same length that does, "" when the selector has none at all.
	Empty, Nearest string
	Charts         []TimeChart
	// Flame is the address of pprof's flame graph of the range (or of
	// the comparison), for the frame; FlameUI that of its other views.
	Flame, FlameUI string
	Top            *TopTable
	Compare        *CompareView
	// NowVsHour and VersionVsPrevious are the one-click comparisons;
	// VersionNote says why the second is missing.
	NowVsHour, VersionVsPrevious, VersionNote string
	Function                                  *FunctionView
	Findings                                  []findings.Finding
	CompilerSkipped                           bool
	FindingsNote                              string
	Download                                  string
}

// A TopTable is the functions of a range, sorted and filtered as asked.
type TopTable struct {
	SampleType, Total string
	Rows              []TopRow
	// Shown and Matched count the rows shown and the rows the search
	// matched; All counts every function of the range.
	Shown, Matched, All int
	// SortFlat, SortCum and SortName are the links of the header.
	SortFlat, SortCum, SortName string
	Sort                        string
}

// A TopRow is one function of the table.
type TopRow struct {
	Function, Flat, Cum string
	FlatShare, CumShare string
	// Href shows the function's series.
	Href string
}

// topRowsMax bounds the rows the table shows; the search finds the rest.
const topRowsMax = 40

// NewTopTable lays out t for the page of q: rows whose name contains
// q.Search (any case), ordered by q.Sort, the first topRowsMax.
func NewTopTable(t *profiles.FuncTable, q ServiceQuery) *TopTable {
	tt := &TopTable{SampleType: t.SampleType, Total: units.Value(t.Total, t.Unit), All: len(t.Rows), Sort: q.Sort}
	if tt.Sort == "" {
		tt.Sort = "flat"
	}
	rows := slices.Clone(t.Rows)
	if s := strings.ToLower(q.Search); s != "" {
		rows = slices.DeleteFunc(rows, func(r profiles.Row) bool { return !strings.Contains(strings.ToLower(r.Function), s) })
	}
	switch tt.Sort {
	case "cum":
		slices.SortStableFunc(rows, func(a, b profiles.Row) int { return cmp.Compare(b.Cum, a.Cum) })
	case "name":
		slices.SortStableFunc(rows, func(a, b profiles.Row) int { return strings.Compare(a.Function, b.Function) })
	default:
		slices.SortStableFunc(rows, func(a, b profiles.Row) int { return cmp.Compare(b.Flat, a.Flat) })
	}
	tt.Matched = len(rows)
	rows = rows[:min(len(rows), topRowsMax)]
	tt.Shown = len(rows)
	for _, r := range rows {
		fq := q
		fq.Function = r.Function
		tt.Rows = append(tt.Rows, TopRow{Function: r.Function, Flat: units.Value(r.Flat, t.Unit), Cum: units.Value(r.Cum, t.Unit),
			FlatShare: units.Percent(r.FlatShare), CumShare: units.Percent(r.CumShare), Href: fq.Href() + "#function"})
	}
	for _, s := range []struct {
		to   *string
		sort string
	}{{&tt.SortFlat, "flat"}, {&tt.SortCum, "cum"}, {&tt.SortName, "name"}} {
		sq := q
		sq.Sort = s.sort
		*s.to = sq.Href() + "#top"
	}
	return tt
}

// A CompareView is one range against another, in shares of each range's
// total.
type CompareView struct {
	BaseFrom, BaseTo, HeadFrom, HeadTo string
	BaseTotal, HeadTotal               string
	SampleType                         string
	Rows                               []ShareChangeRow
	// Swap links the comparison the other way round; Close the page
	// without it.
	Swap, Close string
	// Problem says why there is no comparison.
	Problem string
}

// A ShareChangeRow is one function's change.
type ShareChangeRow struct {
	Function                       string
	BaseFlat, HeadFlat, Flat, Cum  string
	Better, Worse                  bool
	BaseCum, HeadCum, FunctionHref string
}

// compareRowsMax bounds the rows of the comparison: the largest changes.
const compareRowsMax = 50

// NewCompareView lays out d, base and head being the ranges' bounds.
func NewCompareView(d *profseries.RangeDiff, q ServiceQuery, baseFrom, baseTo, headFrom, headTo time.Time) *CompareView {
	c := &CompareView{BaseFrom: stamp(baseFrom), BaseTo: stamp(baseTo), HeadFrom: stamp(headFrom), HeadTo: stamp(headTo),
		BaseTotal: units.Value(d.BaseTotal, d.Unit), HeadTotal: units.Value(d.HeadTotal, d.Unit), SampleType: d.SampleType}
	for _, f := range d.Functions[:min(len(d.Functions), compareRowsMax)] {
		fq := q
		fq.Function = f.Function
		c.Rows = append(c.Rows, ShareChangeRow{Function: f.Function, BaseFlat: units.Percent(f.BaseFlat), HeadFlat: units.Percent(f.HeadFlat),
			Flat: units.Points(f.Flat), Cum: units.Points(f.Cum), BaseCum: units.Percent(f.BaseCum), HeadCum: units.Percent(f.HeadCum),
			Better: f.Flat < 0, Worse: f.Flat > 0, FunctionHref: fq.Href() + "#function"})
	}
	sw := q
	sw.From, sw.To, sw.BaseFrom, sw.BaseTo = stamp(baseFrom), stamp(baseTo), stamp(headFrom), stamp(headTo)
	if q.BaseTarget != "" {
		sw.Target, sw.BaseTarget = q.BaseTarget, q.Target
	}
	c.Swap = sw.Href()
	cl := q
	cl.BaseFrom, cl.BaseTo, cl.BaseTarget = "", "", ""
	c.Close = cl.Href()
	return c
}

// stamp writes an instant as the page's links carry it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// A FunctionView is one function's share over the range.
type FunctionView struct {
	Name  string
	Chart TimeChart
	Close string
	// Problem says why there is no series.
	Problem string
}

// NewFunctionView draws the cumulative share of the function q names over
// [from, to).
func NewFunctionView(q ServiceQuery, pts []profseries.FunctionPoint, step time.Duration, from, to time.Time, releases []Release, problem string) *FunctionView {
	cl := q
	cl.Function = ""
	v := &FunctionView{Name: q.Function, Close: cl.Href(), Problem: problem}
	if problem != "" {
		return v
	}
	line := GaugeLine{Gauge: profseries.Gauge{Name: "share of " + q.Type + " (cum)", Unit: "share"}, Step: step}
	for _, p := range pts {
		line.Points = append(line.Points, profseries.GaugePoint{Start: p.Start, Value: p.CumShare, Scrapes: p.Scrapes})
	}
	v.Chart = TimeChart{Title: "Share of the range's " + q.Type + " (cum) per " + step.String()}
	if len(line.Points) == 0 {
		v.Chart.Empty = true
		return v
	}
	peak := slices.MaxFunc(line.Points, func(a, b profseries.GaugePoint) int { return cmp.Compare(a.Value, b.Value) })
	v.Chart.Latest, v.Chart.Peak = units.Percent(line.Points[len(line.Points)-1].Value), units.Percent(peak.Value)
	v.Chart.SVG = timeChart(line.Points, step, from, to, "share of "+q.Function, units.Percent, releases)
	return v
}

// NewServicePage lays out the parts of the page every view has: the
// picker's presets and types, and the addresses of the flame graph.
func NewServicePage(q ServiceQuery, from, to time.Time) *ServicePage {
	p := &ServicePage{Q: q, From: stamp(from), To: stamp(to)}
	for _, r := range Presets {
		pq := q
		pq.From, pq.To = r, ""
		pq.BaseFrom, pq.BaseTo, pq.BaseTarget = "", "", ""
		p.Presets = append(p.Presets, RangeLink{Label: r, Href: pq.Href(), Here: q.From == r && q.To == ""})
	}
	for _, t := range profseries.Types {
		tq := q
		tq.Type, tq.Function, tq.Search = t, "", ""
		p.Types = append(p.Types, RangeLink{Label: t, Href: tq.Href(), Here: q.Type == t})
	}
	return p
}

// FlameQuery is the query of pprof's UI of the page's range: absolute
// instants, so the UI built for it is reused on reload.
func FlameQuery(q ServiceQuery, from, to time.Time, base *[2]time.Time) url.Values {
	v := url.Values{"target": {q.Target}, "type": {q.Type}, "from": {stamp(from)}, "to": {stamp(to)}}
	if base != nil {
		if q.BaseTarget != "" {
			v.Set("base_target", q.BaseTarget)
		}
		v.Set("base_from", stamp(base[0]))
		v.Set("base_to", stamp(base[1]))
	}
	return v
}
