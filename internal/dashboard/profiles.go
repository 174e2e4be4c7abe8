package dashboard

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/store"
)

// ProfileQuery reads the query every profile-series endpoint takes:
//
//	type      cpu (default), allocs, heap, goroutine, mutex, block, goroutineleak
//	query     a label selector, {job="api",version=~"1\\..*"} (default: all)
//	since     a duration ago (90m, 24h, 7d) or an instant; default 1h
//	from, to  instants (2026-11-26T14:00:00Z, 2026-11-26 14:00) or
//	          durations ago; from overrides since, to defaults to now
//	sample_type  the sample type ranked (default the profile's own)
func ProfileQuery(v url.Values) (profseries.Query, error) {
	sel, from, to, err := rangeQuery(v)
	if err != nil {
		return profseries.Query{}, err
	}
	q := profseries.Query{Type: v.Get("type"), Selector: sel, From: from, To: to, SampleType: v.Get("sample_type")}
	if q.Type == "" {
		q.Type = profseries.CPU
	}
	if err := q.Check(); err != nil {
		return q, BadInput(err.Error())
	}
	return q, nil
}

// rangeQuery reads a selector (query, default all) and a range (since,
// from, to; default the last hour).
func rangeQuery(v url.Values) (profseries.Selector, time.Time, time.Time, error) {
	sel, err := profseries.ParseSelector(v.Get("query"))
	if err != nil {
		return nil, time.Time{}, time.Time{}, BadInput("query: " + err.Error())
	}
	from, to, err := profseries.ParseRange(v.Get("since"), v.Get("from"), v.Get("to"), time.Now())
	if err != nil {
		return nil, from, to, BadInput(err.Error())
	}
	return sel, from, to, nil
}

// seriesError makes the store's "nothing stored" an ErrNotFound.
func seriesError(err error) error {
	if errors.Is(err, store.ErrNoProfiles) || errors.Is(err, profseries.ErrNoFunction) {
		return NotFound(err.Error())
	}
	return err
}

// Targets lists the stored series the selector query chooses, of type
// (default every type); never nil.
func (d *Dashboard) Targets(ctx context.Context, v url.Values) ([]store.ProfileTarget, error) {
	sel, err := profseries.ParseSelector(v.Get("query"))
	if err != nil {
		return nil, BadInput("query: " + err.Error())
	}
	ts, err := d.cfg.Store.ProfileTargets(ctx, v.Get("type"), sel)
	if ts == nil && err == nil {
		ts = []store.ProfileTarget{}
	}
	return ts, err
}

// Merge merges the range of the query (ProfileQuery) into one profile.
func (d *Dashboard) Merge(ctx context.Context, v url.Values) (*store.Merged, profseries.Query, error) {
	q, err := ProfileQuery(v)
	if err != nil {
		return nil, q, err
	}
	m, err := d.cfg.Store.Merge(ctx, q)
	return m, q, seriesError(err)
}

// Top ranks the functions of the range of the query (ProfileQuery): n
// rows (default 20), by order flat (default) or cum.
func (d *Dashboard) Top(ctx context.Context, v url.Values) (*profiles.FuncTable, error) {
	q, err := ProfileQuery(v)
	if err != nil {
		return nil, err
	}
	n := 20
	if s := v.Get("n"); s != "" {
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			return nil, BadInput("n " + strconv.Quote(s) + ": give a whole number, 1 or more")
		}
	}
	order := profiles.ByFlat
	if o := v.Get("order"); o == string(profiles.ByCum) {
		order = profiles.ByCum
	} else if o != "" && o != string(profiles.ByFlat) {
		return nil, BadInput("order " + strconv.Quote(o) + ": use flat or cum")
	}
	t, err := d.cfg.Store.Top(ctx, q, order, n)
	return t, seriesError(err)
}

// Function is the share of the function name per step over the range of
// the query (ProfileQuery), by default profseries.SeriesStep's; never nil.
func (d *Dashboard) Function(ctx context.Context, v url.Values) ([]profseries.FunctionPoint, error) {
	q, err := ProfileQuery(v)
	if err != nil {
		return nil, err
	}
	name := v.Get("name")
	if name == "" {
		return nil, BadInput("name: give the function's full name")
	}
	step := profseries.SeriesStep(q.From, q.To)
	if s := v.Get("step"); s != "" {
		if step, err = time.ParseDuration(s); err != nil || step <= 0 {
			return nil, BadInput("step " + strconv.Quote(s) + ": give a positive duration (10s, 1m)")
		}
	}
	pts, err := d.cfg.Store.FunctionSeries(ctx, q, name, step)
	if pts == nil && err == nil {
		pts = []profseries.FunctionPoint{}
	}
	return pts, seriesError(err)
}

// RangeDiff compares the range of the query (ProfileQuery) with the same
// range ago earlier (default 1h), or with base_from..base_to.
func (d *Dashboard) RangeDiff(ctx context.Context, v url.Values) (*profseries.RangeDiff, error) {
	head, err := ProfileQuery(v)
	if err != nil {
		return nil, err
	}
	base := head
	if v.Get("base_from") != "" || v.Get("base_to") != "" {
		if base.From, base.To, err = profseries.ParseRange("", v.Get("base_from"), v.Get("base_to"), time.Now()); err != nil {
			return nil, BadInput("base_" + err.Error())
		}
	} else {
		ago := time.Hour
		if a := v.Get("ago"); a != "" {
			if ago, err = time.ParseDuration(a); err != nil || ago <= 0 {
				return nil, BadInput("ago " + strconv.Quote(a) + ": give a positive duration (1h, 24h)")
			}
		}
		base.From, base.To = head.From.Add(-ago), head.To.Add(-ago)
	}
	diff, err := d.cfg.Store.Diff(ctx, base, head)
	return diff, seriesError(err)
}

// LeakReport judges the stacks of the selector query over the range
// (since, from, to) with profseries.FindLeaks's default options; an
// ErrNotFound when the range holds no goroutine or heap snapshot.
func (d *Dashboard) LeakReport(ctx context.Context, v url.Values) (*profseries.LeakReport, error) {
	sel, from, to, err := rangeQuery(v)
	if err != nil {
		return nil, err
	}
	rep, err := profseries.FindLeaks(ctx, d.cfg.Store, sel, from, to, profseries.LeakOptions{})
	if errors.Is(err, profseries.ErrNoLeakData) {
		return nil, NotFound(err.Error())
	}
	return rep, err
}

// DeployReport finds the deploys of the services the selector query
// chooses over the range (since, from, to) with the changes of profile
// type (default cpu), profseries.FindDeploys's default options otherwise.
func (d *Dashboard) DeployReport(ctx context.Context, v url.Values) (*profseries.DeployReport, error) {
	sel, from, to, err := rangeQuery(v)
	if err != nil {
		return nil, err
	}
	o := profseries.DeployOptions{Type: v.Get("type")}
	if o.Type != "" && !slices.Contains(profseries.Types, o.Type) {
		return nil, BadInput("type " + strconv.Quote(o.Type) + ": use one of " + strings.Join(profseries.Types, ", "))
	}
	return profseries.FindDeploys(ctx, d.cfg.Store, sel, from, to, o)
}
