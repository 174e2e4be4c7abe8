package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/scrape"
	"github.com/perfscope/perfscope/internal/store"
)

// Scraper is what the server shows of a scraper running beside it
// (serve --scrape): its targets' health.
type Scraper = dashboard.Scraper

// profileQuery reads the query every profile-series endpoint takes:
//
//	type      cpu (default), allocs, heap, goroutine, mutex, block, goroutineleak
//	query     a label selector, {job="api",version=~"1\\..*"} (default: all)
//	since     a duration ago (90m, 24h, 7d) or an instant; default 1h
//	from, to  instants (2026-11-26T14:00:00Z, 2026-11-26 14:00) or
//	          durations ago; from overrides since, to defaults to now
//	sample_type  the sample type ranked (default the profile's own)
func profileQuery(r *http.Request) (profseries.Query, error) {
	v := r.URL.Query()
	sel, err := profseries.ParseSelector(v.Get("query"))
	if err != nil {
		return profseries.Query{}, badRequest("query: " + err.Error())
	}
	from, to, err := profseries.ParseRange(v.Get("since"), v.Get("from"), v.Get("to"), time.Now())
	if err != nil {
		return profseries.Query{}, badRequest(err.Error())
	}
	q := profseries.Query{Type: v.Get("type"), Selector: sel, From: from, To: to, SampleType: v.Get("sample_type")}
	if q.Type == "" {
		q.Type = profseries.CPU
	}
	if err := q.Check(); err != nil {
		return q, badRequest(err.Error())
	}
	return q, nil
}

// seriesError maps the store's "nothing stored" to 404.
func seriesError(err error) error {
	if errors.Is(err, store.ErrNoProfiles) || errors.Is(err, profseries.ErrNoFunction) {
		return notFound(err.Error())
	}
	return err
}

// GET /api/v1/profiles/targets: the stored series the selector chooses.
// Query: query, type (default every type).
func (s *Server) handleProfileTargets(w http.ResponseWriter, r *http.Request) {
	sel, err := profseries.ParseSelector(r.URL.Query().Get("query"))
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, badRequest("query: "+err.Error()))
		return
	}
	ts, err := s.cfg.Store.ProfileTargets(r.Context(), r.URL.Query().Get("type"), sel)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	if ts == nil {
		ts = []store.ProfileTarget{}
	}
	writeJSON(w, http.StatusOK, ts)
}

// GET /api/v1/profiles/merge: the merged profile of a range as .pb.gz,
// which go tool pprof opens and go build -pgo takes. Query: see
// profileQuery. Where the range holds more than one process of a target
// (a restart or a deploy), the header Perfscope-Restarted-Targets counts
// those targets and a comment of the profile names each
// (go tool pprof -comments).
func (s *Server) handleProfileMerge(w http.ResponseWriter, r *http.Request) {
	q, err := profileQuery(r)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	m, err := s.cfg.Store.Merge(r.Context(), q)
	if err != nil {
		err = seriesError(err)
		s.fail(w, r, statusOf(err), err)
		return
	}
	if len(m.Restarted) > 0 {
		w.Header().Set("Perfscope-Restarted-Targets", strconv.Itoa(len(m.Restarted)))
	}
	writeProfile(w, q.Type+".pb.gz", m.Profile)
}

// writeProfile answers with p as a .pb.gz download named name.
func writeProfile(w http.ResponseWriter, name string, p *profile.Profile) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	_ = p.Write(w)
}

// GET /api/v1/profiles/top: the top functions of a range. Query: see
// profileQuery; n rows (default 20), order flat (default) or cum.
func (s *Server) handleProfileTop(w http.ResponseWriter, r *http.Request) {
	q, err := profileQuery(r)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	n, err := intParam(r, "n", 20)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	order := profiles.ByFlat
	if o := r.URL.Query().Get("order"); o == string(profiles.ByCum) {
		order = profiles.ByCum
	} else if o != "" && o != string(profiles.ByFlat) {
		s.fail(w, r, http.StatusBadRequest, badRequest("order "+strconv.Quote(o)+": use flat or cum"))
		return
	}
	t, err := s.cfg.Store.Top(r.Context(), q, order, n)
	if err != nil {
		err = seriesError(err)
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// intParam reads the positive integer parameter name, def when absent.
func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, badRequest(name + " " + strconv.Quote(v) + ": give a whole number, 1 or more")
	}
	return n, nil
}

// GET /api/v1/profiles/function: one function's share per step. Query:
// see profileQuery; name (required), step (a duration, default 1m).
func (s *Server) handleProfileFunction(w http.ResponseWriter, r *http.Request) {
	q, err := profileQuery(r)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	name := r.URL.Query().Get("name")
	if name == "" {
		s.fail(w, r, http.StatusBadRequest, badRequest("name: give the function's full name"))
		return
	}
	step := time.Minute
	if v := r.URL.Query().Get("step"); v != "" {
		if step, err = time.ParseDuration(v); err != nil || step <= 0 {
			s.fail(w, r, http.StatusBadRequest, badRequest("step "+strconv.Quote(v)+": give a positive duration (10s, 1m)"))
			return
		}
	}
	pts, err := s.cfg.Store.FunctionSeries(r.Context(), q, name, step)
	if err != nil {
		err = seriesError(err)
		s.fail(w, r, statusOf(err), err)
		return
	}
	if pts == nil {
		pts = []profseries.FunctionPoint{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"function": name, "points": pts})
}

// GET /api/v1/profiles/diff: a range against the same range ago earlier
// (default 1h), or against base_from..base_to; shares of each range's
// total. Query: see profileQuery; ago, base_from, base_to.
func (s *Server) handleProfileDiff(w http.ResponseWriter, r *http.Request) {
	head, err := profileQuery(r)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	v := r.URL.Query()
	base := head
	if v.Get("base_from") != "" || v.Get("base_to") != "" {
		if base.From, base.To, err = profseries.ParseRange("", v.Get("base_from"), v.Get("base_to"), time.Now()); err != nil {
			s.fail(w, r, http.StatusBadRequest, badRequest("base_"+err.Error()))
			return
		}
	} else {
		ago := time.Hour
		if a := v.Get("ago"); a != "" {
			if ago, err = time.ParseDuration(a); err != nil || ago <= 0 {
				s.fail(w, r, http.StatusBadRequest, badRequest("ago "+strconv.Quote(a)+": give a positive duration (1h, 24h)"))
				return
			}
		}
		base.From, base.To = head.From.Add(-ago), head.To.Add(-ago)
	}
	d, err := s.cfg.Store.Diff(r.Context(), base, head)
	if err != nil {
		err = seriesError(err)
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// GET /api/v1/profiles/findings: the report and findings of a range, as
// 'perfscope query findings' prints them. Query: query, since, from, to;
// format json (default), markdown or text.
func (s *Server) handleProfileFindings(w http.ResponseWriter, r *http.Request) {
	q, err := profileQuery(r)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	format := report.JSON
	if v := r.URL.Query().Get("format"); v != "" {
		if format, err = report.ParseFormat(v); err != nil {
			s.fail(w, r, http.StatusBadRequest, badRequest(err.Error()))
			return
		}
	}
	res, err := s.dash.RangeFindings(r.Context(), q.Selector, q.From, q.To)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	setFormatType(w, format)
	if err := report.Write(w, format, res.Analysis, res.Findings); err != nil {
		s.cfg.Logf("%s: %v", r.URL.Path, err)
	}
}

// GET /api/v1/scrape/targets: the health of every target of the scraper
// running in this server (serve --scrape); 404 when none runs.
func (s *Server) handleScrapeTargets(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Scraper == nil {
		s.fail(w, r, http.StatusNotFound, notFound("no scraper runs in this server: start it with perfscope serve --scrape FILE"))
		return
	}
	hs := s.cfg.Scraper.Targets()
	if hs == nil {
		hs = []scrape.Health{}
	}
	writeJSON(w, http.StatusOK, hs)
}
