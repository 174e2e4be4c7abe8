package server

import (
	"cmp"
	"context"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

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

// A homeCommit is one of the latest commits on the home page with the
// metrics that changed beyond the noise there, regressions first.
type homeCommit struct {
	Ref      string
	Time     time.Time
	Measured int // metrics with results at this commit
	Changes  []homeChange
	More     int // changes beyond those listed
}

// Regressions counts the commit's regressions.
func (c homeCommit) Regressions() int {
	n := 0
	for _, ch := range c.Changes {
		if ch.Better < 0 {
			n++
		}
	}
	return n
}

// A homeChange is one metric's change at a commit.
type homeChange struct {
	Package, Name, Unit string
	Delta               float64 // relative to the previous commit
	Better              int     // 1 improvement, -1 regression, 0 neither
	Median              string  // the commit's median, formatted in its unit
	Previous, Ref       string  // the commits compared
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

// Link is the comparison of the change's commit with its parent.
func (c homeChange) Link() string { return compareLink(c.Previous, c.Ref, nil) }

// recentCommits is how many commits the home page and the benchmark list
// look at per metric: the trend page's smallest window, so that its changes
// are the ones that page shows with n=100, and few enough that the series of
// hundreds of metrics fit the series cache together.
const recentCommits = 100

// allSeries returns the recent series of every benchmark metric f selects,
// in the store's order of benchmarks and units.
func (s *Server) allSeries(ctx context.Context, f store.Filter) ([]*seriesView, error) {
	benches, err := s.cfg.Store.Benchmarks(ctx, f)
	if err != nil {
		return nil, err
	}
	var out []*seriesView
	for _, b := range benches {
		for _, u := range b.Units {
			v, err := s.recentSeries(ctx, store.SeriesKey{Package: b.Package, Name: b.Name, Unit: u}, f)
			if err != nil {
				return nil, err
			}
			if v != nil {
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// recentSeries returns one metric's series over its latest recentCommits
// commits on f's branch and machine, or nil when the metric has no results
// there.
func (s *Server) recentSeries(ctx context.Context, key store.SeriesKey, f store.Filter) (*seriesView, error) {
	v, err := s.series(ctx, seriesQuery{Key: key, Filter: store.Filter{Branch: f.Branch, Machine: f.Machine, Limit: recentCommits}, Alpha: 0.05})
	if statusOf(err) == http.StatusNotFound {
		return nil, nil
	}
	return v, err
}

// latestCommits gathers, over all series, the newest n commits and the
// changes detected at each.
func latestCommits(series []*seriesView, n int) []homeCommit {
	byRef := make(map[string]*homeCommit)
	for _, v := range series {
		for _, c := range v.Commits {
			hc := byRef[c.Ref]
			if hc == nil {
				hc = &homeCommit{Ref: c.Ref, Time: c.Time}
				byRef[c.Ref] = hc
			}
			hc.Measured++
			if !c.Changed || c.Delta == nil {
				continue
			}
			hc.Changes = append(hc.Changes, homeChange{Package: v.Package, Name: v.Name, Unit: v.Unit,
				Delta: *c.Delta, Better: c.Better, Median: formatUnit(c.Median, v.Unit),
				Previous: c.Previous, Ref: c.Ref})
		}
	}
	out := make([]homeCommit, 0, len(byRef))
	for _, hc := range byRef {
		out = append(out, *hc)
	}
	slices.SortFunc(out, func(a, b homeCommit) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(a.Ref, b.Ref))
	})
	out = out[:min(n, len(out))]
	for i := range out {
		ch := out[i].Changes
		// Regressions first, then improvements; the largest first in each.
		slices.SortFunc(ch, func(a, b homeChange) int {
			return cmp.Or(cmp.Compare(a.Better, b.Better), cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)),
				cmp.Compare(a.Name, b.Name), cmp.Compare(a.Unit, b.Unit))
		})
		if len(ch) > homeChanges {
			out[i].More = len(ch) - homeChanges
			out[i].Changes = ch[:homeChanges]
		}
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
	series, err := s.allSeries(ctx, store.Filter{})
	if err != nil {
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
		Runs    []runSummary
	}{Commits: latestCommits(series, homeCommits), Metrics: len(series)}
	for _, pr := range runs {
		data.Runs = append(data.Runs, s.summarize(ctx, pr))
	}
	s.pages.render(w, http.StatusOK, "home", "What changed", "home", data, start)
}
