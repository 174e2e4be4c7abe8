package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/findings"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
)

// pageRuns lists the profiling runs, newest first: GET /runs.
//
// Query parameters:
//
//	limit  the latest N runs (default 200, 0 for all)
func (s *Server) pageRuns(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f := store.RunFilter{Limit: 200}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.fail(w, r, http.StatusBadRequest, badRequest("limit "+strconv.Quote(v)+": want a number of runs, 0 for all"))
			return
		}
		f.Limit = n
	}
	runs, err := s.cfg.Store.ProfileRuns(r.Context(), f)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	s.pages.render(w, http.StatusOK, "runs", "Runs", "runs", struct{ Runs []store.ProfileRun }{runs}, start)
}

// parseReportOptions reads the report options route, top and all.
func parseReportOptions(q url.Values) (profiles.Options, error) {
	opts := profiles.Options{Route: q.Get("route")}
	if v := q.Get("top"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return opts, badRequest(fmt.Sprintf("top %q: want a number of rows, 1 or more", v))
		}
		opts.Top = n
	}
	if v := q.Get("all"); v != "" {
		all, err := strconv.ParseBool(v)
		if err != nil {
			return opts, badRequest(fmt.Sprintf("all %q: want true or false", v))
		}
		opts.All = all
	}
	return opts, nil
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
	ctx := r.Context()
	opts, err := parseReportOptions(r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	saved, err := s.loadRun(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	e, err := s.analysisOf(ctx, saved, opts, s.pageWait())
	if err != nil {
		s.analysisUnavailable(w, r, saved, err)
		return
	}
	res := e.res
	a := res.Analysis
	var text bytes.Buffer
	if err := report.Write(&text, report.Text, a, res.Findings); err != nil {
		fmt.Fprintf(&text, "\n(report incomplete: %v)", err)
	}
	others, err := s.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: 50})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	for i := 0; i < len(others); i++ {
		if others[i].ID == saved.ID {
			others = append(others[:i], others[i+1:]...)
			break
		}
	}
	data := struct {
		Run      *run.Run
		Findings []findings.Finding
		// CompilerSkipped says the findings lack the compiler's
		// reasons: the server is configured not to build them.
		CompilerSkipped bool
		Routes          []profiles.RouteShare
		// RoutesNote explains the routes' unlabelled row, if any.
		RoutesNote string
		Others     []store.ProfileRun
		Report     string
		// SourceFocus is the query of the source links: pprof lists
		// every function of a profile without one, which takes seconds
		// and pages; the hottest user functions are what a reader wants.
		SourceFocus template.URL
		// Flame is the profile whose flame graph the page shows beside
		// the findings: CPU, or allocations when there is no CPU
		// profile; "" when there is neither.
		Flame string
		// TooLarge says which profiles were beyond the server's limits.
		TooLarge []string
	}{saved, res.Findings, res.CompilerSkipped, a.Routes, report.UnlabelledRouteNote(a.Routes), others, text.String(), sourceFocus(a), flameKind(saved), e.tooLarge}
	s.pages.render(w, http.StatusOK, "run", "Run "+saved.ID, "runs", data, start)
}

// flameKind is the profile whose flame graph a run page shows.
func flameKind(r *run.Run) string {
	for _, kind := range []string{run.KindCPU, run.KindAllocs} {
		if r.Has(kind) {
			return kind
		}
	}
	return ""
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
	saved, err := s.loadRun(r.Context(), id)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	if !saved.Has(kind) {
		s.fail(w, r, http.StatusNotFound, notFound(noProfileMessage(saved, kind)))
		return
	}
	handlers, err := s.pprof.handlers("run\x00"+saved.ID+"\x00"+kind, func() (*profile.Profile, *profile.Profile, error) {
		release, err := s.analyses.parsing(r.Context())
		if err != nil {
			return nil, nil, err
		}
		defer release()
		p, err := saved.Open(kind)
		if err != nil {
			return nil, nil, err
		}
		return cleanForPprof(p, s.cfg.SourceDir), nil, nil
	})
	if err != nil {
		s.fail(w, r, pprofStatus(err), err)
		return
	}
	prefix := "/runs/" + url.PathEscape(saved.ID) + "/pprof/" + url.PathEscape(kind)
	if !serveUI(w, r, handlers, prefix, view) {
		s.fail(w, r, http.StatusNotFound, notFound("pprof has no view "+strconv.Quote(view)))
	}
}

// pageDiffPprof serves pprof's web UI for the difference of one profile
// kind between two runs, head minus base as pprof -diff_base shows it:
// GET /diff/{base}/{head}/{kind}/{view}, with the views and parameters of
// pageRunPprof.
func (s *Server) pageDiffPprof(w http.ResponseWriter, r *http.Request) {
	kind, view := r.PathValue("kind"), r.PathValue("view")
	if s.graphvizMissing(w, r, view) {
		return
	}
	base, err := s.loadRun(r.Context(), r.PathValue("base"))
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	head, err := s.loadRun(r.Context(), r.PathValue("head"))
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	for _, saved := range []*run.Run{base, head} {
		if !saved.Has(kind) {
			s.fail(w, r, http.StatusNotFound, notFound(noProfileMessage(saved, kind)))
			return
		}
	}
	handlers, err := s.pprof.handlers("diff\x00"+base.ID+"\x00"+head.ID+"\x00"+kind, func() (*profile.Profile, *profile.Profile, error) {
		release, err := s.analyses.parsing(r.Context())
		if err != nil {
			return nil, nil, err
		}
		defer release()
		hp, err := head.Open(kind)
		if err != nil {
			return nil, nil, err
		}
		bp, err := base.Open(kind)
		if err != nil {
			return nil, nil, err
		}
		return cleanForPprof(hp, s.cfg.SourceDir), cleanForPprof(bp, s.cfg.SourceDir), nil
	})
	if err != nil {
		s.fail(w, r, pprofStatus(err), err)
		return
	}
	prefix := "/diff/" + url.PathEscape(base.ID) + "/" + url.PathEscape(head.ID) + "/" + url.PathEscape(kind)
	if !serveUI(w, r, handlers, prefix, view) {
		s.fail(w, r, http.StatusNotFound, notFound("pprof has no view "+strconv.Quote(view)))
	}
}

// pprofStatus is the status of a failure to show a profile in pprof's
// UI: 422 for a profile beyond the server's limits, 503 when the request
// ended waiting for its turn, else 500.
func pprofStatus(err error) int {
	switch {
	case errors.Is(err, fetch.ErrTooLarge):
		return http.StatusUnprocessableEntity
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// graphvizHint says how to install what pprof's graph view runs.
const graphvizHint = template.HTML(`<p>pprof draws its call graph with Graphviz's <code>dot</code>, which is not installed on the machine serving this dashboard. Install it there and reload this page:</p>
<pre class="report">sudo apt-get install graphviz     # Debian, Ubuntu
sudo dnf install graphviz         # Fedora
brew install graphviz             # macOS</pre>
<p>The flame graph, top, source and peek views need no Graphviz.</p>`)

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
	s.pages.errorPage(w, r, http.StatusNotImplemented, "The graph view needs Graphviz.", graphvizHint)
	return true
}

// runComparison is two runs side by side.
type runComparison struct {
	Base, Head *run.Run
	Rows       []report.SideBySideRow
	Kinds      []string // profile kinds both runs have, for diff flame graphs
}

// compareRuns puts two runs side by side as 'perfscope demo' does.
func (s *Server) compareRuns(ctx context.Context, baseID, headID string) (*runComparison, error) {
	if baseID == "" || headID == "" {
		return nil, badRequest("choose two runs to compare")
	}
	base, err := s.loadRun(ctx, baseID)
	if err != nil {
		return nil, err
	}
	head, err := s.loadRun(ctx, headID)
	if err != nil {
		return nil, err
	}
	be, err := s.analysisOf(ctx, base, profiles.Options{}, s.pageWait())
	if err != nil {
		return nil, err
	}
	he, err := s.analysisOf(ctx, head, profiles.Options{}, s.pageWait())
	if err != nil {
		return nil, err
	}
	rc := &runComparison{Base: base, Head: head, Rows: report.SideBySideRows(analysis.Beside(base.ID, be.res.Analysis, head.ID, he.res.Analysis))}
	for _, pf := range head.Profiles {
		if pf.File != "" && base.Has(pf.Kind) {
			rc.Kinds = append(rc.Kinds, pf.Kind)
		}
	}
	return rc, nil
}

// sourceFocus returns the query parameter that focuses pprof's source view
// on the run's hottest user functions by cumulative CPU, or "" when the run
// has no CPU profile.
func sourceFocus(a *profiles.Analysis) template.URL {
	if a.CPU == nil || a.CPU.Cum == nil {
		return ""
	}
	var names []string
	for _, r := range a.CPU.Cum.Rows {
		if r.Class == profiles.User && r.Folded == 0 {
			names = append(names, regexp.QuoteMeta(r.Function))
		}
		if len(names) == 5 {
			break
		}
	}
	if len(names) == 0 {
		return ""
	}
	return template.URL("?" + url.Values{"f": {"^(" + strings.Join(names, "|") + ")$"}}.Encode())
}
