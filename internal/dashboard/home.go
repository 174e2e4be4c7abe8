package dashboard

import (
	"context"
	"errors"
	"time"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/store"
)

// Home answers "what changed lately?": the latest commits with the
// metrics that changed beyond the noise, regressions first, the latest
// profiling runs with their health and headline numbers, and the latest
// deploys of the scraped services.
func (d *Dashboard) Home(ctx context.Context) (*web.Home, error) {
	var changes *history.Result
	cv, err := d.changes(ctx, history.Query{})
	switch {
	case err == nil:
		changes = cv.Result
	case errors.Is(err, ErrNotFound):
		changes = &history.Result{} // no benchmarks yet
	default:
		return nil, err
	}
	runs, err := d.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: web.HomeRuns})
	if err != nil {
		return nil, err
	}
	var sums []web.RunSummary
	for _, pr := range runs {
		sums = append(sums, d.Summary(ctx, pr))
	}
	home := web.NewHome(changes, sums)
	home.Deploys = d.homeDeploys(ctx)
	return home, nil
}

// Summary returns pr's summary. Its per-request numbers come from the
// run's shared analysis when it is done; it never waits for one.
func (d *Dashboard) Summary(ctx context.Context, pr store.ProfileRun) web.RunSummary {
	saved, err := d.Run(ctx, pr.ID)
	if err != nil {
		return web.NewRunSummary(pr, nil, err, nil, nil)
	}
	var res *analysis.Result
	var tooLarge []string
	if e, done := d.cfg.Analyses.Finished(saved); done {
		res, tooLarge = e.Result, e.TooLarge
	}
	return web.NewRunSummary(pr, saved, nil, res, tooLarge)
}

// homeDeploys is the home page's section of deploys: those of every
// service over the last web.HomeDeploysSince, or nil when no CPU profiles
// are stored. A failure is shown in the section, not in place of the
// page.
func (d *Dashboard) homeDeploys(ctx context.Context) *web.HomeDeploys {
	targets, err := d.cfg.Store.SeriesLabels(ctx, profseries.CPU, nil)
	if err == nil && len(targets) == 0 {
		return nil
	}
	var rep *profseries.DeployReport
	if err == nil {
		rep, err = HomeDeploys(ctx, d.cfg.Store, time.Now())
	}
	return web.NewHomeDeploys(rep, err)
}

// HomeDeploys finds the deploys the home page lists at now: every
// service's, over web.HomeDeploysSince. A scraper runs it after each pass
// of retention, so that a store that keeps judgements of deploys (see
// profseries.DeployKeeper) has them before the page asks.
func HomeDeploys(ctx context.Context, r profseries.SeriesReader, now time.Time) (*profseries.DeployReport, error) {
	from, to, err := profseries.ParseRange(web.HomeDeploysSince, "", "", now)
	if err != nil {
		return nil, err
	}
	return profseries.FindDeploys(ctx, r, nil, from, to, profseries.DeployOptions{})
}
