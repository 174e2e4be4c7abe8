package server

import (
	"net/http"
	"time"
)

// pageHome answers "what changed lately?": the latest commits with the
// metrics that changed beyond the noise, regressions first, and the latest
// profiling runs with their health and headline numbers: GET /.
func (s *Server) pageHome(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	home, err := s.dash.Home(r.Context())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	s.pages.render(w, http.StatusOK, "home", "What changed", "home", home, start)
}
