package dashboard

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/sync/errgroup"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/scrape"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

// Watch pages' constants.
const (
	// servicesSince is the default range of the services' sparklines.
	servicesSince = "6h"
	// sparkPoints is about how many steps a sparkline has (a chart of the
	// service page has profseries.SeriesStep's).
	sparkPoints = 60
	// scrapeInterval is the scraper's default interval: the finest step
	// worth drawing.
	scrapeInterval = 10 * time.Second
	// versionLabel is the label whose changes "this version vs the
	// previous" compares.
	versionLabel = "version"
)

// watchNow is the end of the ranges "ago" is counted from: now, rounded
// up to a whole scrape interval, so that the pages of one interval are the
// same range and share pprof's UI, and nothing stored is left out.
func watchNow() time.Time { return time.Now().Truncate(scrapeInterval).Add(scrapeInterval) }

// Services lists every scraped target: its health, the types stored,
// sparklines of CPU, heap in use and goroutines over since, a duration
// ago ("" for the last 6h).
func (d *Dashboard) Services(ctx context.Context, since string) (*web.ServicesPage, error) {
	if since == "" {
		since = servicesSince
	}
	now := watchNow()
	from, err := units.ParseInstant(since, now)
	if err != nil || !from.Before(now) {
		return nil, BadInput("since " + strconv.Quote(since) + ": give a duration ago, such as 1h, 24h or 7d")
	}
	stored, err := d.cfg.Store.ProfileTargets(ctx, "", nil)
	if err != nil {
		return nil, err
	}
	var health []scrape.Health
	if d.cfg.Scraper != nil {
		health = d.cfg.Scraper.Targets()
	}
	targets := serviceTargets(stored, health)
	// Whole steps, the last the one now is in: each point is one of the
	// store's sums (see sparkStep), none read scrape by scrape at the
	// range's edges.
	step := sparkStep(from, now)
	from, to := wholeSteps(from, step), wholeSteps(now.Add(step-1), step)
	// Each gauge is read for every target in one read, the gauges at
	// once; the series of a target's versions are added up as the list
	// joins them.
	target := func(ls profseries.Labels) string { return withoutLabel(ls, versionLabel).String() }
	points := make([]map[string][]profseries.GaugePoint, len(profseries.Gauges))
	eg, ectx := errgroup.WithContext(ctx)
	for i, g := range profseries.Gauges {
		eg.Go(func() (err error) {
			points[i], err = d.cfg.Store.GaugeSeriesBy(ectx, g, nil, from, to, step, target)
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	for k, g := range profseries.Gauges {
		for i := range targets {
			t := &targets[i]
			line := web.GaugeLine{Gauge: g, Step: step}
			if slices.Contains(t.Types, g.Type) {
				line.Points = points[k][t.Labels.String()]
			}
			t.Gauges = append(t.Gauges, line)
		}
	}
	return web.NewServicesPage(since, from, to, now, targets, d.cfg.Scraper != nil), nil
}

// manySeries is how many series a chart adds up before it is drawn in
// steps of a minute at least.
const manySeries = 10

// chartStep is the step of the service page's charts over [from, to) of
// series series: profseries.SeriesStep's, and a minute at least for more
// than manySeries, since a step under a minute reads every scrape of
// every series (an hour of 100 targets: 36,000 sums a chart, 6,000 at a
// minute).
func chartStep(from, to time.Time, series int) time.Duration {
	step := profseries.SeriesStep(from, to)
	if series > manySeries && step < time.Minute {
		step = time.Minute
	}
	return step
}

// sparkStep is the step of the services' sparklines over [from, to):
// about sparkPoints of them, and an hour rather than part of one over ten
// minutes, so that a step is a bucket the store keeps the sums of (ten
// minutes, an hour) or a whole number of them, never a part.
func sparkStep(from, to time.Time) time.Duration {
	step := profseries.StepFor(from, to, sparkPoints, scrapeInterval)
	if step > 10*time.Minute && step < time.Hour {
		step = time.Hour
	}
	return step
}

// wholeSteps is t rounded down to a multiple of step since the epoch.
func wholeSteps(t time.Time, step time.Duration) time.Time {
	return time.Unix(0, t.UnixNano()/int64(step)*int64(step))
}

// serviceTargets joins the stored series, by label set less the version
// label (a deploy does not make a new service), with the health of the
// scraper's targets; a target the scraper has not stored anything of yet
// is listed too.
func serviceTargets(stored []store.ProfileTarget, health []scrape.Health) []web.ServiceTarget {
	var out []web.ServiceTarget
	index := map[string]int{}
	get := func(ls profseries.Labels) *web.ServiceTarget {
		ls = withoutLabel(ls, versionLabel)
		key := ls.String()
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, web.ServiceTarget{Labels: ls})
		}
		return &out[i]
	}
	for _, st := range stored {
		t := get(st.Labels)
		if !slices.Contains(t.Types, st.Type) {
			t.Types = append(t.Types, st.Type)
		}
		if st.Last.After(t.Last) {
			t.Last = st.Last
			t.Version = st.Labels.Get(versionLabel)
		}
	}
	for _, h := range health {
		t := get(h.Labels)
		t.Health = web.TargetHealth{Known: true, Up: h.Up, LastError: h.LastError, LastScrape: h.LastScrape}
		if v := h.Labels.Get(versionLabel); v != "" {
			t.Version = v
		}
	}
	for i := range out {
		slices.SortFunc(out[i].Types, func(a, b string) int {
			return slices.Index(profseries.Types, a) - slices.Index(profseries.Types, b)
		})
	}
	return out
}

// withoutLabel returns ls less the label named name.
func withoutLabel(ls profseries.Labels, name string) profseries.Labels {
	out := make(profseries.Labels, 0, len(ls))
	for _, l := range ls {
		if l.Name != name {
			out = append(out, l)
		}
	}
	return out
}

// ServiceQuery reads the service page's state from its query: target,
// base_target, type (default cpu), from (default 1h), to, base_from,
// base_to, fn, sort and search.
func ServiceQuery(v url.Values) web.ServiceQuery {
	q := web.ServiceQuery{Target: v.Get("target"), BaseTarget: v.Get("base_target"), Type: v.Get("type"), From: v.Get("from"), To: v.Get("to"),
		BaseFrom: v.Get("base_from"), BaseTo: v.Get("base_to"), Function: v.Get("fn"), Sort: v.Get("sort"), Search: v.Get("search")}
	if q.Type == "" {
		q.Type = profseries.CPU
	}
	if q.From == "" {
		q.From = "1h"
	}
	return q
}

// A resolvedQuery is a service page's query read: its selectors and
// ranges.
type resolvedQuery struct {
	sel, baseSel     profseries.Selector
	from, to         time.Time
	baseFrom, baseTo time.Time
	compare          bool
}

// parseRange reads the range [from, to) of a service page. A range
// counted back from now ("24h", to now) starts at a whole step of
// rangeGrain, the step of its charts, at or before from: the charts'
// first step and the table, the flame graph and the findings then start
// together, and the range's start is whole buckets, which the store
// keeps merged (minutes) or rolled up (ten minutes, hours), not scrapes
// read one by one from a time that moves with every request. Its end is
// left where it is: rounded up, the bucket still being scraped would be
// read whole, scrape by scrape. A range of dates is read as written.
func parseRange(from, to string, now time.Time) (time.Time, time.Time, error) {
	f, t, err := profseries.ParseRange("", from, to, now)
	if err != nil || !ago(from, now) || (to != "" && !ago(to, now)) {
		return f, t, err
	}
	// A range made longer may take a longer step: its start is rounded
	// down to that one (the steps grow with the range, each a whole
	// number of the ones before, so a few rounds settle it).
	for range 4 {
		g := rangeGrain(f, t)
		if f = wholeSteps(f, g); rangeGrain(f, t) == g {
			break
		}
	}
	return f, t, nil
}

// ago says the instant s is counted back from now (see
// units.ParseInstantAgo).
func ago(s string, now time.Time) bool {
	_, ago, err := units.ParseInstantAgo(s, now)
	return err == nil && ago
}

// rangeGrain is what the start of a range counted back from now is
// rounded down to: the step of its charts (profseries.SeriesStep), a
// minute at least where that is more than a scrape interval (an hour: a
// minute, not 20 s).
func rangeGrain(from, to time.Time) time.Duration {
	step := profseries.SeriesStep(from, to)
	if step > scrapeInterval && step < time.Minute {
		step = time.Minute
	}
	return step
}

// resolve reads q, or says in one line what is wrong with it.
func resolve(q web.ServiceQuery, now time.Time) (rq resolvedQuery, err error) {
	if q.Target == "" {
		return rq, errors.New("target: give a label selector, such as {job=\"api\"}; every target is listed under Services")
	}
	if rq.sel, err = profseries.ParseSelector(q.Target); err != nil {
		return rq, errors.New("target: " + err.Error())
	}
	rq.baseSel = rq.sel
	if q.BaseTarget != "" {
		if rq.baseSel, err = profseries.ParseSelector(q.BaseTarget); err != nil {
			return rq, errors.New("base target: " + err.Error())
		}
	}
	if !slices.Contains(profseries.Types, q.Type) {
		return rq, errors.New("type " + strconv.Quote(q.Type) + ": choose one of the profile types listed")
	}
	if rq.from, rq.to, err = parseRange(q.From, q.To, now); err != nil {
		return rq, errors.New("range: " + err.Error())
	}
	if q.BaseFrom != "" || q.BaseTo != "" {
		rq.compare = true
		if rq.baseFrom, rq.baseTo, err = parseRange(q.BaseFrom, q.BaseTo, now); err != nil {
			return rq, errors.New("compared range: " + err.Error())
		}
	}
	switch q.Sort {
	case "", "flat", "cum", "name":
	default:
		return rq, errors.New("sort " + strconv.Quote(q.Sort) + ": sort by flat, cum or name")
	}
	return rq, nil
}

// Service is the page of one service, or of every target a selector
// chooses, over a time range. A query that cannot be read (ErrBadInput)
// or a selector that chooses no stored series (ErrNotFound) is said on
// the page, which keeps the form as typed: a page and an error together.
// A nil page is the dashboard's own failure.
func (d *Dashboard) Service(ctx context.Context, q web.ServiceQuery) (*web.ServicePage, error) {
	now := watchNow()
	rq, err := resolve(q, now)
	if err != nil {
		p := web.NewServicePage(q, now.Add(-time.Hour), now)
		p.Problem = err.Error()
		return p, BadInput(p.Problem)
	}
	p := web.NewServicePage(q, rq.from, rq.to)
	spans, err := d.cfg.Store.SeriesSpans(ctx, q.Type, rq.sel)
	if err != nil {
		return nil, err
	}
	if len(spans) == 0 {
		all, err := d.cfg.Store.SeriesSpans(ctx, "", rq.sel)
		if err != nil {
			return nil, err
		}
		p.Problem = "No stored target matches " + rq.sel.String() + "; every target is listed under Services."
		if len(all) > 0 {
			p.Problem = "No " + q.Type + " profiles are stored for " + rq.sel.String() + ": choose another type."
		}
		return p, NotFound(p.Problem)
	}
	if err := d.fillService(ctx, p, q, rq, spans); err != nil {
		return nil, err
	}
	return p, nil
}

// fillService reads what the service page shows of a query that names
// stored series.
func (d *Dashboard) fillService(ctx context.Context, p *web.ServicePage, q web.ServiceQuery, rq resolvedQuery, spans []profseries.Span) error {
	targets := distinctTargets(spans)
	step := chartStep(rq.from, rq.to, targets)
	releases := web.Releases(profseries.Versions(spans, versionLabel))
	query := profseries.Query{Type: q.Type, Selector: rq.sel, From: rq.from, To: rq.to}
	p.Download = "/api/v1/profiles/merge?" + url.Values{"query": {q.Target}, "type": {q.Type}, "from": {stampOf(rq.from)}, "to": {stampOf(rq.to)}}.Encode()
	p.NowVsHour = nowVsHour(q, rq)
	p.VersionVsPrevious, p.VersionNote = versionVsPrevious(q, rq, spans)

	// The page's parts read the store at once: the charts, the range's
	// profile and what depends on it, and the findings.
	g, gctx := errgroup.WithContext(ctx)
	// The charts read whole steps, as the services' sparklines do: the
	// first and last point are their steps' sums, not a part of them
	// read scrape by scrape.
	charts := make([]web.TimeChart, len(profseries.Gauges))
	chartFrom, chartTo := wholeSteps(rq.from, step), wholeSteps(rq.to.Add(step-1), step)
	for i, gauge := range profseries.Gauges {
		g.Go(func() error {
			pts, err := d.cfg.Store.GaugeSeries(gctx, gauge, rq.sel, chartFrom, chartTo, step)
			charts[i] = web.NewTimeChart(web.GaugeLine{Gauge: gauge, Points: pts, Step: step, Targets: targets}, rq.from, rq.to, releases)
			return err
		})
	}
	empty := false
	g.Go(func() error {
		top, err := d.cfg.Store.Top(gctx, query, profiles.ByFlat, 0)
		if errors.Is(err, store.ErrNoProfiles) {
			empty = true
			return nil
		}
		if err != nil {
			return err
		}
		return d.fillRange(gctx, p, q, rq, query, top, step, releases)
	})
	var findings *analysis.Result
	var findingsErr error
	g.Go(func() error {
		findings, findingsErr = d.RangeFindings(gctx, rq.sel, rq.from, rq.to)
		if errors.Is(findingsErr, ErrNotFound) {
			return nil
		}
		return findingsErr
	})
	if err := g.Wait(); err != nil {
		return err
	}
	p.Charts = append(p.Charts, charts...)
	if empty {
		p.Empty = "No " + q.Type + " profiles of " + rq.sel.String() + " were scraped from " + p.From + " to " + p.To + "."
		if nf, nt, ok := profseries.NearestRange(spans, rq.from, rq.to); ok {
			nq := q
			nq.From, nq.To, nq.BaseFrom, nq.BaseTo = stampOf(nf), stampOf(nt), "", ""
			p.Nearest = nq.Href()
		}
		return nil
	}
	if findingsErr != nil {
		p.FindingsNote = "No profiles in the range to diagnose."
	} else {
		p.Findings, p.CompilerSkipped = findings.Findings, findings.CompilerSkipped
	}
	return nil
}

// fillRange fills what the service page shows of the range's profile,
// top its table: the comparison, the flame graph's addresses and the
// function's series.
func (d *Dashboard) fillRange(ctx context.Context, p *web.ServicePage, q web.ServiceQuery, rq resolvedQuery, query profseries.Query, top *profiles.FuncTable, step time.Duration, releases []web.Release) error {
	p.Top = web.NewTopTable(top, q)
	var base *[2]time.Time
	if rq.compare {
		bq := query
		bq.Selector, bq.From, bq.To = rq.baseSel, rq.baseFrom, rq.baseTo
		diff, err := d.cfg.Store.Diff(ctx, bq, query)
		if errors.Is(err, store.ErrNoProfiles) {
			p.Compare = &web.CompareView{Problem: "The compared range holds no " + q.Type + " profiles of " + rq.baseSel.String() + "."}
		} else if err != nil {
			return err
		} else {
			p.Compare = web.NewCompareView(diff, q, rq.baseFrom, rq.baseTo, rq.from, rq.to)
			base = &[2]time.Time{rq.baseFrom, rq.baseTo}
		}
	}
	fv := web.FlameQuery(q, rq.from, rq.to, base)
	p.Flame = web.ServiceFlamePath + "/flamegraph?" + fv.Encode()
	p.FlameUI = web.ServiceFlamePath + "/top?" + fv.Encode()
	if q.Function != "" {
		pts, err := d.cfg.Store.FunctionSeries(ctx, query, q.Function, step)
		problem := ""
		if errors.Is(err, profseries.ErrNoFunction) {
			problem, err = err.Error(), nil
		}
		if err != nil {
			return err
		}
		p.Function = web.NewFunctionView(q, pts, step, rq.from, rq.to, releases, problem)
	}
	return nil
}

// distinctTargets counts the label sets of spans.
func distinctTargets(spans []profseries.Span) int {
	seen := map[string]bool{}
	for _, s := range spans {
		seen[s.Labels.String()] = true
	}
	return len(seen)
}

func stampOf(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// nowVsHour is the address comparing the range with the same range an
// hour before.
func nowVsHour(q web.ServiceQuery, rq resolvedQuery) string {
	c := q
	c.BaseTarget, c.Function = "", ""
	c.From, c.To = stampOf(rq.from), stampOf(rq.to)
	c.BaseFrom, c.BaseTo = stampOf(rq.from.Add(-time.Hour)), stampOf(rq.to.Add(-time.Hour))
	return c.Href()
}

// versionVsPrevious is the address comparing the latest version the
// selector's series carry (their version label) with the one before, each
// over the time it was scraped; or why there is none.
func versionVsPrevious(q web.ServiceQuery, rq resolvedQuery, spans []profseries.Span) (href, note string) {
	vs := profseries.Versions(spans, versionLabel)
	if len(vs) < 2 {
		if len(vs) == 0 {
			return "", "No " + versionLabel + " label on these series: a deploy shows as a new value of it."
		}
		return "", "One " + versionLabel + " only (" + vs[0].Value + ") in the stored scrapes."
	}
	head, base := vs[len(vs)-1], vs[len(vs)-2]
	sel := rq.sel.Without(versionLabel)
	c := q
	c.Function = ""
	c.Target, c.BaseTarget = sel.With(versionLabel, head.Value).String(), sel.With(versionLabel, base.Value).String()
	c.From, c.To = stampOf(head.First), stampOf(head.Last.Add(time.Second))
	c.BaseFrom, c.BaseTo = stampOf(base.First), stampOf(base.Last.Add(time.Second))
	return c.Href(), base.Value + " → " + head.Value
}

// RangeFindings runs the analysis on every profile type that sel stores
// over [from, to), as a run's analysis, in one of the analyses' slots;
// an ErrNotFound when the range holds no profiles.
func (d *Dashboard) RangeFindings(ctx context.Context, sel profseries.Selector, from, to time.Time) (*analysis.Result, error) {
	release, err := d.cfg.Analyses.Parsing(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	in, err := analysis.FromSeries(ctx, d.cfg.Store, sel, from, to)
	if err != nil {
		return nil, err
	}
	if len(in.Profiles) == 0 {
		return nil, NotFound("no profiles stored for " + sel.String() + " in the range")
	}
	in.Source = analysis.Source{Dir: d.cfg.SourceDir, Confined: true}
	res := analysis.Analyze(ctx, in, analysis.Options{NoCompiler: d.cfg.NoCompiler || d.cfg.SourceDir == ""})
	return res, nil
}

// RangeProfiles are the profiles a service page's flame graph shows: the
// range merged, minus the compared range when there is one.
type RangeProfiles struct {
	Head profseries.Query
	Base *profseries.Query
	// HeadKey and BaseKey name the ranges, to share the views of one.
	HeadKey, BaseKey string
}

// ServiceProfiles reads the ranges of the service page's query q; what
// is wrong with it is an ErrBadInput.
func ServiceProfiles(q web.ServiceQuery, now time.Time) (*RangeProfiles, error) {
	rq, err := resolve(q, now)
	if err != nil {
		return nil, BadInput(err.Error())
	}
	rp := &RangeProfiles{Head: profseries.Query{Type: q.Type, Selector: rq.sel, From: rq.from, To: rq.to}}
	rp.HeadKey = "series " + rq.sel.String() + " " + stampOf(rq.from) + " " + stampOf(rq.to)
	if rq.compare {
		rp.Base = &profseries.Query{Type: q.Type, Selector: rq.baseSel, From: rq.baseFrom, To: rq.baseTo}
		rp.BaseKey = "series " + rq.baseSel.String() + " " + stampOf(rq.baseFrom) + " " + stampOf(rq.baseTo)
	}
	return rp, nil
}

// Profiles merges the ranges of rp, in one of the analyses' slots; an
// ErrNotFound when a range holds no profiles.
func (d *Dashboard) Profiles(ctx context.Context, rp *RangeProfiles) (head, base *profile.Profile, err error) {
	release, err := d.cfg.Analyses.Parsing(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	if head, err = d.cfg.Store.MergedProfile(ctx, rp.Head); err == nil && rp.Base != nil {
		base, err = d.cfg.Store.MergedProfile(ctx, *rp.Base)
	}
	if errors.Is(err, store.ErrNoProfiles) {
		err = NotFound(err.Error())
	}
	return head, base, err
}
