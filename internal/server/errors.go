package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/bench"
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
// Server errors are logged; client errors are the client's to read.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	if code >= 500 {
		s.cfg.Logf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	if isAPI(r) {
		writeJSON(w, code, api.Error{Error: err.Error(), Status: code})
		return
	}
	s.pages.errorPage(w, r, code, err.Error(), "")
}

// statusOf maps store errors to HTTP status codes: what the client named
// does not exist (404), or the server failed (500).
func statusOf(err error) int {
	switch {
	case errors.Is(err, store.ErrUnknownCommit), errors.Is(err, store.ErrUnknownRun), errors.Is(err, errNotFound):
		return http.StatusNotFound
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, analysis.ErrAnalysing):
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

var (
	// errNotFound marks errors about things that do not exist.
	errNotFound = errors.New("not found")
	// errBadRequest marks errors in what the client sent.
	errBadRequest = errors.New("bad request")
	// errTooLarge marks what the client sent beyond a limit.
	errTooLarge = errors.New("too large")
)

// clientError is an error whose message is shown as is and whose kind
// (errNotFound, errBadRequest) sets the status.
type clientError struct {
	kind error
	msg  string
}

func (e clientError) Error() string        { return e.msg }
func (e clientError) Is(target error) bool { return target == e.kind }

func notFound(msg string) error   { return clientError{errNotFound, msg} }
func badRequest(msg string) error { return clientError{errBadRequest, msg} }
func tooLarge(msg string) error   { return clientError{errTooLarge, msg} }

// handleAPINotFound answers any /api/ path no endpoint serves.
func (s *Server) handleAPINotFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, notFound("no API endpoint "+r.Method+" "+r.URL.Path+": see the endpoints listed in 'perfscope serve --help'"))
}

// pageNotFound answers any page path no route serves.
func (s *Server) pageNotFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, notFound("There is no page at "+r.URL.Path+"."))
}
