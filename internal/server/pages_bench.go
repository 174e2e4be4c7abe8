package server

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/report/web"
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
	data := &web.BenchList{Branch: q.Get("branch"), Machine: q.Get("machine"), Package: q.Get("package"), Name: q.Get("name")}
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
		data.Benchmarks = web.BenchRows(cv.Series)
	}
	s.pages.render(w, http.StatusOK, "benchmarks", "Benchmarks", "benchmarks", data, start)
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
	d, window, err := web.NewTrend(q)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, badRequest(err.Error()))
		return
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
	d.SetUnits(benches[0].Units)
	if d.Branches, d.Machines, err = s.branchesAndMachines(ctx); err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	sq := seriesQuery{Key: store.SeriesKey{Package: d.Package, Name: d.Name, Unit: d.Unit},
		Filter: store.Filter{Branch: d.Branch, Machine: d.Machine}, Alpha: 0.05, Window: window}
	series, err := s.series(ctx, sq)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	d.Show(series)
	s.pages.render(w, http.StatusOK, "trend", d.Name+" "+d.Unit, "benchmarks", d, start)
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
	data := &web.Compare{Base: q.Get("base"), Head: q.Get("head"), Branch: q.Get("branch"), Machine: q.Get("machine"),
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
				data.Commits = web.NewCommitComparison(cc.Base, cc.Head, cc.Cmp)
				data.Instructions = web.NewInstructionChanges(cc.Base.Commit, cc.Head.Commit, cc.Changes)
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
	// An unknown commit or run (a typo) answers 404 with the form as it
	// was typed and what was wrong, to be corrected in place.
	s.pages.render(w, code, "compare", "Compare", "compare", data, start)
}

// runsOfCommits finds the latest run of each commit, or nil when either
// commit has none.
func (s *Server) runsOfCommits(ctx context.Context, base, head store.Commit) *web.CommitRuns {
	find := func(c store.Commit) string {
		runs, err := s.cfg.Store.ProfileRuns(ctx, store.RunFilter{Commit: c.Ref(), Limit: 1})
		if err != nil || len(runs) == 0 {
			return ""
		}
		return runs[0].ID
	}
	cr := &web.CommitRuns{Base: find(base), Head: find(head)}
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
	cr.Kinds = web.SharedKinds(b, h)
	return cr
}
