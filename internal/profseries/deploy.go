package profseries

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
)

// VersionLabel is the target label that names the release a target runs.
const VersionLabel = "version"

// DeployOptions set how deploys are found and judged. Zero values mean
// the defaults.
type DeployOptions struct {
	// Type is the profile type compared; default cpu.
	Type string
	// Span bounds each side compared: the scrapes of the old release in
	// the Span before the deploy, of the new one in the Span after;
	// default 30 minutes.
	Span time.Duration
	// Alpha is the Mann–Whitney U test's threshold, per function; default
	// 0.05 divided by the functions tested (Bonferroni).
	Alpha float64
	// MinScrapes is the fewest scrapes each side needs to be judged;
	// default 5.
	MinScrapes int
	// MinChange is the least change of a function's median cum share
	// named, in shares; default 0.01 (one percentage point).
	MinChange float64
	// MinPerRequestChange is the least relative change of the median
	// CPU per request named, where requests are counted; default 0.05
	// (5%).
	MinPerRequestChange float64
	// Rows bounds the changes listed per deploy, largest first; default
	// 10.
	Rows int
}

func (o DeployOptions) withDefaults() DeployOptions {
	if o.Type == "" {
		o.Type = CPU
	}
	if o.Span <= 0 {
		o.Span = 30 * time.Minute
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	if o.MinScrapes <= 0 {
		o.MinScrapes = 5
	}
	if o.MinChange <= 0 {
		o.MinChange = 0.01
	}
	if o.MinPerRequestChange <= 0 {
		o.MinPerRequestChange = 0.05
	}
	if o.Rows <= 0 {
		o.Rows = 10
	}
	return o
}

// A Release is what a service ran: its version label and its main
// binary's build id (either may be unknown, "").
type Release struct {
	Version string `json:"version"`
	BuildID string `json:"build_id"`
}

func (r Release) String() string {
	v := r.Version
	if v == "" {
		v = "unversioned"
	}
	if r.BuildID == "" {
		return v
	}
	id := r.BuildID
	if len(id) > 12 {
		id = id[:12]
	}
	return v + " (build " + id + ")"
}

// A Deploy is one service's change of release and what it did to the
// profile.
type Deploy struct {
	// Service is the label set of the service's targets without version
	// and instance: what stays the same across a deploy.
	Service Labels    `json:"service"`
	At      time.Time `json:"at"`
	Before  Release   `json:"before"`
	After   Release   `json:"after"`
	// BeforeScrapes and AfterScrapes count the scrapes compared on each
	// side; Judged is false when either has fewer than MinScrapes.
	BeforeScrapes int  `json:"before_scrapes"`
	AfterScrapes  int  `json:"after_scrapes"`
	Judged        bool `json:"judged"`
	// Compared names what the deploy was judged by: ComparedPerRequest
	// when both sides' scrapes have request counts, else ComparedShares.
	Compared string `json:"compared"`
	// Basis says what was compared, in words, and why.
	Basis string `json:"basis"`
	// NotPerRequest says why the deploy was not judged per request, when
	// it was not and could have been (it was judged, of CPU profiles).
	NotPerRequest string `json:"not_per_request,omitempty"`
	// PerRequest is the CPU per request before and after, in all and
	// per route; nil unless Compared is ComparedPerRequest.
	PerRequest *DeployPerRequest `json:"per_request,omitempty"`
	// Changes are the functions whose share changed significantly,
	// largest change first: where the profile moved, whichever the
	// basis.
	Changes []DeployChange `json:"changes"`
	// Tested counts the functions tested; Significant those whose
	// change was significant, of which the largest Rows are in Changes.
	Tested      int `json:"tested"`
	Significant int `json:"significant"`
}

// What a deploy was judged by (Deploy.Compared).
const (
	// ComparedPerRequest: CPU seconds per request, the requests counted
	// by the target's middleware over each scrape's window.
	ComparedPerRequest = "cpu_per_request"
	// ComparedShares: each function's share of the profile, which needs
	// no request counts but cannot tell a service that does more per
	// request from one that does the same, faster or slower.
	ComparedShares = "shares"
)

// A DeployChange is one function's share before and after a deploy.
type DeployChange struct {
	Function string `json:"function"`
	// Before and After are the median cum shares per scrape; Delta
	// After minus Before; P the Mann–Whitney U test's p-value.
	Before float64 `json:"before_share"`
	After  float64 `json:"after_share"`
	Delta  float64 `json:"delta"`
	P      float64 `json:"p"`
}

// A DeployReport is every deploy FindDeploys found in one range.
type DeployReport struct {
	Selector  string    `json:"selector"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Type      string    `json:"type"`
	Alpha     float64   `json:"alpha"`
	MinChange float64   `json:"min_change"`
	// MinPerRequestChange is DeployOptions.MinPerRequestChange.
	MinPerRequestChange float64       `json:"min_per_request_change"`
	MinScrapes          int           `json:"min_scrapes"`
	Span                time.Duration `json:"span_ns"`
	Deploys             []Deploy      `json:"deploys"`
}

// serviceKey is a target's labels without those that change from one
// release or instance to the next.
func serviceKey(ls Labels) Labels {
	out := make(Labels, 0, len(ls))
	for _, l := range ls {
		if l.Name != VersionLabel && l.Name != "instance" {
			out = append(out, l)
		}
	}
	return out
}

// FindDeploys finds, in [from, to), every change of release of the
// services sel chooses — a new version label, or a new build id of the
// main binary — and compares the profile of type o.Type before and after
// it (see DeployOptions). Targets are one service when their labels but
// version and instance agree. Latest deploys come first.
func FindDeploys(ctx context.Context, r SeriesReader, sel Selector, from, to time.Time, o DeployOptions) (*DeployReport, error) {
	o = o.withDefaults()
	rep := &DeployReport{Selector: sel.String(), From: from, To: to, Type: o.Type, Alpha: o.Alpha, MinChange: o.MinChange,
		MinPerRequestChange: o.MinPerRequestChange, MinScrapes: o.MinScrapes, Span: o.Span, Deploys: []Deploy{}}
	targets, err := r.SeriesLabels(ctx, o.Type, sel)
	if err != nil {
		return nil, err
	}
	type scrape struct {
		w       Window
		release Release
	}
	services := map[string][]scrape{}
	keys := map[string]Labels{}
	for _, t := range targets {
		ws, err := r.Windows(ctx, Query{Type: o.Type, Selector: Exact(t), From: from, To: to})
		if err != nil {
			return nil, err
		}
		k := serviceKey(t)
		keys[k.String()] = k
		for _, w := range ws {
			services[k.String()] = append(services[k.String()], scrape{w, Release{Version: t.Get(VersionLabel), BuildID: w.Process().BuildID}})
		}
	}
	for key, ss := range services {
		slices.SortStableFunc(ss, func(a, b scrape) int { return a.w.Start.Compare(b.w.Start) })
		// Releases in order of first appearance: each after the first is
		// a deploy.
		var order []Release
		firstSeen := map[Release]time.Time{}
		for _, s := range ss {
			if _, ok := firstSeen[s.release]; !ok {
				firstSeen[s.release] = s.w.Start
				order = append(order, s.release)
			}
		}
		for i := 1; i < len(order); i++ {
			old, cur := order[i-1], order[i]
			at := firstSeen[cur]
			var before, after []Window
			for _, s := range ss {
				switch {
				case s.release == old && s.w.Start.Before(at) && !s.w.Start.Before(at.Add(-o.Span)):
					before = append(before, s.w)
				case s.release == cur && !s.w.Start.Before(at) && s.w.Start.Before(at.Add(o.Span)):
					after = append(after, s.w)
				}
			}
			d, err := compareReleases(before, after, r.Symbols(ctx), o)
			if err != nil {
				return nil, fmt.Errorf("deploy of %s at %s: %w", key, at.Format(time.RFC3339), err)
			}
			d.Service, d.At, d.Before, d.After = keys[key], at, old, cur
			rep.Deploys = append(rep.Deploys, d)
		}
	}
	slices.SortStableFunc(rep.Deploys, func(a, b Deploy) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return cmp.Compare(a.Service.String(), b.Service.String())
	})
	return rep, nil
}

// compareReleases judges a deploy: by CPU per request where both sides'
// scrapes count requests (see comparePerRequest), else by shares alone;
// and, either way, function by function, whether the cum shares of the
// scrapes after differ from those before (Mann–Whitney U).
func compareReleases(before, after []Window, src SymbolSource, o DeployOptions) (Deploy, error) {
	d := Deploy{BeforeScrapes: len(before), AfterScrapes: len(after), Changes: []DeployChange{}, Compared: ComparedShares}
	if len(before) < o.MinScrapes || len(after) < o.MinScrapes {
		d.Basis = sharesBasis(o, "")
		return d, nil
	}
	d.Judged = true
	sy, err := Resolve(src, StackIDs(append(slices.Clone(before), after...)...))
	if err != nil {
		return d, err
	}
	build := func(ws []Window) ([]*profile.Profile, error) {
		out := make([]*profile.Profile, len(ws))
		for i, w := range ws {
			p, err := sy.Profile(w)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	}
	bp, err := build(before)
	if err != nil {
		return d, err
	}
	ap, err := build(after)
	if err != nil {
		return d, err
	}
	if why := perRequestMissing(before, after, o); why != "" {
		d.Basis = sharesBasis(o, why)
		if o.Type == CPU {
			d.NotPerRequest = why
		}
	} else {
		d.Compared, d.Basis = ComparedPerRequest, perRequestBasis
		if d.PerRequest, err = comparePerRequest(before, after, bp, ap, o); err != nil {
			return d, err
		}
	}
	shares := func(ps []*profile.Profile) ([]map[string]float64, error) {
		out := make([]map[string]float64, len(ps))
		for i, p := range ps {
			t, err := profiles.Functions(p, "", nil)
			if err != nil {
				return nil, err
			}
			out[i] = map[string]float64{}
			for _, r := range t.Rows {
				out[i][r.Function] = r.CumShare
			}
		}
		return out, nil
	}
	bs, err := shares(bp)
	if err != nil {
		return d, err
	}
	as, err := shares(ap)
	if err != nil {
		return d, err
	}
	// Functions worth testing: at least half of MinChange in either
	// side's median, so that noise among thousands of tiny functions
	// does not dilute the test.
	names := map[string]bool{}
	for _, side := range [][]map[string]float64{bs, as} {
		for _, m := range side {
			for f := range m {
				names[f] = true
			}
		}
	}
	column := func(side []map[string]float64, f string) []float64 {
		vs := make([]float64, len(side))
		for i, m := range side {
			vs[i] = m[f]
		}
		return vs
	}
	type cand struct {
		f      string
		b, a   []float64
		mb, ma float64
	}
	var cands []cand
	for f := range names {
		b, a := column(bs, f), column(as, f)
		mb, ma := median(slices.Clone(b)), median(slices.Clone(a))
		if math.Max(mb, ma) >= o.MinChange/2 {
			cands = append(cands, cand{f, b, a, mb, ma})
		}
	}
	d.Tested = len(cands)
	alpha := o.Alpha / float64(max(1, len(cands)))
	for _, c := range cands {
		if math.Abs(c.ma-c.mb) < o.MinChange {
			continue
		}
		p := mannWhitney(c.b, c.a, alpha)
		if p >= alpha {
			continue
		}
		d.Changes = append(d.Changes, DeployChange{Function: c.f, Before: c.mb, After: c.ma, Delta: c.ma - c.mb, P: p})
	}
	slices.SortFunc(d.Changes, func(a, b DeployChange) int {
		if c := cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)); c != 0 {
			return c
		}
		return strings.Compare(a.Function, b.Function)
	})
	d.Significant = len(d.Changes)
	if len(d.Changes) > o.Rows {
		d.Changes = d.Changes[:o.Rows]
	}
	return d, nil
}
