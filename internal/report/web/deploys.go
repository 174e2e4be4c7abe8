package web

import (
	"fmt"
	"net/url"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/units"
)

// How much of the deploys the home page shows.
const (
	HomeDeploysSince = "24h" // the range looked at
	homeDeploys      = 5     // latest deploys listed; the rest are counted
	homeDeployRows   = 5     // changes listed per deploy; the rest are counted
)

// Deploys is the deploys page: the form (target selector and range, as
// typed), what is wrong with it if anything, and each deploy found with
// its significant changes.
type Deploys struct {
	Target, Since string
	// Problem says why nothing is shown: bad input, or no profiles of
	// the targets chosen.
	Problem string
	Method  string
	Range   string
	Deploys []DeployRow
	// Ran is true when a report was computed (Problem is empty).
	Ran bool
}

// NoDeploy says the range holds no deploy.
func (*Deploys) NoDeploy() string { return report.NoDeploy }

// A DeployRow is one deploy as the pages show it.
type DeployRow struct {
	Sentence        string // when, which service, from which release to which
	Service         string
	Before, After   string
	Scrapes, Tested string
	// Verdict says why no change is listed (not judged, or no
	// significant change); "" when some are.
	Verdict string
	Changes []DeployChangeRow
	More    int    // changes beyond those listed
	Link    string // the service's deploys page
	// Compared says what the deploy was judged by: CPU per request, or
	// shares of the profile and why not per request; "" when it was not
	// judged (Verdict says why).
	Compared string
	// Requests counts the requests compared on each side; "" when the
	// deploy was not judged per request.
	Requests string
	// PerRequest are the CPU per request rows, all requests first: every
	// route compared on the deploys page, the significant ones on home.
	PerRequest []DeployRequestRow
}

// A DeployRequestRow is the CPU per request of all requests or one
// route, before and after a deploy. More CPU per request is worse, so
// rows are marked better or worse when the change is significant.
type DeployRequestRow struct {
	Route, Before, After, Change, P string
	Significant                     bool
	Worse                           bool // more CPU per request after
	All                             bool // the row of all requests, not one route's
}

// A DeployChangeRow is one function's median cum share before and after a
// deploy. Shares are of the profile, so a larger one is not by itself
// worse: the rows are not coloured better or worse.
type DeployChangeRow struct {
	Function, Before, After, Change, P string
	Up                                 bool // the share grew
}

// deployRow lays out d with at most rows changes; More counts the
// significant changes beyond them, FindDeploys' bound included. Its CPU
// per request rows are every route's with allRoutes, else all requests'
// and the significant routes'.
func deployRow(rep *profseries.DeployReport, d profseries.Deploy, rows int, since string, allRoutes bool) DeployRow {
	row := DeployRow{Sentence: report.DeploySentence(d), Service: d.Service.String(), Before: d.Before.String(), After: d.After.String(),
		Scrapes: fmt.Sprintf("%d before, %d after", d.BeforeScrapes, d.AfterScrapes), Tested: fmt.Sprint(d.Tested),
		Verdict: report.DeployVerdict(rep, d),
		Link:    "/deploys?" + url.Values{"target": {d.Service.String()}, "since": {since}}.Encode()}
	row.More = d.Significant - min(len(d.Changes), rows)
	if d.Judged {
		row.Compared, row.Requests = report.DeployCompared(d), report.DeployRequests(d)
	}
	for _, c := range report.DeployPerRequestChanges(d, !allRoutes) {
		row.PerRequest = append(row.PerRequest, DeployRequestRow{Route: report.DeployRoute(c), Before: units.Seconds(c.Before), After: units.Seconds(c.After),
			Change: report.DeployChangeText(c), P: report.DeployRequestP(c), Significant: c.Significant, Worse: c.Change > 0, All: c.Route == ""})
	}
	for i, c := range d.Changes {
		if i == rows {
			break
		}
		row.Changes = append(row.Changes, DeployChangeRow{Function: c.Function, Before: units.Percent(c.Before), After: units.Percent(c.After),
			Change: units.Points(c.Delta), P: report.DeployP(c), Up: c.Delta > 0})
	}
	return row
}

// seriesRange is a range of profile series as the pages write it.
func seriesRange(from, to time.Time) string {
	return from.Local().Format("2006-01-02 15:04:05") + " to " + to.Local().Format("2006-01-02 15:04:05")
}

// NewDeploys lays out a deploy report; rep nil shows the form and problem
// alone.
func NewDeploys(target, since, problem string, rep *profseries.DeployReport) *Deploys {
	p := &Deploys{Target: target, Since: since, Problem: problem}
	if rep == nil {
		return p
	}
	p.Ran = true
	p.Method = report.DeployMethod(rep)
	p.Range = seriesRange(rep.From, rep.To)
	for _, d := range rep.Deploys {
		p.Deploys = append(p.Deploys, deployRow(rep, d, len(d.Changes), since, true))
	}
	return p
}

// HomeDeploys is the home page's section of deploys: the latest deploys
// of every stored service over HomeDeploysSince with their significant
// changes. A nil *HomeDeploys leaves the section out (no profiles are
// stored).
type HomeDeploys struct {
	Since   string
	Problem string // why the deploys could not be found
	Deploys []DeployRow
	More    int // deploys beyond those listed
	Method  string
	// Link is the deploys page of every target over the range.
	Link string
}

// NewHomeDeploys lays out the home page's deploys: rep nil with err
// saying why they could not be found.
func NewHomeDeploys(rep *profseries.DeployReport, err error) *HomeDeploys {
	h := &HomeDeploys{Since: HomeDeploysSince, Link: "/deploys?" + url.Values{"since": {HomeDeploysSince}}.Encode()}
	if err != nil {
		h.Problem = err.Error()
		return h
	}
	h.Method = report.DeployMethod(rep)
	for i, d := range rep.Deploys {
		if i == homeDeploys {
			h.More = len(rep.Deploys) - homeDeploys
			break
		}
		h.Deploys = append(h.Deploys, deployRow(rep, d, homeDeployRows, HomeDeploysSince, false))
	}
	return h
}

// NoDeploy says the range holds no deploy.
func (*HomeDeploys) NoDeploy() string { return report.NoDeploy }
