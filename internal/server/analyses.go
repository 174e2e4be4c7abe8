package server

import (
	"context"
	"time"
)

// analyseLatest starts the analyses of the runs the home page shows, so
// that the first visitor after a start finds them done or under way.
func (s *Server) analyseLatest(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s.dash.AnalyseLatest(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Logf("%v", err)
	}
}
