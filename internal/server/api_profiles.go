package server

import (
	"net/http"
	"strconv"

	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/scrape"
)

// Scraper is what the server shows of a scraper running beside it
// (serve --scrape): its targets' health.
type Scraper = dashboard.Scraper

// GET /api/v1/profiles/targets: the stored series the selector chooses.
// Query: query, type (default every type).
func (s *Server) handleProfileTargets(w http.ResponseWriter, r *http.Request) {
	ts, err := s.dash.Targets(r.Context(), r.URL.Query())
	s.answerJSON(w, r, ts, err)
}

// GET /api/v1/profiles/merge: the merged profile of a range as .pb.gz,
// which go tool pprof opens and go build -pgo takes. Query: see
// dashboard.ProfileQuery. Where the range holds more than one process of a target
// (a restart or a deploy), the header Perfscope-Restarted-Targets counts
// those targets and a comment of the profile names each
// (go tool pprof -comments).
func (s *Server) handleProfileMerge(w http.ResponseWriter, r *http.Request) {
	m, q, err := s.dash.Merge(r.Context(), r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	if len(m.Restarted) > 0 {
		w.Header().Set("Perfscope-Restarted-Targets", strconv.Itoa(len(m.Restarted)))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+q.Type+`.pb.gz"`)
	_ = m.Profile.Write(w)
}

// GET /api/v1/profiles/top: the top functions of a range. Query: see
// dashboard.ProfileQuery; n rows (default 20), order flat (default) or cum.
func (s *Server) handleProfileTop(w http.ResponseWriter, r *http.Request) {
	t, err := s.dash.Top(r.Context(), r.URL.Query())
	s.answerJSON(w, r, t, err)
}

// GET /api/v1/profiles/function: one function's share per step. Query:
// see dashboard.ProfileQuery; name (required), step (a duration, default 1m).
func (s *Server) handleProfileFunction(w http.ResponseWriter, r *http.Request) {
	pts, err := s.dash.Function(r.Context(), r.URL.Query())
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"function": r.URL.Query().Get("name"), "points": pts})
}

// GET /api/v1/profiles/diff: a range against the same range ago earlier
// (default 1h), or against base_from..base_to; shares of each range's
// total. Query: see dashboard.ProfileQuery; ago, base_from, base_to.
func (s *Server) handleProfileDiff(w http.ResponseWriter, r *http.Request) {
	d, err := s.dash.RangeDiff(r.Context(), r.URL.Query())
	s.answerJSON(w, r, d, err)
}

// GET /api/v1/profiles/findings: the report and findings of a range, as
// 'perfscope query findings' prints them. Query: query, since, from, to;
// format json (default), markdown or text.
func (s *Server) handleProfileFindings(w http.ResponseWriter, r *http.Request) {
	q, err := dashboard.ProfileQuery(r.URL.Query())
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
