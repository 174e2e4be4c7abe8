package server

import (
	"net/http"
	"time"
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
	data, err := s.dash.Benchmarks(r.Context(), r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	s.pages.render(w, http.StatusOK, "benchmarks", "Benchmarks", "benchmarks", data, start)
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
	d, err := s.dash.Trend(r.Context(), r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
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
	data, err := s.dash.Compare(r.Context(), r.URL.Query())
	// An unknown commit or run (a typo) answers 404 with the form as it
	// was typed and what was wrong, to be corrected in place.
	renderForm(s, w, r, "compare", "Compare", data, err, start)
}
