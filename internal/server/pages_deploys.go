package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report/web"
)

// deployPageRows bounds the changes the deploys page lists per deploy;
// it says how many more there are.
const deployPageRows = 100

// pageDeploys shows the deploys of the services a selector chooses over a
// range, each with its significant changes:
// GET /deploys?target=SELECTOR&since=24h. Bad input keeps the form as typed
// and says what is wrong (400); a selector choosing no target with CPU
// profiles says so (404).
func (s *Server) pageDeploys(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	target, since, sel, from, to, problem := seriesForm(r, web.HomeDeploysSince)
	show := func(code int, problem string, rep *profseries.DeployReport) {
		s.pages.render(w, code, "deploys", "Deploys", "deploys", web.NewDeploys(target, since, problem, rep), start)
	}
	if problem != "" {
		show(http.StatusBadRequest, problem, nil)
		return
	}
	targets, err := s.cfg.Store.SeriesLabels(r.Context(), profseries.CPU, sel)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	if len(targets) == 0 {
		show(http.StatusNotFound, "no target with CPU profiles matches "+strconv.Quote(sel.String())+": see the targets scraped with perfscope query targets", nil)
		return
	}
	rep, err := profseries.FindDeploys(r.Context(), s.cfg.Store, sel, from, to, profseries.DeployOptions{Rows: deployPageRows})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	show(http.StatusOK, "", rep)
}

// seriesForm reads the form of a page over profile series: target, a
// label selector (default every target), and since, a range ending now
// (default defaultSince). problem says what is wrong with them, if
// anything.
func seriesForm(r *http.Request, defaultSince string) (target, since string, sel profseries.Selector, from, to time.Time, problem string) {
	v := r.URL.Query()
	target, since = v.Get("target"), v.Get("since")
	if since == "" {
		since = defaultSince
	}
	sel, err := profseries.ParseSelector(target)
	if err != nil {
		return target, since, nil, from, to, "target: " + err.Error()
	}
	from, to, err = profseries.ParseRange(since, "", "", time.Now())
	if err != nil {
		return target, since, nil, from, to, err.Error()
	}
	return target, since, sel, from, to, ""
}
