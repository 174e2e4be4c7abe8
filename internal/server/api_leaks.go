package server

import (
	"net/http"
)

// GET /api/v1/profiles/leaks: the stacks whose goroutines or heap in use
// kept growing over the range (profseries.FindLeaks, default options), and
// every series judged. Query: query, since, from, to. 404 when the range
// holds no goroutine or heap snapshot.
func (s *Server) handleProfileLeaks(w http.ResponseWriter, r *http.Request) {
	rep, err := s.dash.LeakReport(r.Context(), r.URL.Query())
	s.answerJSON(w, r, rep, err)
}

// GET /api/v1/profiles/deploys: each change of version label or build id
// of the services the selector chooses, with the functions whose share of
// CPU changed significantly (profseries.FindDeploys, default options).
// Query: query, since, from, to; type (default cpu).
func (s *Server) handleProfileDeploys(w http.ResponseWriter, r *http.Request) {
	rep, err := s.dash.DeployReport(r.Context(), r.URL.Query())
	s.answerJSON(w, r, rep, err)
}
