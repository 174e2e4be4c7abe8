package server

import (
	"container/list"
	"context"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/store"
)

// A seriesView is one benchmark metric's history as the API returns it and
// the trend page draws it, with the trend chart cached alongside.
type seriesView struct {
	history.Series

	// chart is the rendered trend chart, made once per cached view:
	// for thousands of commits it costs more than everything else on a
	// warm page.
	chartOnce sync.Once
	chart     template.HTML
}

// chartHTML returns the view's trend chart; link must depend only on what
// the view was made from.
func (v *seriesView) chartHTML(link func(base, head string) string) template.HTML {
	v.chartOnce.Do(func() { v.chart = trendChart(v, link) })
	return v.chart
}

// seriesCommit is one commit of a series view.
type seriesCommit = history.Commit

// newSeriesView runs change detection over one metric's points.
func newSeriesView(key store.SeriesKey, points []store.SeriesPoint, opts history.Options) *seriesView {
	v := &seriesView{Series: history.NewSeries(key, points, opts)}
	if len(v.Machines) > 1 {
		v.Warnings = append([]string{fmt.Sprintf("results of %d machines (%s) are mixed: choose one machine", len(v.Machines), strings.Join(v.Machines, ", "))}, v.Warnings...)
	}
	return v
}

// seriesQuery is what a series request asks for.
type seriesQuery struct {
	Key    store.SeriesKey
	Filter store.Filter
	Alpha  float64
}

func (q seriesQuery) cacheKey() string {
	f := q.Filter
	return strings.Join([]string{q.Key.Package, q.Key.Name, q.Key.Unit, f.Branch, f.Machine,
		strconv.FormatInt(f.Since.UnixNano(), 10), strconv.Itoa(f.Limit), strconv.Itoa(int(f.Order)),
		strconv.FormatFloat(q.Alpha, 'g', -1, 64)}, "\x00")
}

// parseFilter reads the filter parameters shared by the read endpoints and
// pages: branch, machine, package and name (regular expressions), unit,
// since (RFC 3339, a date or Unix seconds), limit (the latest N commits or
// runs) and order ("commit", the default, or "insertion").
func parseFilter(q url.Values) (store.Filter, error) {
	f := store.Filter{
		Branch: q.Get("branch"), Machine: q.Get("machine"),
		Package: q.Get("package"), Name: q.Get("name"), Unit: q.Get("unit"),
	}
	if v := q.Get("since"); v != "" {
		if t, err := time.Parse(time.DateOnly, v); err == nil {
			f.Since = t
		} else if t, err := parseTimeParam("since", strings.TrimSpace(q.Get("since"))); err == nil {
			f.Since = t
		} else {
			return f, err
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, badRequest(fmt.Sprintf("limit %q: want a number of commits, 0 for all", v))
		}
		f.Limit = n
	}
	switch q.Get("order") {
	case "", "commit":
	case "insertion":
		f.Order = store.ByInsertion
	default:
		return f, badRequest(fmt.Sprintf("order %q: want commit or insertion", q.Get("order")))
	}
	return f, nil
}

// seriesCache keeps the latest analyses. Change detection over thousands of
// commits costs tens of milliseconds, mostly U tests; an entry is reused
// while the store's version says no benchmark run was added since.
//
// Its size is counted in commits, not entries: a view with its rendered
// chart takes about half a KiB per commit, so a budget of 100,000 commits
// holds about 50 MiB, twenty full histories of 5,000 commits or a hundred
// default pages.
type seriesCache struct {
	mu      sync.Mutex
	max     int        // commits
	size    int        // commits held
	order   *list.List // of *seriesEntry, most recent first
	entries map[string]*list.Element
}

// seriesCacheCommits is the default budget of a seriesCache.
const seriesCacheCommits = 100_000

type seriesEntry struct {
	key     string
	version store.Version
	view    *seriesView
}

func newSeriesCache(max int) *seriesCache {
	return &seriesCache{max: max, order: list.New(), entries: make(map[string]*list.Element)}
}

func (c *seriesCache) get(key string, version store.Version) *seriesView {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	e := el.Value.(*seriesEntry)
	if e.version != version {
		c.remove(el)
		return nil
	}
	c.order.MoveToFront(el)
	return e.view
}

func (c *seriesCache) put(key string, version store.Version, v *seriesView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	if len(v.Commits) > c.max {
		return
	}
	c.entries[key] = c.order.PushFront(&seriesEntry{key, version, v})
	c.size += len(v.Commits)
	for c.size > c.max {
		c.remove(c.order.Back())
	}
}

func (c *seriesCache) remove(el *list.Element) {
	e := el.Value.(*seriesEntry)
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.size -= len(e.view.Commits)
}

// invalidate drops every entry; the version check would drop them one by
// one, this frees their memory at once after an upload.
func (c *seriesCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.entries)
	c.size = 0
}

// series answers a series query, from the cache when nothing changed. A
// metric with no samples matching the filter is an error wrapping
// errNotFound.
func (s *Server) series(ctx context.Context, q seriesQuery) (*seriesView, error) {
	version, err := s.cfg.Store.BenchVersion(ctx)
	if err != nil {
		return nil, err
	}
	ck := q.cacheKey()
	if v := s.cache.get(ck, version); v != nil {
		return v, nil
	}
	points, err := s.cfg.Store.Series(ctx, q.Key, q.Filter)
	if err != nil {
		return nil, err
	}
	if len(points) == 0 {
		return nil, notFound(fmt.Sprintf("no results of %s %s in %s match the filter", q.Key.Name, q.Key.Unit, q.Key.Package))
	}
	v := newSeriesView(q.Key, points, history.Options{Alpha: q.Alpha})
	s.cache.put(ck, version, v)
	return v, nil
}
