package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/runupload"
	"github.com/perfscope/perfscope/internal/store"
)

// writeJSON answers with v as JSON. It is not indented: a series of
// thousands of commits takes longer to indent than to compute, and jq
// indents for a reader.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers with an error: JSON for the API, an HTML page otherwise.
// Server errors are logged; client errors are the client's to read. What
// is not ready yet says when to ask again.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	if code >= 500 {
		s.cfg.Logf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	if errors.Is(err, dashboard.ErrUnavailable) {
		w.Header().Set("Retry-After", "5")
	}
	if isAPI(r) {
		writeJSON(w, code, api.Error{Error: err.Error(), Status: code})
		return
	}
	s.pages.errorPage(w, r, code, err.Error(), "")
}

// statusOf maps the kinds of errors to HTTP status codes: what the
// client named does not exist (404), is wrong (400) or beyond a limit
// (413), is not ready yet (503), or the server failed (500).
func statusOf(err error) int {
	switch {
	case errors.Is(err, store.ErrUnknownCommit), errors.Is(err, store.ErrUnknownRun), errors.Is(err, dashboard.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, dashboard.ErrBadInput):
		return http.StatusBadRequest
	case errors.Is(err, dashboard.ErrUnavailable), errors.Is(err, analysis.ErrAnalysing):
		return http.StatusServiceUnavailable
	}
	var bad *bench.InputError
	var badRun *runupload.InputError
	switch {
	case errors.As(err, &bad):
		return inputStatus(bad.Cap)
	case errors.As(err, &badRun):
		return inputStatus(badRun.Cap)
	}
	return http.StatusInternalServerError
}

// inputStatus is the status of input refused: 413 over a cap, else 400.
func inputStatus(overCap bool) int {
	if overCap {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// notFound and badRequest are the errors of those kinds the server
// answers itself.
func notFound(msg string) error   { return dashboard.NotFound(msg) }
func badRequest(msg string) error { return dashboard.BadInput(msg) }

// handleAPINotFound answers any /api/ path no endpoint serves.
func (s *Server) handleAPINotFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, notFound("no API endpoint "+r.Method+" "+r.URL.Path+": see the endpoints listed in 'perfscope serve --help'"))
}

// pageNotFound answers any page path no route serves.
func (s *Server) pageNotFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, notFound("There is no page at "+r.URL.Path+"."))
}
