package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/pprofweb"
	"github.com/perfscope/perfscope/internal/report/web"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/run"
)

// pageRuns lists the profiling runs with their health, newest first:
// GET /runs.
//
// Query parameters:
//
//	limit  the latest N runs (default 200, 0 for all)
//	q      only the runs whose id, target or commit contains this text
//	sort   start (default, newest first), target, health, throughput
//	       (highest first) or p99 (lowest first)
func (s *Server) pageRuns(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	data, err := s.dash.Runs(r.Context(), r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	s.pages.render(w, http.StatusOK, "runs", "Runs", "runs", data, start)
}

// pageRun shows one profiling run: its load results, findings, profiles
// (each opening in pprof's web UI), CPU by route and the full report:
// GET /runs/{id}. 404 for an unknown id.
//
// Query parameters:
//
//	route, top, all  as for /api/v1/runs/{id}/report
func (s *Server) pageRun(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	data, err := s.dash.RunPage(r.Context(), r.PathValue("id"), r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	s.pages.render(w, http.StatusOK, "run", "Run "+data.Run.ID, "runs", data, start)
}

// pageRunPprof serves pprof's web UI for one profile of a run:
// GET /runs/{id}/pprof/{kind}/{view}, view being flamegraph, top, graph,
// peek, source, disasm or download, with pprof's own query parameters
// (si, focus, ignore, hide, show, ...). 404 when the run or the profile
// does not exist.
func (s *Server) pageRunPprof(w http.ResponseWriter, r *http.Request) {
	id, kind, view := r.PathValue("id"), r.PathValue("kind"), r.PathValue("view")
	if s.graphvizMissing(w, r, view) {
		return
	}
	saved, err := s.dash.Run(r.Context(), id)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	if !saved.Has(kind) {
		s.fail(w, r, http.StatusNotFound, dashboard.MissingProfile(saved, kind))
		return
	}
	prefix := "/runs/" + url.PathEscape(saved.ID) + "/pprof/" + url.PathEscape(kind)
	s.servePprof(w, r, pprofweb.Key{Head: saved.ID, Kind: kind}, prefix, view, saved)
}

// pageDiffPprof serves pprof's web UI for the difference of one profile
// kind between two runs, head minus base as pprof -diff_base -normalize
// shows it: GET /diff/{base}/{head}/{kind}/{view}, with the views and
// parameters of pageRunPprof. GET /diff/{base}/{head}/{kind} is the
// dashboard's page of the diff flame graph, with the way back to the
// comparison.
func (s *Server) pageDiffPprof(w http.ResponseWriter, r *http.Request) {
	kind, view := r.PathValue("kind"), r.PathValue("view")
	if s.graphvizMissing(w, r, view) {
		return
	}
	base, err := s.dash.Run(r.Context(), r.PathValue("base"))
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	head, err := s.dash.Run(r.Context(), r.PathValue("head"))
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	for _, saved := range []*run.Run{base, head} {
		if !saved.Has(kind) {
			s.fail(w, r, http.StatusNotFound, dashboard.MissingProfile(saved, kind))
			return
		}
	}
	prefix := "/diff/" + url.PathEscape(base.ID) + "/" + url.PathEscape(head.ID) + "/" + url.PathEscape(kind)
	if view == "" && !strings.HasSuffix(r.URL.Path, "/") {
		data := &web.DiffPage{Base: base, Head: head, Kind: kind, Frame: prefix + "/flamegraph",
			Back: "/compare?" + url.Values{"base_run": {base.ID}, "head_run": {head.ID}}.Encode()}
		s.pages.render(w, http.StatusOK, "diff", "Diff of "+kind+": "+head.ID+" − "+base.ID, "compare", data, time.Now())
		return
	}
	s.servePprof(w, r, pprofweb.Key{Base: base.ID, Head: head.ID, Kind: kind}, prefix, view, head, base)
}

// servePprof serves view of pprof's UI for key under prefix: the kind of
// profile of the head run, minus that of base when given, read within an
// analysis slot the first time.
func (s *Server) servePprof(w http.ResponseWriter, r *http.Request, key pprofweb.Key, prefix, view string, head *run.Run, base ...*run.Run) {
	s.serveProfiles(w, r, key, prefix, view, func() (hp, bp *profile.Profile, err error) {
		if hp, err = head.Open(key.Kind); err == nil && len(base) > 0 {
			bp, err = base[0].Open(key.Kind)
		}
		return hp, bp, err
	})
}

// serveProfiles serves view of pprof's UI for key under prefix: the
// profiles load returns (head, and base for a difference), read within an
// analysis slot the first time.
func (s *Server) serveProfiles(w http.ResponseWriter, r *http.Request, key pprofweb.Key, prefix, view string, load func() (head, base *profile.Profile, err error)) {
	ui, err := s.pprof.Get(key, func() (hp, bp *profile.Profile, err error) {
		release, err := s.analyses.Parsing(r.Context())
		if err != nil {
			return nil, nil, err
		}
		defer release()
		return load()
	})
	if err != nil {
		s.fail(w, r, pprofStatus(err), err)
		return
	}
	if !ui.Serve(w, r, prefix, view) {
		s.fail(w, r, http.StatusNotFound, notFound("pprof has no view "+strconv.Quote(view)))
	}
}

// pprofStatus is the status of a failure to show a profile in pprof's
// UI: 404 for a range without profiles, 422 for a profile beyond the
// server's limits, 503 when the request ended waiting for its turn, else
// 500.
func pprofStatus(err error) int {
	switch {
	case errors.Is(err, dashboard.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, fetch.ErrTooLarge):
		return http.StatusUnprocessableEntity
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// graphvizMissing answers pprof's graph view with a page saying how to
// install Graphviz when its dot command is not on the PATH, instead of
// pprof's bare 501, and reports whether it did.
func (s *Server) graphvizMissing(w http.ResponseWriter, r *http.Request, view string) bool {
	if view != "graph" {
		return false
	}
	if _, err := exec.LookPath("dot"); err == nil {
		return false
	}
	s.pages.errorPage(w, r, http.StatusNotImplemented, "The graph view needs Graphviz.", web.GraphvizHint)
	return true
}
