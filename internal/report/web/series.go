package web

import (
	"fmt"
	"html/template"
	"strings"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/history"
)

// A Series is one benchmark metric's history as the API returns it and the
// trend page draws it, with the trend chart kept alongside.
type Series struct {
	history.Series

	// chart is the rendered trend chart, made once per view: for
	// thousands of commits it costs more than everything else on a warm
	// page.
	chartOnce sync.Once
	chart     template.HTML
}

// Chart returns the view's trend chart, drawn on the first call; link
// must depend only on what the view was made from.
func (v *Series) Chart(link func(base, head string) string) template.HTML {
	v.chartOnce.Do(func() { v.chart = TrendChart(&v.Series, link) })
	return v.chart
}

// Changes is change detection's answer to one query, as history.Changes
// gives it, with a view of each series for the charts.
type Changes struct {
	Result *history.Result
	Series []*Series
}

// NewChanges wraps res's series in views.
func NewChanges(res *history.Result) *Changes {
	c := &Changes{Result: res}
	for _, hs := range res.Series {
		c.Series = append(c.Series, &Series{Series: hs})
	}
	return c
}

// Commits counts the commits of every series: what the views cost to keep.
func (c *Changes) Commits() int {
	n := 0
	for _, v := range c.Series {
		n += len(v.Commits)
	}
	return n
}

// PickLine returns the series whose last commit is newest, for a page or
// request that names a metric without its line; when there are others, a
// copy whose first warning names them.
func PickLine(views []*Series) *Series {
	best := views[0]
	last := func(v *Series) time.Time { return v.Commits[len(v.Commits)-1].Time }
	for _, v := range views[1:] {
		if last(v).After(last(best)) {
			best = v
		}
	}
	if len(views) == 1 {
		return best
	}
	var others []string
	for _, v := range views {
		if v != best {
			others = append(others, fmt.Sprintf("branch %s on %s", v.Branch, v.Machine))
		}
	}
	warn := fmt.Sprintf("showing branch %s on machine %s, the latest measured; also recorded: %s (choose a branch and machine)", best.Branch, best.Machine, strings.Join(others, "; "))
	picked := &Series{Series: best.Series}
	picked.Warnings = append([]string{warn}, best.Warnings...)
	return picked
}
