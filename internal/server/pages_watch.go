package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/pprofweb"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report/web"
)

// pageServices lists every scraped target: its health, the types stored,
// sparklines of CPU, heap in use and goroutines: GET /services.
//
// Query parameters:
//
//	since  the sparklines' range, a duration ago (15m, 1h, 6h, 24h, 7d);
//	       default 6h
func (s *Server) pageServices(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	data, err := s.dash.Services(r.Context(), r.URL.Query().Get("since"))
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	s.pages.render(w, http.StatusOK, "services", "Services", "services", data, start)
}

// pageService shows one service, or every target a selector chooses, over
// a time range: GET /services/view.
//
// Query parameters:
//
//	target     a label selector, {job="api",instance="10.0.0.1:6060"}
//	type       the profile type of the flame graph and table (default cpu)
//	from, to   the range: durations ago (1h) or instants; default the
//	           last hour
//	base_from, base_to  compare the range with this one
//	base_target         the compared range's selector, when it differs
//	fn         a function whose share over the range is drawn
//	sort       the table's order: flat (default), cum or name
//	search     show the table's functions whose name holds this
//
// A query that cannot be read is answered 400 with the form as typed and
// what is wrong; a selector that chooses no stored series, 404 the same.
func (s *Server) pageService(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	p, err := s.dash.Service(r.Context(), dashboard.ServiceQuery(r.URL.Query()))
	if p == nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	code, title := http.StatusOK, "Service"
	if sel, perr := profseries.ParseSelector(p.Q.Target); err == nil && perr == nil {
		title += " " + sel.String()
	} else if err != nil {
		code = statusOf(err)
	}
	s.pages.render(w, code, "service", title, "services", p, start)
}

// pageServicePprof serves pprof's web UI for the merged profile of a
// range, or a range minus another: GET /services/pprof/{view}, view as
// for pageRunPprof, with the service page's target, base_target, type,
// from, to, base_from and base_to (instants, as the page links them)
// beside pprof's own parameters.
func (s *Server) pageServicePprof(w http.ResponseWriter, r *http.Request) {
	view := r.PathValue("view")
	if s.graphvizMissing(w, r, view) {
		return
	}
	rp, err := dashboard.ServiceProfiles(dashboard.ServiceQuery(r.URL.Query()), time.Now())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	key := pprofweb.Key{Head: rp.HeadKey, Base: rp.BaseKey, Kind: rp.Head.Type}
	ui, err := s.pprof.Get(key, func() (hp, bp *profile.Profile, err error) {
		return s.dash.Profiles(r.Context(), rp)
	})
	if err != nil {
		s.fail(w, r, pprofStatus(err), err)
		return
	}
	if !ui.Serve(w, r, web.ServiceFlamePath, view) {
		s.fail(w, r, http.StatusNotFound, notFound("pprof has no view "+strconv.Quote(view)))
	}
}
