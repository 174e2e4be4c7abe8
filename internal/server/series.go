package server

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/store"
)

// seriesQuery is what a series request asks for: one metric, on one line
// unless the filter leaves several.
type seriesQuery struct {
	Key    store.SeriesKey
	Filter store.Filter
	Alpha  float64
	// Window is history.Query's: 0 for history.DefaultWindow.
	Window int
}

// changesQuery is the history query of one metric's series.
func (q seriesQuery) changesQuery() history.Query {
	f := q.Filter
	f.Package, f.Name, f.Unit = exactRegexp(q.Key.Package), exactRegexp(q.Key.Name), q.Key.Unit
	return history.Query{Filter: f, Window: q.Window, Options: history.Options{Alpha: q.Alpha}}
}

// cacheKey identifies a history query in the cache.
func cacheKey(q history.Query) string {
	f := q.Filter
	return strings.Join([]string{f.Package, f.Name, f.Unit, f.Branch, f.Machine,
		strconv.FormatInt(f.Since.UnixNano(), 10), strconv.Itoa(q.Window),
		strconv.FormatFloat(q.Options.Alpha, 'g', -1, 64)}, "\x00")
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
	view    *web.Changes
	commits int
}

func newSeriesCache(max int) *seriesCache {
	return &seriesCache{max: max, order: list.New(), entries: make(map[string]*list.Element)}
}

func (c *seriesCache) get(key string, version store.Version) *web.Changes {
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

func (c *seriesCache) put(key string, version store.Version, v *web.Changes) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	n := v.Commits()
	if n > c.max {
		return
	}
	c.entries[key] = c.order.PushFront(&seriesEntry{key, version, v, n})
	c.size += n
	for c.size > c.max {
		c.remove(c.order.Back())
	}
}

func (c *seriesCache) remove(el *list.Element) {
	e := el.Value.(*seriesEntry)
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.size -= e.commits
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

// changes answers a history query as history.Changes does, from the cache
// when nothing changed. A query no benchmark matches is an error wrapping
// errNotFound.
func (s *Server) changes(ctx context.Context, q history.Query) (*web.Changes, error) {
	version, err := s.cfg.Store.BenchVersion(ctx)
	if err != nil {
		return nil, err
	}
	ck := cacheKey(q)
	if v := s.cache.get(ck, version); v != nil {
		return v, nil
	}
	res, err := history.Changes(ctx, s.cfg.Store, q)
	if errors.Is(err, history.ErrNoBenchmarks) {
		return nil, notFound("no recorded benchmark matches the filter")
	}
	if err != nil {
		return nil, err
	}
	v := web.NewChanges(res)
	s.cache.put(ck, version, v)
	return v, nil
}

// series answers a series query: the metric's series on the query's branch
// and machine, or when the filter leaves several lines, the one with the
// newest commit, with a warning naming the others (web.PickLine). A metric with no
// samples matching the filter is an error wrapping errNotFound.
func (s *Server) series(ctx context.Context, q seriesQuery) (*web.Series, error) {
	cv, err := s.changes(ctx, q.changesQuery())
	if err != nil && statusOf(err) != http.StatusNotFound {
		return nil, err
	}
	if cv == nil || len(cv.Series) == 0 {
		return nil, notFound(fmt.Sprintf("no results of %s %s in %s match the filter", q.Key.Name, q.Key.Unit, q.Key.Package))
	}
	return web.PickLine(cv.Series), nil
}
