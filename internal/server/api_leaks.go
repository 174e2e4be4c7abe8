package server

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// leakQuery reads what the leak endpoint and page take:
//
//	query     a label selector (default: all)
//	since, from, to   the range, as profileQuery reads it (default the last hour)
func leakQuery(r *http.Request) (profseries.Selector, time.Time, time.Time, error) {
	v := r.URL.Query()
	sel, err := profseries.ParseSelector(v.Get("query"))
	if err != nil {
		return nil, time.Time{}, time.Time{}, badRequest("query: " + err.Error())
	}
	from, to, err := profseries.ParseRange(v.Get("since"), v.Get("from"), v.Get("to"), time.Now())
	if err != nil {
		return nil, from, to, badRequest(err.Error())
	}
	return sel, from, to, nil
}

// GET /api/v1/profiles/leaks: the stacks whose goroutines or heap in use
// kept growing over the range (profseries.FindLeaks, default options), and
// every series judged. Query: query, since, from, to. 404 when the range
// holds no goroutine or heap snapshot.
func (s *Server) handleProfileLeaks(w http.ResponseWriter, r *http.Request) {
	sel, from, to, err := leakQuery(r)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	rep, err := profseries.FindLeaks(r.Context(), s.cfg.Store, sel, from, to, profseries.LeakOptions{})
	if errors.Is(err, profseries.ErrNoLeakData) {
		err = notFound(err.Error())
	}
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// GET /api/v1/profiles/deploys: each change of version label or build id
// of the services the selector chooses, with the functions whose share of
// CPU changed significantly (profseries.FindDeploys, default options).
// Query: query, since, from, to; type (default cpu).
func (s *Server) handleProfileDeploys(w http.ResponseWriter, r *http.Request) {
	sel, from, to, err := leakQuery(r)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	o := profseries.DeployOptions{Type: r.URL.Query().Get("type")}
	if o.Type != "" && !slices.Contains(profseries.Types, o.Type) {
		s.fail(w, r, http.StatusBadRequest, badRequest("type "+strconv.Quote(o.Type)+": use one of "+strings.Join(profseries.Types, ", ")))
		return
	}
	rep, err := profseries.FindDeploys(r.Context(), s.cfg.Store, sel, from, to, o)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
