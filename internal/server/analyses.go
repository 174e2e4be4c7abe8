package server

import (
	"context"
	"time"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/store"
)

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
		if saved, err := s.dash.Run(ctx, pr.ID); err == nil {
			s.analyses.Start(saved, profiles.Options{})
		}
	}
}
