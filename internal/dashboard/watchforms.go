package dashboard

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report/web"
)

// DeployPageRows bounds the changes the deploys page lists per deploy;
// it says how many more there are.
const DeployPageRows = 100

// A seriesForm is the form of a page over profile series as typed, and
// as read.
type seriesForm struct {
	target, since string
	sel           profseries.Selector
	from, to      time.Time
}

// readSeriesForm reads target, a label selector (default every target),
// and since, a range ending now (default defaultSince); the error, of
// kind ErrBadInput, says what is wrong with them.
func readSeriesForm(v url.Values, defaultSince string) (seriesForm, error) {
	f := seriesForm{target: v.Get("target"), since: v.Get("since")}
	if f.since == "" {
		f.since = defaultSince
	}
	var err error
	if f.sel, err = profseries.ParseSelector(f.target); err != nil {
		return f, BadInput("target: " + err.Error())
	}
	if f.from, f.to, err = profseries.ParseRange(f.since, "", "", time.Now()); err != nil {
		return f, BadInput(err.Error())
	}
	return f, nil
}

// Deploys is the page of the deploys of the services a selector (target)
// chooses over a range (since, default web.HomeDeploysSince), each with
// its significant changes. Bad input (ErrBadInput) and a selector
// choosing no target with CPU profiles (ErrNotFound) are said on the
// page, which keeps the form as typed: a page and an error together. A nil
// page is the dashboard's own failure.
func (d *Dashboard) Deploys(ctx context.Context, v url.Values) (*web.Deploys, error) {
	f, err := readSeriesForm(v, web.HomeDeploysSince)
	if err != nil {
		return web.NewDeploys(f.target, f.since, err.Error(), nil), err
	}
	targets, err := d.cfg.Store.SeriesLabels(ctx, profseries.CPU, f.sel)
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		err := NotFound("no target with CPU profiles matches " + strconv.Quote(f.sel.String()) + ": see the targets scraped with perfscope query targets")
		return web.NewDeploys(f.target, f.since, err.Error(), nil), err
	}
	rep, err := profseries.FindDeploys(ctx, d.cfg.Store, f.sel, f.from, f.to, profseries.DeployOptions{Rows: DeployPageRows})
	if err != nil {
		return nil, err
	}
	return web.NewDeploys(f.target, f.since, "", rep), nil
}

// Leaks is the page of the leaks of the targets a selector (target)
// chooses over a range (since, default 1h). Bad input (ErrBadInput) and a
// range without snapshots (ErrNotFound) are said on the page as Deploys
// says them.
func (d *Dashboard) Leaks(ctx context.Context, v url.Values) (*web.Leaks, error) {
	f, err := readSeriesForm(v, "1h")
	if err != nil {
		return web.NewLeaks(f.target, f.since, err.Error(), nil), err
	}
	rep, err := profseries.FindLeaks(ctx, d.cfg.Store, f.sel, f.from, f.to, profseries.LeakOptions{})
	switch {
	case errors.Is(err, profseries.ErrNoLeakData):
		err := NotFound(err.Error() + ": widen the range or the selector")
		return web.NewLeaks(f.target, f.since, err.Error(), nil), err
	case err != nil:
		return nil, err
	}
	return web.NewLeaks(f.target, f.since, "", rep), nil
}
