package server

import (
	"context"
	"net/http"
	"time"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/store"
)

// summarize returns pr's summary. Its per-request numbers come from the
// run's shared analysis when it is done; the page never waits for one.
func (s *Server) summarize(ctx context.Context, pr store.ProfileRun) web.RunSummary {
	saved, err := s.loadRun(ctx, pr.ID)
	if err != nil {
		return web.NewRunSummary(pr, nil, err, nil, nil)
	}
	var res *analysis.Result
	var tooLarge []string
	if e, done := s.analyses.Finished(saved); done {
		res, tooLarge = e.Result, e.TooLarge
	}
	return web.NewRunSummary(pr, saved, nil, res, tooLarge)
}

// pageHome answers "what changed lately?": the latest commits with the
// metrics that changed beyond the noise, regressions first, and the latest
// profiling runs with their health and headline numbers: GET /.
func (s *Server) pageHome(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	var changes *history.Result
	cv, err := s.changes(ctx, history.Query{})
	switch {
	case err == nil:
		changes = cv.Result
	case statusOf(err) == http.StatusNotFound:
		changes = &history.Result{} // no benchmarks yet
	default:
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	runs, err := s.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: web.HomeRuns})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	var sums []web.RunSummary
	for _, pr := range runs {
		sums = append(sums, s.summarize(ctx, pr))
	}
	home := web.NewHome(changes, sums)
	// Deploys of the scraped services, beside the benchmark changes.
	home.Deploys = s.homeDeploys(ctx)
	s.pages.render(w, http.StatusOK, "home", "What changed", "home", home, start)
}
