package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
)

// Run reads the indexed run id from its directory, with the profile
// limits set. A run whose directory is gone is an ErrNotFound.
func (d *Dashboard) Run(ctx context.Context, id string) (*run.Run, error) {
	pr, err := d.cfg.Store.ProfileRun(ctx, id)
	if err != nil {
		return nil, err
	}
	saved, err := run.Load(pr.Dir)
	if err != nil {
		if _, statErr := os.Stat(pr.Dir); errors.Is(statErr, fs.ErrNotExist) {
			return nil, NotFound(fmt.Sprintf("run %s is indexed, but its directory %s is gone", id, pr.Dir))
		}
		return nil, err
	}
	saved.Limits = d.cfg.ProfileLimits
	return saved, nil
}

// MissingProfile is the ErrNotFound saying why saved has no profile of
// kind.
func MissingProfile(saved *run.Run, kind string) error {
	if pf, ok := saved.Lookup(kind); ok && pf.Error != "" {
		return NotFound(fmt.Sprintf("run %s has no %s profile: %s", saved.ID, kind, pf.Error))
	}
	var kinds []string
	for _, pf := range saved.Profiles {
		if pf.File != "" {
			kinds = append(kinds, pf.Kind)
		}
	}
	return NotFound(fmt.Sprintf("run %s has no %s profile; it has %v", saved.ID, kind, kinds))
}

// Analysis returns the shared analysis of saved with opts, waiting for it
// at most Config.Wait. When it is not done by then, or failed, the error
// is an ErrUnavailable: asking again may do.
func (d *Dashboard) Analysis(ctx context.Context, saved *run.Run, opts profiles.Options) (*analysis.Entry, error) {
	e, err := d.cfg.Analyses.Wait(ctx, saved, opts, d.cfg.Wait)
	switch {
	case errors.Is(err, analysis.ErrAnalysing):
		return nil, unavailableError{fmt.Errorf("run %s is still being analysed: reload in a few seconds", saved.ID)}
	case err != nil:
		return nil, unavailableError{err}
	}
	return e, nil
}

// Runs is the list of the latest runs (limit, default 200, 0 for all)
// with their health, those whose id, target or commit holds q, in the
// order sort names (web.RunSorts).
func (d *Dashboard) Runs(ctx context.Context, v url.Values) (web.Runs, error) {
	f := store.RunFilter{Limit: 200}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return web.Runs{}, BadInput("limit " + strconv.Quote(l) + ": want a number of runs, 0 for all")
		}
		f.Limit = n
	}
	if !web.RunSort(v.Get("sort")) {
		return web.Runs{}, BadInput("sort " + strconv.Quote(v.Get("sort")) + ": want one of " + strings.Join(web.RunSorts, ", "))
	}
	runs, err := d.cfg.Store.ProfileRuns(ctx, f)
	if err != nil {
		return web.Runs{}, err
	}
	var sums []web.RunSummary
	for _, pr := range runs {
		sums = append(sums, d.Summary(ctx, pr))
	}
	return web.NewRuns(sums, v.Get("q"), v.Get("sort")), nil
}

// RunPage is the page of run id: its load results, findings, profiles,
// CPU by route and the report with the options route, top and all.
func (d *Dashboard) RunPage(ctx context.Context, id string, v url.Values) (*web.RunPage, error) {
	opts, err := ParseReportOptions(v)
	if err != nil {
		return nil, err
	}
	saved, err := d.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	e, err := d.Analysis(ctx, saved, opts)
	if err != nil {
		return nil, err
	}
	recent, err := d.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: 50})
	if err != nil {
		return nil, err
	}
	return web.NewRunPage(saved, e.Result, recent, e.TooLarge), nil
}

// AnalyseLatest starts the analyses of the runs the home page shows, so
// that the first visitor after a start finds them done or under way. It
// gives up listing them after a minute.
func (d *Dashboard) AnalyseLatest(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	runs, err := d.cfg.Store.ProfileRuns(ctx, store.RunFilter{Limit: web.HomeRuns})
	if err != nil {
		return fmt.Errorf("list the latest runs to analyse: %w", err)
	}
	for _, pr := range runs {
		if saved, err := d.Run(ctx, pr.ID); err == nil {
			d.cfg.Analyses.Start(saved, profiles.Options{})
		}
	}
	return nil
}
