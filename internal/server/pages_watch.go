package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/pprofweb"
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
	// sparkPoints and chartPoints are about how many steps a sparkline
	// and a chart of the service page have.
	sparkPoints, chartPoints = 60, 240
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

// pageServices lists every scraped target: its health, the types stored,
// sparklines of CPU, heap in use and goroutines: GET /services.
//
// Query parameters:
//
//	since  the sparklines' range, a duration ago (15m, 1h, 6h, 24h, 7d);
//	       default 6h
func (s *Server) pageServices(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	since := r.URL.Query().Get("since")
	if since == "" {
		since = servicesSince
	}
	now := watchNow()
	from, err := units.ParseInstant(since, now)
	if err != nil || !from.Before(now) {
		s.fail(w, r, http.StatusBadRequest, badRequest("since "+strconv.Quote(since)+": give a duration ago, such as 1h, 24h or 7d"))
		return
	}
	stored, err := s.cfg.Store.ProfileTargets(ctx, "", nil)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	var health []scrape.Health
	if s.cfg.Scraper != nil {
		health = s.cfg.Scraper.Targets()
	}
	targets := serviceTargets(stored, health)
	step := profseries.StepFor(from, now, sparkPoints, scrapeInterval)
	for i := range targets {
		t := &targets[i]
		for _, g := range profseries.Gauges {
			if !slices.Contains(t.Types, g.Type) {
				t.Gauges = append(t.Gauges, web.GaugeLine{Gauge: g, Step: step})
				continue
			}
			pts, err := s.cfg.Store.GaugeSeries(ctx, g, profseries.Exact(t.Labels), from, now, step)
			if err != nil {
				s.fail(w, r, http.StatusInternalServerError, err)
				return
			}
			t.Gauges = append(t.Gauges, web.GaugeLine{Gauge: g, Points: pts, Step: step})
		}
	}
	data := web.NewServicesPage(since, from, now, targets, s.cfg.Scraper != nil)
	s.pages.render(w, http.StatusOK, "services", "Services", "services", data, start)
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

// serviceQuery reads the service page's state from the request.
func serviceQuery(r *http.Request) web.ServiceQuery {
	v := r.URL.Query()
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
	if rq.from, rq.to, err = profseries.ParseRange("", q.From, q.To, now); err != nil {
		return rq, errors.New("range: " + err.Error())
	}
	if q.BaseFrom != "" || q.BaseTo != "" {
		rq.compare = true
		if rq.baseFrom, rq.baseTo, err = profseries.ParseRange("", q.BaseFrom, q.BaseTo, now); err != nil {
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

// pageService shows one service, or every target a selector chooses, over
// a time range: GET /services/view.
//
// Query parameters:
//
//	target     a label selector, {job="api",instance="10.0.0.1:6060"}
//	type       the profile type of the flame graph and table (default cpu)
//	from, to   the range: durations ago (1h) or instants; default the
//	           last hour
//	base_from, base_to  compare the range with this one
//	base_target         the compared range's selector, when it differs
//	fn         a function whose share over the range is drawn
//	sort       the table's order: flat (default), cum or name
//	search     show the table's functions whose name holds this
//
// A query that cannot be read is answered 400 with the form as typed and
// what is wrong; a selector that chooses no stored series, 404 the same.
func (s *Server) pageService(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	q := serviceQuery(r)
	now := watchNow()
	rq, err := resolve(q, now)
	if err != nil {
		p := web.NewServicePage(q, now.Add(-time.Hour), now)
		p.Problem = err.Error()
		s.pages.render(w, http.StatusBadRequest, "service", "Service", "services", p, start)
		return
	}
	p := web.NewServicePage(q, rq.from, rq.to)
	spans, err := s.spans(ctx, q.Type, rq.sel)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	if len(spans) == 0 {
		all, err := s.spans(ctx, "", rq.sel)
		if err != nil {
			s.fail(w, r, http.StatusInternalServerError, err)
			return
		}
		p.Problem = "No stored target matches " + rq.sel.String() + "; every target is listed under Services."
		if len(all) > 0 {
			p.Problem = "No " + q.Type + " profiles are stored for " + rq.sel.String() + ": choose another type."
		}
		s.pages.render(w, http.StatusNotFound, "service", "Service", "services", p, start)
		return
	}
	if err := s.fillService(ctx, p, q, rq, spans); err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	s.pages.render(w, http.StatusOK, "service", "Service "+rq.sel.String(), "services", p, start)
}

// spans lists the time the stored series of typ ("" every type) that sel
// chooses cover.
func (s *Server) spans(ctx context.Context, typ string, sel profseries.Selector) ([]profseries.Span, error) {
	ts, err := s.cfg.Store.ProfileTargets(ctx, typ, sel)
	if err != nil {
		return nil, err
	}
	out := make([]profseries.Span, len(ts))
	for i, t := range ts {
		out[i] = profseries.Span{Labels: t.Labels, First: t.First, Last: t.Last}
	}
	return out, nil
}

// fillService reads what the service page shows of a query that names
// stored series.
func (s *Server) fillService(ctx context.Context, p *web.ServicePage, q web.ServiceQuery, rq resolvedQuery, spans []profseries.Span) error {
	targets := distinctTargets(spans)
	step := profseries.StepFor(rq.from, rq.to, chartPoints, scrapeInterval)
	for _, g := range profseries.Gauges {
		pts, err := s.cfg.Store.GaugeSeries(ctx, g, rq.sel, rq.from, rq.to, step)
		if err != nil {
			return err
		}
		p.Charts = append(p.Charts, web.NewTimeChart(web.GaugeLine{Gauge: g, Points: pts, Step: step, Targets: targets}, rq.from, rq.to))
	}
	query := profseries.Query{Type: q.Type, Selector: rq.sel, From: rq.from, To: rq.to}
	p.Download = "/api/v1/profiles/merge?" + url.Values{"query": {q.Target}, "type": {q.Type}, "from": {stampOf(rq.from)}, "to": {stampOf(rq.to)}}.Encode()
	p.NowVsHour = s.nowVsHour(q, rq)
	p.VersionVsPrevious, p.VersionNote = versionVsPrevious(q, rq, spans)

	top, err := s.cfg.Store.Top(ctx, query, profiles.ByFlat, 0)
	if errors.Is(err, store.ErrNoProfiles) {
		p.Empty = "No " + q.Type + " profiles of " + rq.sel.String() + " were scraped from " + p.From + " to " + p.To + "."
		if nf, nt, ok := profseries.NearestRange(spans, rq.from, rq.to); ok {
			nq := q
			nq.From, nq.To, nq.BaseFrom, nq.BaseTo = stampOf(nf), stampOf(nt), "", ""
			p.Nearest = nq.Href()
		}
		return nil
	}
	if err != nil {
		return err
	}
	p.Top = web.NewTopTable(top, q)
	var base *[2]time.Time
	if rq.compare {
		bq := query
		bq.Selector, bq.From, bq.To = rq.baseSel, rq.baseFrom, rq.baseTo
		d, err := s.cfg.Store.Diff(ctx, bq, query)
		if errors.Is(err, store.ErrNoProfiles) {
			p.Compare = &web.CompareView{Problem: "The compared range holds no " + q.Type + " profiles of " + rq.baseSel.String() + "."}
		} else if err != nil {
			return err
		} else {
			p.Compare = web.NewCompareView(d, q, rq.baseFrom, rq.baseTo, rq.from, rq.to)
			base = &[2]time.Time{rq.baseFrom, rq.baseTo}
		}
	}
	fv := web.FlameQuery(q, rq.from, rq.to, base)
	p.Flame = web.ServiceFlamePath + "/flamegraph?" + fv.Encode()
	p.FlameUI = web.ServiceFlamePath + "/top?" + fv.Encode()
	if q.Function != "" {
		pts, err := s.cfg.Store.FunctionSeries(ctx, query, q.Function, step)
		problem := ""
		if errors.Is(err, profseries.ErrNoFunction) {
			problem, err = err.Error(), nil
		}
		if err != nil {
			return err
		}
		p.Function = web.NewFunctionView(q, pts, step, rq.from, rq.to, problem)
	}
	return s.serviceFindings(ctx, p, rq)
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
func (s *Server) nowVsHour(q web.ServiceQuery, rq resolvedQuery) string {
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

// serviceFindings runs the analysis on every profile type of the range,
// as the run page's analysis, in one of the server's analysis slots.
func (s *Server) serviceFindings(ctx context.Context, p *web.ServicePage, rq resolvedQuery) error {
	release, err := s.analyses.Parsing(ctx)
	if err != nil {
		return err
	}
	defer release()
	in, err := analysis.FromSeries(ctx, s.cfg.Store, rq.sel, rq.from, rq.to)
	if err != nil {
		return err
	}
	if len(in.Profiles) == 0 {
		p.FindingsNote = "No profiles in the range to diagnose."
		return nil
	}
	in.Source = analysis.Source{Dir: s.cfg.SourceDir, Confined: true}
	noCompiler := s.cfg.NoCompiler || s.cfg.SourceDir == ""
	res := analysis.Analyze(ctx, in, analysis.Options{NoCompiler: noCompiler})
	p.Findings, p.CompilerSkipped = res.Findings, res.CompilerSkipped
	return nil
}

// pageServicePprof serves pprof's web UI for the merged profile of a
// range, or a range minus another: GET /services/pprof/{view}, view as
// for pageRunPprof, with the service page's target, base_target, type,
// from, to, base_from and base_to (instants, as the page links them)
// beside pprof's own parameters.
func (s *Server) pageServicePprof(w http.ResponseWriter, r *http.Request) {
	view := r.PathValue("view")
	if s.graphvizMissing(w, r, view) {
		return
	}
	q := serviceQuery(r)
	rq, err := resolve(q, time.Now())
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, badRequest(err.Error()))
		return
	}
	head := profseries.Query{Type: q.Type, Selector: rq.sel, From: rq.from, To: rq.to}
	key := pprofweb.Key{Head: "series " + head.Selector.String() + " " + stampOf(rq.from) + " " + stampOf(rq.to), Kind: q.Type}
	var base *profseries.Query
	if rq.compare {
		base = &profseries.Query{Type: q.Type, Selector: rq.baseSel, From: rq.baseFrom, To: rq.baseTo}
		key.Base = "series " + base.Selector.String() + " " + stampOf(rq.baseFrom) + " " + stampOf(rq.baseTo)
	}
	ui, err := s.pprof.Get(key, func() (hp, bp *profile.Profile, err error) {
		release, err := s.analyses.Parsing(r.Context())
		if err != nil {
			return nil, nil, err
		}
		defer release()
		if hp, err = s.cfg.Store.MergedProfile(r.Context(), head); err == nil && base != nil {
			bp, err = s.cfg.Store.MergedProfile(r.Context(), *base)
		}
		return hp, bp, err
	})
	if errors.Is(err, store.ErrNoProfiles) {
		s.fail(w, r, http.StatusNotFound, notFound(err.Error()))
		return
	}
	if err != nil {
		s.fail(w, r, pprofStatus(err), err)
		return
	}
	if !ui.Serve(w, r, web.ServiceFlamePath, view) {
		s.fail(w, r, http.StatusNotFound, notFound("pprof has no view "+strconv.Quote(view)))
	}
}
