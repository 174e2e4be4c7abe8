package web

import (
	"html/template"
	"net/url"
	"slices"
	"strconv"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/store"
)

// BenchList is the benchmark list's data: its filters, the choices of its
// menus, and a row per benchmark and line.
type BenchList struct {
	Branch, Machine, Package, Name string
	Branches, Machines, Packages   []string
	Benchmarks                     []BenchRow
	// Any says benchmarks are recorded on the branch and machine, the
	// other filters aside.
	Any bool
	// Error says why the filter could not be applied (a bad pattern).
	Error string
}

// A BenchRow is one benchmark of the list on one line (branch and
// machine), with each metric's latest value and recent trend.
type BenchRow struct {
	store.Benchmark
	Branch, Machine string
	Metrics         []BenchMetric
}

// BenchRows groups series, in history.Changes' order, into one row per
// benchmark and line, metrics in UnitRank order.
func BenchRows(views []*Series) []BenchRow {
	var rows []BenchRow
	index := make(map[[4]string]int)
	for _, v := range views {
		k := [4]string{v.Package, v.Name, v.Branch, v.Machine}
		i, ok := index[k]
		if !ok {
			i = len(rows)
			index[k] = i
			rows = append(rows, BenchRow{Benchmark: store.Benchmark{Package: v.Package, Name: v.Name}, Branch: v.Branch, Machine: v.Machine})
		}
		links := url.Values{"branch": {v.Branch}, "machine": {v.Machine}}
		rows[i].Units = append(rows[i].Units, v.Unit)
		rows[i].Metrics = append(rows[i].Metrics, newBenchMetric(v.Unit, &v.Series, links))
	}
	for i := range rows {
		slices.SortStableFunc(rows[i].Metrics, func(x, y BenchMetric) int { return UnitRank(x.Unit) - UnitRank(y.Unit) })
	}
	return rows
}

// A BenchMetric is one metric of a benchmark in the list.
type BenchMetric struct {
	Unit   string
	Latest string // the latest commit's median, "" without results
	Delta  string // the latest change beyond the noise, "" when none
	Class  string // "better" or "worse": that change's direction
	At     string // the commit of that change
	// AtSubject and AtAuthor are that commit's subject and author, ""
	// when its runs did not record them.
	AtSubject, AtAuthor string
	Compare             string        // that commit's comparison with the one before
	Spark               template.HTML // the recent commits' medians
	Commits             int
}

// sparkCommits is how many commits a sparkline shows: enough for a trend, few
// enough for each point to be seen at its size.
const sparkCommits = 30

// newBenchMetric summarises s; keep holds the list's branch and machine
// for its links.
func newBenchMetric(unit string, s *history.Series, keep url.Values) BenchMetric {
	m := BenchMetric{Unit: unit}
	if s == nil || len(s.Commits) == 0 {
		return m
	}
	last := s.Commits[len(s.Commits)-1]
	m.Commits = len(s.Commits)
	m.Latest = measure.Format(last.Median, unit)
	for i := len(s.Commits) - 1; i >= 0; i-- {
		if c := s.Commits[i]; c.Changed && c.Delta != nil {
			m.Delta, m.Class, m.At = measure.FormatChange(*c.Delta), BetterClass(c.Better), c.Ref
			m.AtSubject, m.AtAuthor = c.Subject, c.Author
			m.Compare = CompareLink(c.Previous, c.Ref, keep)
			break
		}
	}
	m.Spark = Sparkline(s, sparkCommits)
	return m
}

// UnitRank orders the units go test reports first, as benchstat does,
// after instruction counts: where a series has them, its trend chart and
// marked changes default to the measure a busy machine cannot disturb.
func UnitRank(unit string) int {
	switch unit {
	case measure.Instructions:
		return -1
	case "sec/op":
		return 0
	case "B/op":
		return 1
	case "allocs/op":
		return 2
	}
	return 3
}

// trendWindows are the choices of how many commits a trend shows.
var trendWindows = []string{"100", "500", "1000", "all"}

// A Trend is the trend page's data: one metric over commits, its filters
// and menus, its chart and its marked changes.
type Trend struct {
	Package, Name, Unit, Branch, Machine string
	// N is the window, a number of commits or "all".
	N                                  string
	Units, Branches, Machines, Windows []string
	Series                             *Series
	Changes                            []history.Commit // newest first
	Chart                              template.HTML
	Confidence                         float64
	// Band says the chart draws a confidence band: some commit's median
	// has an interval.
	Band bool
	keep url.Values
}

// NewTrend starts the trend page of the metric a request names, with its
// window n ("" for history.DefaultWindow, the window every other page and
// the CLI judge, so that its marks are theirs). It returns the window as
// history.Query takes it, or an error for an n that is not a number of
// commits or "all".
func NewTrend(q url.Values) (*Trend, int, error) {
	d := &Trend{Package: q.Get("package"), Name: q.Get("name"), Unit: q.Get("unit"),
		Branch: q.Get("branch"), Machine: q.Get("machine"), N: q.Get("n"), Windows: trendWindows, Confidence: 0.95}
	if d.N == "" {
		d.N = strconv.Itoa(history.DefaultWindow)
	}
	window := history.AllCommits
	if d.N != "all" {
		n, err := strconv.Atoi(d.N)
		if err != nil || n < 1 {
			return nil, 0, errBadWindow(d.N)
		}
		window = n
		if !slices.Contains(d.Windows, d.N) {
			d.Windows = append([]string{d.N}, d.Windows...)
		}
	}
	return d, window, nil
}

// SetUnits sets the benchmark's units, the menu of metrics, in UnitRank
// order; the page shows the first unless the request named one.
func (d *Trend) SetUnits(units []string) {
	d.Units = slices.Clone(units)
	slices.SortStableFunc(d.Units, func(a, b string) int { return UnitRank(a) - UnitRank(b) })
	if d.Unit == "" && len(d.Units) > 0 {
		d.Unit = d.Units[0]
	}
}

// errBadWindow is the error of a window that is not a number of commits.
type errBadWindow string

func (e errBadWindow) Error() string {
	return "n " + strconv.Quote(string(e)) + ": want a number of commits or all"
}

// Show sets the series the page shows: its marked changes, newest first,
// and its chart, whose links compare on the series' own line.
func (d *Trend) Show(s *Series) {
	d.Series = s
	d.keep = url.Values{"branch": {s.Branch}, "machine": {s.Machine}}
	for _, c := range s.Commits {
		if c.Changed {
			d.Changes = append(d.Changes, c)
		}
		d.Band = d.Band || HasInterval(c)
	}
	slices.Reverse(d.Changes)
	d.Chart = s.Chart(d.Link)
}

// Fmt formats a value of the series' unit.
func (d *Trend) Fmt(v float64) string { return measure.Format(v, d.Unit) }

// Link is the comparison page of two commits.
func (d *Trend) Link(base, head string) string { return CompareLink(base, head, d.keep) }

// CommitBy names a commit in words, for a tooltip or a line of a page:
// "subject — author", either alone when the other is unknown, "" when
// both are.
func CommitBy(subject, author string) string {
	switch {
	case subject == "":
		return author
	case author == "":
		return subject
	}
	return subject + " — " + author
}
