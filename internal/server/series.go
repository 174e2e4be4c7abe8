package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// changes answers a history query as history.Changes does, from the cache
// when nothing changed. A query no benchmark matches is an error wrapping
// errNotFound.
func (s *Server) changes(ctx context.Context, q history.Query) (*web.Changes, error) {
	version, err := s.cfg.Store.BenchVersion(ctx)
	if err != nil {
		return nil, err
	}
	if v := s.cache.Get(q, version); v != nil {
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
	s.cache.Put(q, version, v)
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
