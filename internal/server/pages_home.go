package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

// How much the home page shows.
const (
	homeCommits = 6  // latest commits, with their changes
	homeRuns    = 8  // latest profiling runs
	homeChanges = 12 // changes listed per commit; the rest are counted
)

// A homeCommit is one of the latest commits of a line (branch and
// machine) on the home page with the metrics that changed beyond the noise
// there, regressions first.
type homeCommit struct {
	history.CommitChanges
	Changes []homeChange
	More    int // changes beyond those listed
}

// A homeChange is one metric's change at a commit.
type homeChange struct {
	history.Change
	Median string // the commit's median, formatted in its unit
}

// Class is the change's colour class on the page.
func (c homeChange) Class() string { return betterClass(c.Better) }

// betterClass names the colour of a direction: "better", "worse" or "".
func betterClass(better int) string {
	switch {
	case better > 0:
		return "better"
	case better < 0:
		return "worse"
	}
	return ""
}

// Link is the comparison of the change's commit with the one before it
// on the same branch and machine.
func (c homeChange) Link() string {
	return compareLink(c.Previous, c.Ref, url.Values{"branch": {c.Line.Branch}, "machine": {c.Line.Machine}})
}

// homeView lays out history.ByCommit's answer for the page: each commit's
// first homeChanges changes, their medians formatted.
func homeView(commits []history.CommitChanges) []homeCommit {
	out := make([]homeCommit, len(commits))
	for i, cc := range commits {
		hc := homeCommit{CommitChanges: cc}
		for j, ch := range cc.Changes {
			if j == homeChanges {
				hc.More = len(cc.Changes) - homeChanges
				break
			}
			hc.Changes = append(hc.Changes, homeChange{Change: ch, Median: formatUnit(ch.Median, ch.Unit)})
		}
		out[i] = hc
	}
	return out
}

// Run health as the dashboard marks it.
const (
	healthOK          = "ok"
	healthFailed      = "failed load"
	healthInterrupted = "interrupted"
)

// runHealth says whether a run's load completed and served: interrupted,
// failed load (the load errored, or its health says it failed), or ok. It
// is the one place that decides, for every page that marks runs.
func runHealth(r *run.Run) string {
	switch {
	case r.Interrupted || (r.Load != nil && r.Load.Interrupted):
		return healthInterrupted
	case r.Error != "":
		return healthFailed
	case r.Load != nil && loadHealth(r.Load).Failed:
		return healthFailed
	}
	return healthOK
}

// loadHealth is l's health as recorded, or judged by the default threshold
// for runs saved before loads recorded it.
func loadHealth(l *loadgen.Result) *loadgen.Health {
	if l.Health != nil {
		return l.Health
	}
	return loadgen.Assess(l, 0)
}

// A runSummary is a run's line on the home page: its health and headline
// numbers, formatted.
type runSummary struct {
	store.ProfileRun
	Health                            string
	RPS, P99, CPU, AllocBytes, Allocs string // "" when not measured
	Problem                           string // why the run is not ok
	// Analysing says the run's analysis is under way: its numbers are
	// not known yet.
	Analysing bool
	// TooLarge says which profiles were beyond the server's limits.
	TooLarge string
}

// HealthClass is the health's style class.
func (r runSummary) HealthClass() string {
	switch r.Health {
	case healthOK:
		return "ok"
	case healthInterrupted:
		return "interrupted"
	}
	return "failed"
}

// summarize returns pr's summary. Its per-request numbers come from the
// run's shared analysis when it is done; the page never waits for one.
func (s *Server) summarize(ctx context.Context, pr store.ProfileRun) runSummary {
	sum := runSummary{ProfileRun: pr, Health: healthOK}
	saved, err := s.loadRun(ctx, pr.ID)
	if err != nil {
		sum.Health, sum.Problem = healthFailed, err.Error()
		return sum
	}
	sum.Health = runHealth(saved)
	switch {
	case saved.Error != "":
		sum.Problem = saved.Error
	case saved.Load != nil:
		l := *saved.Load
		l.Health = loadHealth(&l)
		sum.Problem = report.LoadFailure(&l)
	}
	if l := saved.Load; l != nil {
		sum.RPS, sum.P99 = units.Rate(l.Throughput), units.Millis(l.Latency.P99)
	}
	e, done := s.finished(saved)
	switch {
	case !done:
		sum.Analysing = true
	case len(e.tooLarge) > 0:
		sum.TooLarge = strings.Join(e.tooLarge, "; ")
	}
	if done && e.res.Analysis.PerRequest != nil {
		pr := e.res.Analysis.PerRequest
		if pr.CPUSeconds != nil {
			sum.CPU = units.Seconds(*pr.CPUSeconds)
		}
		if pr.AllocBytes != nil {
			sum.AllocBytes = units.Bytes(*pr.AllocBytes)
		}
		if pr.AllocObjects != nil {
			sum.Allocs = units.Number(*pr.AllocObjects)
		}
	}
	return sum
}

// pageHome answers "what changed lately?": the latest commits with the
// metrics that changed beyond the noise, regressions first, and the latest
// profiling runs with their health and headline numbers: GET /.
func (s *Server) pageHome(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	var changes *history.Result
	cv, err := s.changes(ctx, history.Query{})
	switch {
	case err == nil:
		changes = cv.Result
	case statusOf(err) == http.StatusNotFound:
		changes = &history.Result{} // no benchmarks yet
	default:
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	runs, err := s.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: homeRuns})
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	data := struct {
		Commits []homeCommit
		Metrics int
		Window  int
		Runs    []runSummary
	}{Commits: homeView(history.ByCommit(changes.Series, homeCommits)), Metrics: len(changes.Series), Window: history.DefaultWindow}
	for _, pr := range runs {
		data.Runs = append(data.Runs, s.summarize(ctx, pr))
	}
	s.pages.render(w, http.StatusOK, "home", "What changed", "home", data, start)
}
