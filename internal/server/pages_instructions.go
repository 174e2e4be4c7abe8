package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/pprofweb"
	"github.com/perfscope/perfscope/internal/report/web"
)

// pageInstructionDiff serves pprof's web UI for the difference of one
// benchmark's instruction profiles (exact counts per function and line,
// per operation) between two benchmark runs, head minus base, not
// normalized: GET /compare/instructions/{base}/{head}/{package}/{name}/{view},
// base and head being benchmark run ids, with the views and parameters of
// pageRunPprof. Without a view it is the dashboard's page framing the
// flame graph; its query parameters base and head (commits) give the way
// back to their comparison. 404 when a run kept no such profile.
func (s *Server) pageInstructionDiff(w http.ResponseWriter, r *http.Request) {
	view := r.PathValue("view")
	if s.graphvizMissing(w, r, view) {
		return
	}
	pkg, name := r.PathValue("package"), r.PathValue("name")
	baseRun, headRun, err := s.dash.InstructionRuns(r.Context(), r.PathValue("base"), r.PathValue("head"), pkg, name)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	prefix := web.InstructionDiffPath(baseRun, headRun, pkg, name)
	if view == "" && !strings.HasSuffix(r.URL.Path, "/") {
		q := r.URL.Query()
		data := web.NewInstructionDiffPage(baseRun, headRun, pkg, name, q.Get("base"), q.Get("head"))
		s.pages.render(w, http.StatusOK, "instrdiff", "Instructions of "+name+": diff", "compare", data, time.Now())
		return
	}
	key := pprofweb.Key{Base: "bench-run " + r.PathValue("base"), Head: "bench-run " + r.PathValue("head"),
		Kind: "instructions " + pkg + " " + name, Absolute: true}
	s.serveProfiles(w, r, key, prefix, view, func() (hp, bp *profile.Profile, err error) {
		bp, hp, err = s.dash.InstructionProfiles(r.Context(), baseRun, headRun, pkg, name)
		return hp, bp, err
	})
}
