package server

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/perf/benchunit"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
)

// pageBenchmarks lists the recorded benchmarks: GET /benchmarks.
//
// Query parameters:
//
//	branch, machine  benchmarks with results on this branch, host
//	package          one package (exact import path)
//	name             regular expression the benchmark name must match
func (s *Server) pageBenchmarks(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	q := r.URL.Query()
	data := struct {
		Branch, Machine, Package, Name string
		Branches, Machines, Packages   []string
		Benchmarks                     []benchRow
		Any                            bool
		Error                          string
	}{Branch: q.Get("branch"), Machine: q.Get("machine"), Package: q.Get("package"), Name: q.Get("name")}
	var err error
	if data.Branches, data.Machines, err = s.branchesAndMachines(ctx); err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	all, err := s.cfg.Store.Benchmarks(ctx, store.Filter{Branch: data.Branch, Machine: data.Machine})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	data.Any = len(all) > 0
	for _, b := range all {
		if !slices.Contains(data.Packages, b.Package) {
			data.Packages = append(data.Packages, b.Package)
		}
	}
	f := store.Filter{Branch: data.Branch, Machine: data.Machine, Package: exactRegexp(data.Package), Name: data.Name}
	benches, err := s.cfg.Store.Benchmarks(ctx, f)
	if err != nil {
		data.Error = err.Error() // a bad regular expression: say so on the page
	}
	if err == nil && len(benches) > 0 {
		cv, err := s.changes(ctx, history.Query{Filter: f})
		if err != nil {
			s.fail(w, r, statusOf(err), err)
			return
		}
		data.Benchmarks = benchRows(cv.Views, q)
	}
	s.pages.render(w, http.StatusOK, "benchmarks", "Benchmarks", "benchmarks", data, start)
}

// A benchRow is one benchmark of the list on one line (branch and
// machine), with each metric's latest value and recent trend.
type benchRow struct {
	store.Benchmark
	Branch, Machine string
	Metrics         []benchMetric
}

// benchRows groups series views, in history.Changes' order, into one row
// per benchmark and line, metrics in unitRank order; keep holds the list's
// filters for its links.
func benchRows(views []*seriesView, keep url.Values) []benchRow {
	var rows []benchRow
	index := make(map[[4]string]int)
	for _, v := range views {
		k := [4]string{v.Package, v.Name, v.Branch, v.Machine}
		i, ok := index[k]
		if !ok {
			i = len(rows)
			index[k] = i
			rows = append(rows, benchRow{Benchmark: store.Benchmark{Package: v.Package, Name: v.Name}, Branch: v.Branch, Machine: v.Machine})
		}
		links := url.Values{"branch": {v.Branch}, "machine": {v.Machine}}
		rows[i].Units = append(rows[i].Units, v.Unit)
		rows[i].Metrics = append(rows[i].Metrics, newBenchMetric(v.Unit, v, links))
	}
	for i := range rows {
		slices.SortStableFunc(rows[i].Metrics, func(x, y benchMetric) int { return unitRank(x.Unit) - unitRank(y.Unit) })
	}
	return rows
}

// A benchMetric is one metric of a benchmark in the list.
type benchMetric struct {
	Unit    string
	Latest  string        // the latest commit's median, "" without results
	Delta   string        // the latest change beyond the noise, "" when none
	Class   string        // "better" or "worse": that change's direction
	At      string        // the commit of that change
	Compare string        // that commit's comparison with the one before
	Spark   template.HTML // the recent commits' medians
	Commits int
}

// sparkCommits is how many commits a sparkline shows: enough for a trend, few
// enough for each point to be seen at its size.
const sparkCommits = 30

// newBenchMetric summarises v; keep holds the list's branch and machine
// for its links.
func newBenchMetric(unit string, v *seriesView, keep url.Values) benchMetric {
	m := benchMetric{Unit: unit}
	if v == nil || len(v.Commits) == 0 {
		return m
	}
	last := v.Commits[len(v.Commits)-1]
	m.Commits = len(v.Commits)
	m.Latest = formatUnit(last.Median, unit)
	for i := len(v.Commits) - 1; i >= 0; i-- {
		if c := v.Commits[i]; c.Changed && c.Delta != nil {
			m.Delta, m.Class, m.At = signedPercent(*c.Delta), betterClass(c.Better), c.Ref
			m.Compare = compareLink(c.Previous, c.Ref, keep)
			break
		}
	}
	m.Spark = sparkline(v, sparkCommits)
	return m
}

// branchesAndMachines lists the branches and hosts with benchmark results,
// for the filter menus. Listing them aggregates every run, so the lists are
// kept until the history changes.
func (s *Server) branchesAndMachines(ctx context.Context) (branches, machines []string, err error) {
	version, err := s.cfg.Store.BenchVersion(ctx)
	if err != nil {
		return nil, nil, err
	}
	m := &s.menus
	m.mu.Lock()
	if m.valid && m.version == version {
		defer m.mu.Unlock()
		return m.branches, m.machines, nil
	}
	m.mu.Unlock()
	commits, err := s.cfg.Store.Commits(ctx, store.Filter{Order: store.ByInsertion})
	if err != nil {
		return nil, nil, err
	}
	for _, c := range commits {
		if c.Branch != "" && !slices.Contains(branches, c.Branch) {
			branches = append(branches, c.Branch)
		}
		for _, m := range c.Machines {
			if !slices.Contains(machines, m) {
				machines = append(machines, m)
			}
		}
	}
	slices.Sort(branches)
	slices.Sort(machines)
	m.mu.Lock()
	m.valid, m.version, m.branches, m.machines = true, version, branches, machines
	m.mu.Unlock()
	return branches, machines, nil
}

// filterMenus are the cached choices of the branch and machine menus.
type filterMenus struct {
	mu                 sync.Mutex
	valid              bool
	version            store.Version
	branches, machines []string
}

// trendWindows are the choices of how many commits a trend shows.
var trendWindows = []string{"100", "500", "1000", "all"}

// defaultTrendWindow is how many commits a trend shows unless asked:
// history.DefaultWindow, the window every other page and the CLI judge, so
// that its marks are theirs.
var defaultTrendWindow = strconv.Itoa(history.DefaultWindow)

// trendData is the trend page's data.
type trendData struct {
	Package, Name, Unit, Branch, Machine, N string
	Units, Branches, Machines, Windows      []string
	Series                                  *seriesView
	Changes                                 []seriesCommit // newest first
	Chart                                   template.HTML
	Confidence                              float64
	keep                                    url.Values
}

// Fmt formats a value of the series' unit.
func (d *trendData) Fmt(v float64) string { return formatUnit(v, d.Unit) }

// Link is the comparison page of two commits.
func (d *trendData) Link(base, head string) string { return compareLink(base, head, d.keep) }

// pageTrend shows one benchmark metric over commits: GET /trend. 404 when
// the metric has no results matching the filter.
//
// Query parameters:
//
//	package, name  the benchmark (exact)
//	unit           the metric; default the benchmark's first
//	branch, machine  runs on this branch, host only
//	n              the latest n commits (100, 500, 1000 or all; default
//	               history.DefaultWindow, 100): a series' noise is
//	               estimated over them
func (s *Server) pageTrend(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	q := r.URL.Query()
	d := &trendData{Package: q.Get("package"), Name: q.Get("name"), Unit: q.Get("unit"),
		Branch: q.Get("branch"), Machine: q.Get("machine"), N: q.Get("n"), Windows: trendWindows, keep: q}
	if d.N == "" {
		d.N = defaultTrendWindow
	}
	window := history.AllCommits
	if d.N != "all" {
		n, err := strconv.Atoi(d.N)
		if err != nil || n < 1 {
			s.fail(w, r, http.StatusBadRequest, badRequest("n "+strconv.Quote(d.N)+": want a number of commits or all"))
			return
		}
		window = n
		if !slices.Contains(d.Windows, d.N) {
			d.Windows = append([]string{d.N}, d.Windows...)
		}
	}
	benches, err := s.cfg.Store.Benchmarks(ctx, store.Filter{Package: exactRegexp(d.Package), Name: exactRegexp(d.Name)})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	if len(benches) == 0 || d.Name == "" {
		s.fail(w, r, http.StatusNotFound, notFound("No benchmark "+d.Name+" in package "+d.Package+" is recorded."))
		return
	}
	d.Units = benches[0].Units
	slices.SortStableFunc(d.Units, func(a, b string) int { return unitRank(a) - unitRank(b) })
	if d.Unit == "" {
		d.Unit = d.Units[0]
	}
	if d.Branches, d.Machines, err = s.branchesAndMachines(ctx); err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	sq := seriesQuery{Key: store.SeriesKey{Package: d.Package, Name: d.Name, Unit: d.Unit},
		Filter: store.Filter{Branch: d.Branch, Machine: d.Machine}, Alpha: 0.05, Window: window}
	d.Series, err = s.series(ctx, sq)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	d.Confidence = 0.95
	// Links compare on the series' own line.
	d.keep = url.Values{"branch": {d.Series.Branch}, "machine": {d.Series.Machine}}
	for _, c := range d.Series.Commits {
		if c.Changed {
			d.Changes = append(d.Changes, c)
		}
	}
	slices.Reverse(d.Changes)
	d.Chart = d.Series.chartHTML(d.Link)
	s.pages.render(w, http.StatusOK, "trend", d.Name+" "+d.Unit, "benchmarks", d, start)
}

// unitRank orders the units go test reports first, as benchstat does,
// after instruction counts: where a series has them, its trend chart and
// marked changes default to the measure a busy machine cannot disturb.
func unitRank(unit string) int {
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

// A cmpTable is one benchstat table as the compare page shows it.
type cmpTable struct {
	Unit, Config         string
	BaseLabel, HeadLabel string
	Rows                 []cmpRow
}

type cmpRow struct {
	Name, Base, Head, Delta, P string
	Class                      string // "better", "worse" or ""
}

// cmpTables turns a comparison of two inputs into rows of text.
func cmpTables(c *benchstats.Comparison) []cmpTable {
	var out []cmpTable
	for _, t := range c.Tables {
		if len(t.Columns) != 2 {
			continue
		}
		ct := cmpTable{Unit: t.Unit, BaseLabel: t.Columns[0].Label, HeadLabel: t.Columns[1].Label}
		for _, kv := range t.Config {
			if kv.Key == ".file" {
				continue
			}
			if ct.Config != "" {
				ct.Config += " "
			}
			ct.Config += kv.Key + ": " + kv.Value
		}
		for _, r := range t.Rows {
			base, head := r.Cells[0], r.Cells[1]
			// One prefix for the row, as the CLI's tables.
			var centers []float64
			for _, c := range r.Cells {
				if c != nil {
					centers = append(centers, c.Summary.Center)
				}
			}
			sc := measure.TableScale(t.Unit, centers)
			row := cmpRow{Name: r.Name, Base: cellText(base, sc), Head: cellText(head, sc)}
			if head != nil && head.Change != nil {
				ch := head.Change
				row.Delta = ch.Delta
				row.P = strconv.FormatFloat(ch.Test.P, 'f', 3, 64)
				if ch.Significant {
					row.Class = betterClass(measure.Improves(t.Unit, nil, ch.Base.Summary.Center, head.Summary.Center))
				}
			}
			ct.Rows = append(ct.Rows, row)
		}
		out = append(out, ct)
	}
	return out
}

// cellText is a cell's center on its row's scale, with its confidence
// interval, as the CLI's comparison tables write it.
func cellText(c *benchstats.Cell, sc benchunit.Scaler) string {
	if c == nil {
		return ""
	}
	return sc.Format(c.Summary.Center) + " ± " + c.Summary.PctRangeString()
}

// pageCompare compares two commits (benchstat tables) or two runs (side
// by side, with diff flame graphs): GET /compare.
//
// Query parameters:
//
//	base, head          two commits (hash or unique prefix)
//	branch, machine     runs of the commits on this branch, host only
//	alpha               significance level of the U test (default 0.05)
//	base_run, head_run  two profiling runs, instead of commits
func (s *Server) pageCompare(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	q := r.URL.Query()
	data := struct {
		Base, Head, Branch, Machine, BaseRun, HeadRun string
		Alpha                                         float64
		Runs                                          []store.ProfileRun
		Commits                                       *struct {
			Base, Head *store.CommitSamples
			Tables     []cmpTable
			Text       string
		}
		RunCmp *runComparison
		// CommitRuns are profiling runs of the two commits, for diff
		// flame graphs next to the benchmark comparison.
		CommitRuns *commitRuns
		Error      string
	}{Base: q.Get("base"), Head: q.Get("head"), Branch: q.Get("branch"), Machine: q.Get("machine"),
		BaseRun: q.Get("base_run"), HeadRun: q.Get("head_run"), Alpha: 0.05}
	var err error
	if data.Runs, err = s.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: 200}); err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	code := http.StatusOK
	switch {
	case data.Base != "" || data.Head != "":
		cq, err := parseCompareQuery(q)
		if err == nil {
			data.Alpha = cq.Alpha
			var cc *commitComparison
			if cc, err = s.compareCommits(ctx, cq); err == nil {
				var text bytes.Buffer
				_ = report.WriteBenchComparison(&text, report.Text, cc.Cmp, nil)
				data.Commits = &struct {
					Base, Head *store.CommitSamples
					Tables     []cmpTable
					Text       string
				}{cc.Base, cc.Head, cmpTables(cc.Cmp), text.String()}
				data.CommitRuns = s.runsOfCommits(ctx, cc.Base.Commit, cc.Head.Commit)
			}
		}
		if err != nil {
			code, data.Error = statusOf(err), err.Error()
		}
	case data.BaseRun != "" || data.HeadRun != "":
		if data.RunCmp, err = s.compareRuns(ctx, data.BaseRun, data.HeadRun); err != nil {
			code, data.Error = statusOf(err), err.Error()
		}
	}
	if code == http.StatusNotFound {
		// An unknown commit or run: the site's 404 page, with the way
		// back to the comparison form.
		s.fail(w, r, code, errors.New(data.Error))
		return
	}
	s.pages.render(w, code, "compare", "Compare", "compare", data, start)
}

// commitRuns are the latest profiling runs of two commits.
type commitRuns struct {
	Base, Head string
	Kinds      []string // profile kinds both have
}

// runsOfCommits finds the latest run of each commit, or nil when either
// commit has none.
func (s *Server) runsOfCommits(ctx context.Context, base, head store.Commit) *commitRuns {
	find := func(c store.Commit) string {
		runs, err := s.cfg.Store.ProfileRuns(ctx, store.RunFilter{Commit: c.Ref(), Limit: 1})
		if err != nil || len(runs) == 0 {
			return ""
		}
		return runs[0].ID
	}
	cr := &commitRuns{Base: find(base), Head: find(head)}
	if cr.Base == "" || cr.Head == "" || cr.Base == cr.Head {
		return nil
	}
	b, err := s.loadRun(ctx, cr.Base)
	if err != nil {
		return nil
	}
	h, err := s.loadRun(ctx, cr.Head)
	if err != nil {
		return nil
	}
	for _, pf := range h.Profiles {
		if pf.File != "" && b.Has(pf.Kind) {
			cr.Kinds = append(cr.Kinds, pf.Kind)
		}
	}
	return cr
}
