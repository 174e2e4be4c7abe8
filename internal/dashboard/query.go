package dashboard

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/store"
)

// ParseFilter reads the filter parameters shared by the read endpoints and
// pages: branch, machine, package and name (regular expressions), unit,
// since (RFC 3339, a date or Unix seconds), limit (the latest N commits or
// runs) and order ("commit", the default, or "insertion").
func ParseFilter(q url.Values) (store.Filter, error) {
	f := store.Filter{
		Branch: q.Get("branch"), Machine: q.Get("machine"),
		Package: q.Get("package"), Name: q.Get("name"), Unit: q.Get("unit"),
	}
	if v := q.Get("since"); v != "" {
		if t, err := time.Parse(time.DateOnly, v); err == nil {
			f.Since = t
		} else if t, err := parseTime("since", strings.TrimSpace(q.Get("since"))); err == nil {
			f.Since = t
		} else {
			return f, err
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, BadInput(fmt.Sprintf("limit %q: want a number of commits, 0 for all", v))
		}
		f.Limit = n
	}
	switch q.Get("order") {
	case "", "commit":
	case "insertion":
		f.Order = store.ByInsertion
	default:
		return f, BadInput(fmt.Sprintf("order %q: want commit or insertion", q.Get("order")))
	}
	return f, nil
}

// parseTime reads the time parameter name given as RFC 3339 or Unix
// seconds; absent is the zero time.
func parseTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if sec, err := strconv.ParseInt(v, 10, 64); err == nil && sec > 0 {
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Time{}, BadInput(fmt.Sprintf("%s %q: want RFC 3339 (2025-03-01T12:00:00Z) or Unix seconds", name, v))
}

// parseAlpha reads the U test's significance level, default 0.05.
func parseAlpha(q url.Values) (float64, error) {
	v := q.Get("alpha")
	if v == "" {
		return 0.05, nil
	}
	a, err := strconv.ParseFloat(v, 64)
	if err != nil || !(a > 0 && a < 1) {
		return 0, BadInput(fmt.Sprintf("alpha %q: want a number between 0 and 1", v))
	}
	return a, nil
}

// A SeriesQuery is what a series request asks for: one metric, on one
// line unless the filter leaves several.
type SeriesQuery struct {
	Key    store.SeriesKey
	Filter store.Filter
	Alpha  float64
	// Window is history.Query's: 0 for history.DefaultWindow.
	Window int
}

// changesQuery is the history query of one metric's series.
func (q SeriesQuery) changesQuery() history.Query {
	f := q.Filter
	f.Package, f.Name, f.Unit = exactRegexp(q.Key.Package), exactRegexp(q.Key.Name), q.Key.Unit
	return history.Query{Filter: f, Window: q.Window, Options: history.Options{Alpha: q.Alpha}}
}

// ParseSeriesQuery reads a series request's parameters: package, name
// and unit naming the metric (required), the filter's branch, machine
// and since, limit as the window judged (0 for all) and alpha.
func ParseSeriesQuery(qv url.Values) (SeriesQuery, error) {
	var q SeriesQuery
	q.Key = store.SeriesKey{Package: qv.Get("package"), Name: qv.Get("name"), Unit: qv.Get("unit")}
	if q.Key.Name == "" || q.Key.Unit == "" {
		return q, BadInput("name a metric: ?package=IMPORTPATH&name=BENCHMARK&unit=UNIT (see /api/v1/benchmarks)")
	}
	f, err := ParseFilter(qv)
	if err != nil {
		return q, err
	}
	// package, name and unit name the metric here; they are not
	// patterns.
	f.Package, f.Name, f.Unit = "", "", ""
	switch {
	case !qv.Has("limit"):
	case f.Limit == 0:
		q.Window = history.AllCommits
	default:
		q.Window = f.Limit
	}
	f.Limit, f.Order = 0, store.ByCommitTime
	q.Filter = f
	if q.Alpha, err = parseAlpha(qv); err != nil {
		return q, err
	}
	return q, nil
}

// A CompareQuery is what a comparison of two commits asks for.
type CompareQuery struct {
	Base, Head string
	Filter     store.Filter
	Alpha      float64
}

// ParseCompareQuery reads base and head (commit refs, required) with the
// filter parameters and alpha.
func ParseCompareQuery(q url.Values) (CompareQuery, error) {
	cq := CompareQuery{Base: strings.TrimSpace(q.Get("base")), Head: strings.TrimSpace(q.Get("head"))}
	if cq.Base == "" || cq.Head == "" {
		return cq, BadInput("give two commits: ?base=HASH&head=HASH (a unique prefix of at least 4 characters will do)")
	}
	var err error
	if cq.Filter, err = ParseFilter(q); err != nil {
		return cq, err
	}
	if cq.Alpha, err = parseAlpha(q); err != nil {
		return cq, err
	}
	return cq, nil
}

// ParseReportOptions reads the options of a run's report: route, top and
// all.
func ParseReportOptions(q url.Values) (profiles.Options, error) {
	opts := profiles.Options{Route: q.Get("route")}
	if v := q.Get("top"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return opts, BadInput(fmt.Sprintf("top %q: want a number of rows, 1 or more", v))
		}
		opts.Top = n
	}
	if v := q.Get("all"); v != "" {
		all, err := strconv.ParseBool(v)
		if err != nil {
			return opts, BadInput(fmt.Sprintf("all %q: want true or false", v))
		}
		opts.All = all
	}
	return opts, nil
}

// exactRegexp is a regular expression matching exactly s, for filters
// that take patterns but are given one value from a menu.
func exactRegexp(s string) string {
	if s == "" {
		return ""
	}
	return "^" + regexp.QuoteMeta(s) + "$"
}
