package server

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
)

// handleCommits lists the commits with benchmark results:
// GET /api/v1/commits answers a JSON array of commits, oldest first.
//
// Query parameters:
//
//	branch   runs on this branch only
//	machine  runs on this host only
//	since    commits at or after this time (RFC 3339, 2025-03-01 or Unix seconds)
//	limit    the latest N commits only
//	order    commit (by committer date, the default) or insertion (by first upload)
func (s *Server) handleCommits(w http.ResponseWriter, r *http.Request) {
	f, err := dashboard.ParseFilter(r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	commits, err := s.cfg.Store.Commits(r.Context(), f)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(commits))
}

// handleCommit returns every sample recorded for one commit:
// GET /api/v1/commits/{ref}, where ref is a hash or a unique prefix of at
// least 4 characters, with "+dirty" for runs on a modified work tree. 404
// when no run of it matches.
//
// Query parameters:
//
//	branch, machine  runs on this branch, host only
//	package, name    regular expressions the import path and benchmark name must match
//	unit             one unit only (sec/op, B/op, allocs/op, ...)
func (s *Server) handleCommit(w http.ResponseWriter, r *http.Request) {
	f, err := dashboard.ParseFilter(r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	cs, err := s.cfg.Store.CommitSamples(r.Context(), r.PathValue("ref"), f)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, cs)
}

// handleBenchmarks lists the recorded benchmarks with their units:
// GET /api/v1/benchmarks answers a JSON array sorted by package and name.
//
// Query parameters:
//
//	branch, machine  benchmarks with results on this branch, host
//	package, name    regular expressions the import path and benchmark name must match
//	unit             benchmarks that report this unit
func (s *Server) handleBenchmarks(w http.ResponseWriter, r *http.Request) {
	f, err := dashboard.ParseFilter(r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	benches, err := s.cfg.Store.Benchmarks(r.Context(), f)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(benches))
}

// handleSeries returns one benchmark metric's history: GET /api/v1/series
// answers a seriesView, one entry per commit (oldest first) with the median,
// its 95% confidence interval, the change from the previous commit with its
// U-test p-value, and the commits marked changed, as 'perfscope history'
// computes them. 404 when the metric has no results matching the filter.
//
// Query parameters:
//
//	package, name, unit  the metric (required; exact import path, full
//	                     benchmark name as stored, e.g. "Parse/size=10-8", and unit)
//	branch, machine      the series on this branch, host; when the filter
//	                     leaves several, the one measured latest, with a
//	                     warning naming the others
//	since                as for /api/v1/commits
//	limit                the latest N commits judged (default 100, as
//	                     every page and 'perfscope history'; 0 for all)
//	alpha                significance level of the U test (default 0.05)
//
// A series is always in commit order; order is accepted and not used.
func (s *Server) handleSeries(w http.ResponseWriter, r *http.Request) {
	q, err := dashboard.ParseSeriesQuery(r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	v, err := s.dash.Series(r.Context(), q)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// handleCompare compares two commits as benchstat compares two files:
// GET /api/v1/compare answers the comparison as 'perfscope compare
// --format json' prints it (or as text or Markdown with format), with,
// for every benchmark whose instructions/op moved beyond the gate's
// default threshold, where it changed: instruction_changes in JSON, a
// "Where it changed" section in text and Markdown. 404 when either commit
// has no results matching the filter.
//
// Query parameters:
//
//	base, head       the commits (required; hash or unique prefix, "+dirty" suffix for dirty runs)
//	branch, machine  runs on this branch, host only
//	package, name    regular expressions the import path and benchmark name must match
//	unit             one unit only
//	alpha            significance level of the U test (default 0.05)
//	format           json (default), text or markdown
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	cq, err := dashboard.ParseCompareQuery(r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "text" && format != "markdown" {
		s.fail(w, r, http.StatusBadRequest, badRequest(fmt.Sprintf("format %q: want json, text or markdown", format)))
		return
	}
	cc, err := s.dash.CompareCommits(r.Context(), cq)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	switch format {
	case "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		err = report.WriteCommitComparison(w, report.Text, cc.Cmp, cc.Changes)
	case "markdown":
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		err = report.WriteCommitComparison(w, report.Markdown, cc.Cmp, cc.Changes)
	default:
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		err = report.WriteCommitComparison(w, report.JSON, cc.Cmp, cc.Changes)
	}
	if err != nil {
		s.cfg.Logf("write comparison: %v", err)
	}
}

// handleRuns lists the profiling runs, newest first: GET /api/v1/runs.
//
// Query parameters:
//
//	since  runs started at or after this time (RFC 3339, 2025-03-01 or Unix seconds)
//	limit  the latest N runs only
func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	f, err := dashboard.ParseFilter(r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	runs, err := s.cfg.Store.ProfileRuns(r.Context(), store.RunFilter{Since: f.Since, Limit: f.Limit})
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(runs))
}

// handleRun returns a profiling run's description, its run.json:
// GET /api/v1/runs/{id}. 404 for an unknown id. No query parameters.
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	saved, err := s.dash.Run(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, saved)
}

// handleRunReport renders a run's report as 'perfscope report' does:
// GET /api/v1/runs/{id}/report.
//
// Query parameters:
//
//	format  json (default, the analysis with its findings), markdown or text
//	route   only CPU and goroutine samples whose http.route label matches
//	top     rows per table (default 10)
//	all     true: every function and site as pprof shows them, nothing folded
func (s *Server) handleRunReport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	format := report.JSON
	if v := q.Get("format"); v != "" {
		f, err := report.ParseFormat(v)
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, badRequest(err.Error()))
			return
		}
		format = f
	}
	opts, err := dashboard.ParseReportOptions(q)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	saved, err := s.dash.Run(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	e, err := s.dash.Analysis(r.Context(), saved, opts)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	res := e.Result
	setFormatType(w, format)
	if err := report.Write(w, format, res.Analysis, res.Findings); err != nil {
		s.cfg.Logf("write report of run %s: %v", saved.ID, err)
	}
}

// setFormatType sets the content type of a report in format f.
func setFormatType(w http.ResponseWriter, f report.Format) {
	switch f {
	case report.JSON:
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	case report.Markdown:
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
}

// handleProfile serves one profile of a run as the .pb.gz it was saved as:
// GET /api/v1/runs/{id}/profiles/{kind}, kind being cpu, allocs, heap,
// block, mutex, goroutine_start or goroutine_end, so that
// "go tool pprof http://HOST/api/v1/runs/ID/profiles/cpu" opens it. 404 when
// the run or the profile does not exist. No query parameters.
func (s *Server) handleProfile(w http.ResponseWriter, r *http.Request) {
	saved, err := s.dash.Run(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	kind := r.PathValue("kind")
	path := saved.Path(kind)
	if path == "" {
		s.fail(w, r, http.StatusNotFound, dashboard.MissingProfile(saved, kind))
		return
	}
	f, err := os.Open(path)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, notFound(fmt.Sprintf("the %s profile of run %s is missing on the server: %v", kind, saved.ID, err)))
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", saved.ID+"-"+filepath.Base(path)))
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// answerJSON answers with v as JSON, or with err.
func (s *Server) answerJSON(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
