package profseries

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
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

// A ProcessSpan is the time one series was scraped from one process over
// a range, as the store records it of its blocks (their starts and ends
// and processes, no samples read).
type ProcessSpan struct {
	Target  Labels
	Process Process
	// First is the start of the first block in the range, Last the end
	// of the last.
	First, Last time.Time
}

// Spanned is the time spans cover together: the earliest First and the
// latest Last; zero times for none.
func Spanned(spans []ProcessSpan) (first, last time.Time) {
	for i, sp := range spans {
		if i == 0 {
			first, last = sp.First, sp.Last
			continue
		}
		first, last = minTime(first, sp.First), maxTime(last, sp.Last)
	}
	return first, last
}

// deploySideScrapes bounds the scrapes compared on each side of a deploy:
// enough for the U test to name a change of a point of share among
// thousands of functions, and few enough that a deploy of a fleet of
// hundreds of targets is judged in the time of a page.
const deploySideScrapes = 60

// deploySides says in words which scrapes a deploy compares (keep it in
// step with deploySideScrapes).
const deploySides = "at most 60 scrapes a side, spread over the targets and the span"

// FindDeploys finds, in [from, to), every change of release of the
// services sel chooses — a new version label, or a new build id of the
// main binary — and compares the profile of type o.Type before and after
// it (see DeployOptions). Targets are one service when their labels but
// version and instance agree. Latest deploys come first.
//
// Releases are found from the processes the store records of each
// series' blocks, without decoding them; only the scrapes compared are
// read: at most deploySideScrapes a side, spread over the targets that
// ran the release and over the Span (each target its own slice of it),
// so a deploy costs the same whatever the size of the fleet.
func FindDeploys(ctx context.Context, r SeriesReader, sel Selector, from, to time.Time, o DeployOptions) (*DeployReport, error) {
	o = o.withDefaults()
	rep := &DeployReport{Selector: sel.String(), From: from, To: to, Type: o.Type, Alpha: o.Alpha, MinChange: o.MinChange,
		MinPerRequestChange: o.MinPerRequestChange, MinScrapes: o.MinScrapes, Span: o.Span, Deploys: []Deploy{}}
	spans, err := r.ProcessSpans(ctx, Query{Type: o.Type, Selector: sel, From: from, To: to})
	if err != nil {
		return nil, err
	}
	type run struct {
		target      Labels
		release     Release
		first, last time.Time
	}
	services := map[string][]run{}
	keys := map[string]Labels{}
	for _, sp := range spans {
		k := serviceKey(sp.Target)
		keys[k.String()] = k
		services[k.String()] = append(services[k.String()], run{sp.Target, Release{Version: sp.Target.Get(VersionLabel), BuildID: sp.Process.BuildID}, sp.First, sp.Last})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	var slots []*Deploy
	for key, runs := range services {
		slices.SortStableFunc(runs, func(a, b run) int { return a.first.Compare(b.first) })
		// Releases in order of first appearance: each after the first is
		// a deploy.
		var order []Release
		firstSeen := map[Release]time.Time{}
		for _, s := range runs {
			if _, ok := firstSeen[s.release]; !ok {
				firstSeen[s.release] = s.first
				order = append(order, s.release)
			}
		}
		// side reads the scrapes of release rel starting in [from, to).
		side := func(rel Release, from, to time.Time) ([]Window, error) {
			// The release's targets in the side, each with the time it
			// was scraped there.
			var targets []sideTarget
			index := map[string]int{}
			for _, s := range runs {
				if s.release != rel || !s.first.Before(to) || !s.last.After(from) {
					continue
				}
				k := s.target.String()
				i, ok := index[k]
				if !ok {
					i = len(targets)
					index[k] = i
					targets = append(targets, sideTarget{s.target, maxTime(from, s.first), minTime(to, s.last)})
				}
				targets[i].from, targets[i].to = minTime(targets[i].from, maxTime(from, s.first)), maxTime(targets[i].to, minTime(to, s.last))
			}
			return sideWindows(gctx, r, o.Type, rel, targets)
		}
		for i := 1; i < len(order); i++ {
			old, cur := order[i-1], order[i]
			at := firstSeen[cur]
			// Each side within the range, as the scrapes compared.
			bf, at2 := maxTime(from, at.Add(-o.Span)), minTime(to, at.Add(o.Span))
			// Judged with every change kept, so that a judgement serves
			// any Rows.
			all := o
			all.Rows = math.MaxInt
			ck := deployKey{r, all, key, old, cur, bf, at, at2}
			slot := new(Deploy)
			slots = append(slots, slot)
			// Deploys not judged yet are judged side by side, each
			// reading its own scrapes.
			g.Go(func() error {
				d, ok := judged.get(ck)
				if kept, isKeeper := r.(DeployKeeper); !ok && isKeeper {
					var err error
					if d, ok, err = kept.KeptDeploy(gctx, ck.String()); err != nil {
						return err
					}
					if ok {
						judged.put(ck, d)
					}
				}
				if !ok {
					before, err := side(old, bf, at)
					if err != nil {
						return err
					}
					after, err := side(cur, at, at2)
					if err != nil {
						return err
					}
					d, err = compareReleases(before, after, r.Symbols(gctx), all)
					if err != nil {
						return fmt.Errorf("deploy of %s at %s: %w", key, at.Format(time.RFC3339), err)
					}
					d.Service, d.At, d.Before, d.After = keys[key], at, old, cur
					// A deploy whose after side has ended is judged once:
					// the scrapes it compared are stored for good.
					if at2.Equal(at.Add(o.Span)) && time.Since(at2) > deploySettled {
						judged.put(ck, d)
						if kept, ok := r.(DeployKeeper); ok {
							if err := kept.KeepDeploy(gctx, ck.String(), at, d); err != nil {
								return err
							}
						}
					}
				}
				if len(d.Changes) > o.Rows {
					d.Changes = d.Changes[:o.Rows]
				}
				*slot = d
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, d := range slots {
		rep.Deploys = append(rep.Deploys, *d)
	}
	slices.SortStableFunc(rep.Deploys, func(a, b Deploy) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return cmp.Compare(a.Service.String(), b.Service.String())
	})
	return rep, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// deploySettled is how long after a deploy's after side ends its scrapes
// are taken to be all stored: a scraper stores a scrape within an
// interval or two of its start.
const deploySettled = 5 * time.Minute

// A deployKey names one judgement of a deploy: the store read, the
// options, the service, the releases and the sides' bounds.
type deployKey struct {
	r             SeriesReader
	o             DeployOptions
	service       string
	before, after Release
	from, at, to  time.Time
}

// String is the key's judgement's name beyond this process (see
// DeployKeeper): all but the store, and the version of the judging.
func (k deployKey) String() string {
	return fmt.Sprintf("v%d %+v %s %+v→%+v %d %d %d", deployJudging, k.o, k.service, k.before, k.after, k.from.UnixNano(), k.at.UnixNano(), k.to.UnixNano())
}

// deployJudging is the version of how deploys are judged: a change of
// what compareReleases makes of the same scrapes takes a new one, so that
// no judgement a store keeps from before is served.
const deployJudging = 1

// A DeployKeeper is a SeriesReader that keeps judgements of deploys
// whose sides are stored for good (see FindDeploys) beyond the life of a
// process: a deploy judged once — by a scraper's pass, a page, the API —
// is read, not judged again, by every later one, whatever process asks.
type DeployKeeper interface {
	// KeptDeploy returns the judgement kept under key, if any.
	KeptDeploy(ctx context.Context, key string) (Deploy, bool, error)
	// KeepDeploy keeps d, the judgement of a deploy at at, under key.
	KeepDeploy(ctx context.Context, key string, at time.Time, d Deploy) error
}

// deployCache keeps the judgements of deploys whose sides are stored for
// good, so that a page listing them (the home page, on every load) judges
// each once. It holds at most deployCacheSize; when full it starts again.
type deployCache struct {
	mu sync.Mutex
	m  map[deployKey]Deploy
}

const deployCacheSize = 1024

var judged deployCache

func (c *deployCache) get(k deployKey) (Deploy, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[k]
	if ok {
		d.Changes = slices.Clone(d.Changes)
	}
	return d, ok
}

func (c *deployCache) put(k deployKey, d Deploy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= deployCacheSize {
		c.m = map[deployKey]Deploy{}
	}
	d.Changes = slices.Clone(d.Changes)
	c.m[k] = d
}

// A sideTarget is one target of a side of a deploy, and the time it was
// scraped in that side.
type sideTarget struct {
	labels   Labels
	from, to time.Time
}

// sideWindows reads the scrapes of typ of release rel of targets: each of
// up to deploySideScrapes targets (spread over the list) reads its own
// slice of the time it was scraped (the j-th of k targets its j-th k-th),
// and the scrapes read are thinned, evenly in time, to deploySideScrapes.
func sideWindows(ctx context.Context, r SeriesReader, typ string, rel Release, targets []sideTarget) ([]Window, error) {
	k := min(len(targets), deploySideScrapes)
	var out []Window
	for j := range k {
		t := targets[j*len(targets)/k]
		span := int64(t.to.Sub(t.from))
		f := t.from.Add(time.Duration(span * int64(j) / int64(k)))
		e := t.from.Add(time.Duration(span * int64(j+1) / int64(k)))
		if j == k-1 {
			e = t.to.Add(time.Nanosecond) // the last block starts before to
		}
		ws, err := r.Windows(ctx, Query{Type: typ, Selector: Exact(t.labels), From: f, To: e})
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			if w.Process().BuildID == rel.BuildID {
				out = append(out, w)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Window) int { return a.Start.Compare(b.Start) })
	if len(out) <= deploySideScrapes {
		return out, nil
	}
	thin := make([]Window, deploySideScrapes)
	for i := range thin {
		thin[i] = out[i*len(out)/deploySideScrapes]
	}
	return thin, nil
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
	ids := StackIDs(append(slices.Clone(before), after...)...)
	sy, err := Resolve(src, ids)
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
		if d.PerRequest, err = comparePerRequest(before, after, sy, o); err != nil {
			return d, err
		}
	}
	// Each scrape's cum shares, by function, as profiles.Functions
	// ranks the scrape's profile: the stacks are placed once for both
	// sides.
	pl, err := place(sy, ids)
	if err != nil {
		return d, err
	}
	shares := func(ws []Window) ([][]float64, error) {
		out := make([][]float64, len(ws))
		for i, w := range ws {
			if out[i], err = pl.cumShares(w, ""); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	bs, err := shares(before)
	if err != nil {
		return d, err
	}
	as, err := shares(after)
	if err != nil {
		return d, err
	}
	column := func(side [][]float64, f int) []float64 {
		vs := make([]float64, len(side))
		for i, shares := range side {
			vs[i] = shares[f]
		}
		return vs
	}
	type cand struct {
		f      string
		b, a   []float64
		mb, ma float64
	}
	// Functions worth testing: at least half of MinChange in either
	// side's median, so that noise among thousands of tiny functions
	// does not dilute the test.
	var cands []cand
	for f, name := range pl.names {
		b, a := column(bs, f), column(as, f)
		mb, ma := median(slices.Clone(b)), median(slices.Clone(a))
		if math.Max(mb, ma) >= o.MinChange/2 {
			cands = append(cands, cand{name, b, a, mb, ma})
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

// SeriesEdges are the starts of one series' first and last blocks in a
// range, as the store keeps them (read from its keys, no block decoded):
// the instants of its first and last snapshot there.
type SeriesEdges struct {
	Target      Labels
	First, Last time.Time
}

// A SeriesInstant names the scrape of one series that starts at one
// instant.
type SeriesInstant struct {
	Target Labels
	At     time.Time
}
