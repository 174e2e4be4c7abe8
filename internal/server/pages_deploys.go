package server

import (
	"net/http"
	"time"
)

// pageDeploys shows the deploys of the services a selector chooses over a
// range, each with its significant changes:
// GET /deploys?target=SELECTOR&since=24h. Bad input keeps the form as typed
// and says what is wrong (400); a selector choosing no target with CPU
// profiles says so (404).
func (s *Server) pageDeploys(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	data, err := s.dash.Deploys(r.Context(), r.URL.Query())
	renderForm(s, w, r, "deploys", "Deploys", data, err, start)
}

// pageLeaks shows the leaks of the targets a selector chooses over a
// range: GET /leaks?target=SELECTOR&since=1h. Bad input keeps the form as
// typed and says what is wrong (400); a range without snapshots says so
// (404).
func (s *Server) pageLeaks(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	data, err := s.dash.Leaks(r.Context(), r.URL.Query())
	renderForm(s, w, r, "leaks", "Leaks", data, err, start)
}

// renderForm renders the page name of a form: with the status of err's
// kind when the page says what was wrong, or the error page when there
// is no page.
func renderForm[T any](s *Server, w http.ResponseWriter, r *http.Request, name, title string, data *T, err error, start time.Time) {
	code := http.StatusOK
	if err != nil {
		code = statusOf(err)
	}
	if data == nil {
		s.fail(w, r, code, err)
		return
	}
	s.pages.render(w, code, name, title, name, data, start)
}
