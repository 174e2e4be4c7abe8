package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/store"
)

// changes answers a history query as history.Changes does, from the cache
// when nothing changed. A query no benchmark matches is an ErrNotFound.
func (d *Dashboard) changes(ctx context.Context, q history.Query) (*web.Changes, error) {
	version, err := d.cfg.Store.BenchVersion(ctx)
	if err != nil {
		return nil, err
	}
	if v := d.cache.Get(q, version); v != nil {
		return v, nil
	}
	res, err := history.Changes(ctx, d.cfg.Store, q)
	if errors.Is(err, history.ErrNoBenchmarks) {
		return nil, NotFound("no recorded benchmark matches the filter")
	}
	if err != nil {
		return nil, err
	}
	v := web.NewChanges(res)
	d.cache.Put(q, version, v)
	return v, nil
}

// Series answers a series query: the metric's series on the query's
// branch and machine, or when the filter leaves several lines, the one
// with the newest commit, with a warning naming the others (web.PickLine).
// A metric with no samples matching the filter is an ErrNotFound.
func (d *Dashboard) Series(ctx context.Context, q SeriesQuery) (*web.Series, error) {
	cv, err := d.changes(ctx, q.changesQuery())
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if cv == nil || len(cv.Series) == 0 {
		return nil, NotFound(fmt.Sprintf("no results of %s %s in %s match the filter", q.Key.Name, q.Key.Unit, q.Key.Package))
	}
	return web.PickLine(cv.Series), nil
}

// Benchmarks is the list of recorded benchmarks of the query's branch,
// machine, package (exact) and name (a regular expression), each with its
// latest change. A name that is not a regular expression is said on the
// page.
func (d *Dashboard) Benchmarks(ctx context.Context, q url.Values) (*web.BenchList, error) {
	data := &web.BenchList{Branch: q.Get("branch"), Machine: q.Get("machine"), Package: q.Get("package"), Name: q.Get("name")}
	var err error
	if data.Branches, data.Machines, err = d.branchesAndMachines(ctx); err != nil {
		return nil, err
	}
	all, err := d.cfg.Store.Benchmarks(ctx, store.Filter{Branch: data.Branch, Machine: data.Machine})
	if err != nil {
		return nil, err
	}
	data.Any = len(all) > 0
	for _, b := range all {
		if !slices.Contains(data.Packages, b.Package) {
			data.Packages = append(data.Packages, b.Package)
		}
	}
	f := store.Filter{Branch: data.Branch, Machine: data.Machine, Package: exactRegexp(data.Package), Name: data.Name}
	benches, err := d.cfg.Store.Benchmarks(ctx, f)
	if err != nil {
		data.Error = err.Error() // a bad regular expression: say so on the page
	}
	if err == nil && len(benches) > 0 {
		cv, err := d.changes(ctx, history.Query{Filter: f})
		if err != nil {
			return nil, err
		}
		data.Benchmarks = web.BenchRows(cv.Series)
	}
	return data, nil
}

// Trend is one benchmark metric over commits, as web.NewTrend reads the
// query; an ErrNotFound when the metric has no results matching it.
func (d *Dashboard) Trend(ctx context.Context, q url.Values) (*web.Trend, error) {
	t, window, err := web.NewTrend(q)
	if err != nil {
		return nil, BadInput(err.Error())
	}
	benches, err := d.cfg.Store.Benchmarks(ctx, store.Filter{Package: exactRegexp(t.Package), Name: exactRegexp(t.Name)})
	if err != nil {
		return nil, err
	}
	if len(benches) == 0 || t.Name == "" {
		return nil, NotFound("No benchmark " + t.Name + " in package " + t.Package + " is recorded.")
	}
	t.SetUnits(benches[0].Units)
	if t.Branches, t.Machines, err = d.branchesAndMachines(ctx); err != nil {
		return nil, err
	}
	sq := SeriesQuery{Key: store.SeriesKey{Package: t.Package, Name: t.Name, Unit: t.Unit},
		Filter: store.Filter{Branch: t.Branch, Machine: t.Machine}, Alpha: 0.05, Window: window}
	series, err := d.Series(ctx, sq)
	if err != nil {
		return nil, err
	}
	t.Show(series)
	return t, nil
}

// branchesAndMachines lists the branches and hosts with benchmark results,
// for the filter menus. Listing them aggregates every run, so the lists are
// kept until the history changes.
func (d *Dashboard) branchesAndMachines(ctx context.Context) (branches, machines []string, err error) {
	version, err := d.cfg.Store.BenchVersion(ctx)
	if err != nil {
		return nil, nil, err
	}
	m := &d.menus
	m.mu.Lock()
	if m.valid && m.version == version {
		defer m.mu.Unlock()
		return m.branches, m.machines, nil
	}
	m.mu.Unlock()
	commits, err := d.cfg.Store.Commits(ctx, store.Filter{Order: store.ByInsertion})
	if err != nil {
		return nil, nil, err
	}
	for _, c := range commits {
		if c.Branch != "" && !slices.Contains(branches, c.Branch) {
			branches = append(branches, c.Branch)
		}
		for _, m := range c.Machines {
			if !slices.Contains(machines, m) {
				machines = append(machines, m)
			}
		}
	}
	slices.Sort(branches)
	slices.Sort(machines)
	m.mu.Lock()
	m.valid, m.version, m.branches, m.machines = true, version, branches, machines
	m.mu.Unlock()
	return branches, machines, nil
}

// filterMenus are the cached choices of the branch and machine menus.
type filterMenus struct {
	mu                 sync.Mutex
	valid              bool
	version            store.Version
	branches, machines []string
}
