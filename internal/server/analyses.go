package server

import (
	"context"
	"time"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
)

// analysisOf returns the shared analysis of saved with opts, waiting for
// it at most wait; analysis.ErrAnalysing when it is not done by then.
func (s *Server) analysisOf(ctx context.Context, saved *run.Run, opts profiles.Options, wait time.Duration) (*analysis.Entry, error) {
	return s.analyses.Wait(ctx, saved, opts, wait)
}

// analyseLatest starts the analyses of the runs the home page shows, so
// that the first visitor after a start finds them done or under way.
func (s *Server) analyseLatest(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	runs, err := s.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: web.HomeRuns})
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Logf("list the latest runs to analyse: %v", err)
		}
		return
	}
	for _, pr := range runs {
		if saved, err := s.loadRun(ctx, pr.ID); err == nil {
			s.analyses.Start(saved, profiles.Options{})
		}
	}
}

// pageWait is how long a page or report waits for an analysis before
// saying it is under way: most of the request's time.
func (s *Server) pageWait() time.Duration { return s.cfg.RequestTimeout * 3 / 4 }
