package web

import (
	"net/url"
	"strings"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

// How much the home page shows.
const (
	HomeCommits = 6  // latest commits, with their changes
	HomeRuns    = 8  // latest profiling runs
	homeChanges = 12 // changes listed per commit; the rest are counted
)

// Home is the home page's data: what changed lately.
type Home struct {
	Commits []HomeCommit
	Metrics int // series judged
	Window  int // commits judged per series
	Runs    []RunSummary
	// Deploys are the latest deploys of the scraped services; nil when
	// no profiles are stored.
	Deploys *HomeDeploys
}

// NewHome lays out change detection's answer: the latest HomeCommits
// commits of history.ByCommit with their changes, and the runs'
// summaries.
func NewHome(changes *history.Result, runs []RunSummary) *Home {
	h := &Home{Metrics: len(changes.Series), Window: history.DefaultWindow, Runs: runs}
	for _, cc := range history.ByCommit(changes.Series, HomeCommits) {
		hc := HomeCommit{CommitChanges: cc}
		for j, ch := range cc.Changes {
			if j == homeChanges {
				hc.More = len(cc.Changes) - homeChanges
				break
			}
			hc.Changes = append(hc.Changes, HomeChange{Change: ch, Median: measure.Format(ch.Median, ch.Unit)})
		}
		h.Commits = append(h.Commits, hc)
	}
	return h
}

// A HomeCommit is one of the latest commits of a line (branch and
// machine) on the home page with the metrics that changed beyond the noise
// there, regressions first.
type HomeCommit struct {
	history.CommitChanges
	Changes []HomeChange
	More    int // changes beyond those listed
}

// MoreLink is the comparison of the commit with the one before it on its
// line, where every change of the commit is listed.
func (c HomeCommit) MoreLink() string {
	if len(c.Changes) == 0 {
		return ""
	}
	return c.Changes[0].Link()
}

// A HomeChange is one metric's change at a commit.
type HomeChange struct {
	history.Change
	Median string // the commit's median, formatted in its unit
}

// Class is the change's colour class on the page.
func (c HomeChange) Class() string { return BetterClass(c.Better) }

// Link is the comparison of the change's commit with the one before it
// on the same branch and machine.
func (c HomeChange) Link() string {
	return CompareLink(c.Previous, c.Ref, url.Values{"branch": {c.Line.Branch}, "machine": {c.Line.Machine}})
}

// Run health as the dashboard marks it.
const (
	HealthOK          = "ok"
	HealthFailed      = "failed load"
	HealthInterrupted = "interrupted"
)

// RunHealth says whether a run's load completed and served: interrupted,
// failed load (the load errored, or its health says it failed), or ok. It
// is the one place that decides, for every page that marks runs.
func RunHealth(r *run.Run) string {
	switch {
	case r.Interrupted || (r.Load != nil && r.Load.Interrupted):
		return HealthInterrupted
	case r.Error != "":
		return HealthFailed
	case r.Load != nil && loadHealth(r.Load).Failed:
		return HealthFailed
	}
	return HealthOK
}

// loadFailure says why l failed, judged as loadHealth does; "" when it
// did not.
func loadFailure(l *loadgen.Result) string {
	c := *l
	c.Health = loadHealth(&c)
	return report.LoadFailure(&c)
}

// loadHealth is l's health as recorded, or judged by the default threshold
// for runs saved before loads recorded it.
func loadHealth(l *loadgen.Result) *loadgen.Health {
	if l.Health != nil {
		return l.Health
	}
	return loadgen.Assess(l, 0)
}

// A RunSummary is a run's line on the home page: its health and headline
// numbers, formatted.
type RunSummary struct {
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
func (r RunSummary) HealthClass() string { return HealthClass(r.Health) }

// HealthClass is the style class of a health (RunHealth): ok, failed or
// interrupted.
func HealthClass(health string) string {
	switch health {
	case HealthOK:
		return "ok"
	case HealthInterrupted:
		return "interrupted"
	}
	return "failed"
}

// NewRunSummary is pr's summary. saved is the run as loaded, or nil with
// err saying why it could not be; res is its analysis when done, nil while
// it is under way (the page never waits for one), and tooLarge names the
// profiles the analysis could not read within the server's limits.
func NewRunSummary(pr store.ProfileRun, saved *run.Run, err error, res *analysis.Result, tooLarge []string) RunSummary {
	sum := RunSummary{ProfileRun: pr, Health: HealthOK}
	if err != nil {
		sum.Health, sum.Problem = HealthFailed, err.Error()
		return sum
	}
	sum.Health = RunHealth(saved)
	switch {
	case saved.Error != "":
		sum.Problem = saved.Error
	case saved.Load != nil:
		sum.Problem = loadFailure(saved.Load)
	}
	if l := saved.Load; l != nil {
		sum.RPS, sum.P99 = units.Rate(l.Throughput), units.Millis(l.Latency.P99)
	}
	switch {
	case res == nil:
		sum.Analysing = true
	case len(tooLarge) > 0:
		sum.TooLarge = strings.Join(tooLarge, "; ")
	}
	if res != nil && res.Analysis.PerRequest != nil {
		pr := res.Analysis.PerRequest
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
