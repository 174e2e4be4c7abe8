package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report/web"
)

// pageLeaks shows the leaks of the targets a selector chooses over a
// range: GET /leaks?target=SELECTOR&since=1h. Bad input keeps the form as
// typed and says what is wrong (400); a range without snapshots says so
// (404).
func (s *Server) pageLeaks(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	target, since, sel, from, to, problem := seriesForm(r, "1h")
	show := func(code int, problem string, rep *profseries.LeakReport) {
		s.pages.render(w, code, "leaks", "Leaks", "leaks", web.NewLeaks(target, since, problem, rep), start)
	}
	if problem != "" {
		show(http.StatusBadRequest, problem, nil)
		return
	}
	rep, err := profseries.FindLeaks(r.Context(), s.cfg.Store, sel, from, to, profseries.LeakOptions{})
	switch {
	case errors.Is(err, profseries.ErrNoLeakData):
		show(http.StatusNotFound, err.Error()+": widen the range or the selector", nil)
	case err != nil:
		s.fail(w, r, http.StatusInternalServerError, err)
	default:
		show(http.StatusOK, "", rep)
	}
}
