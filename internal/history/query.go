package history

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/perfscope/perfscope/internal/store"
)

// DefaultWindow is how many commits of each series change detection looks
// at unless asked otherwise: the latest 100. 'perfscope history', the
// dashboard's home page, its benchmark list, its trend pages and the series
// API all judge this window by default, so they mark the same commits with
// the same numbers. A series' noise is estimated over its window, so a
// longer window may judge a commit near the noise threshold differently.
const DefaultWindow = 100

// AllCommits as Query.Window looks at every recorded commit.
const AllCommits = -1

// A Line is where a series is measured: one branch on one machine
// (hostname). Results of different machines are not comparable, and the
// commit before one on a branch is not the one before it on another.
type Line struct {
	Branch  string `json:"branch"`
	Machine string `json:"machine"`
}

// A Query selects the series Changes judges.
type Query struct {
	// Filter selects benchmarks, units, lines and commits: Branch and
	// Machine keep the lines on that branch and machine, Since the
	// commits from then on; Package and Name are regular expressions.
	// Its Limit and Order are not used: Window says how many commits,
	// and a series is in commit order.
	Filter store.Filter
	// Window is how many of each series' latest commits are judged: 0
	// is DefaultWindow, AllCommits every one.
	Window int
	// Options tune change detection.
	Options Options
}

// window is q's number of commits per series, 0 for all.
func (q Query) window() int {
	switch {
	case q.Window == 0:
		return DefaultWindow
	case q.Window < 0:
		return 0
	}
	return q.Window
}

// A Result is Changes' answer: the series the query selects, one per
// benchmark metric and line, each with the commits marked changed.
type Result struct {
	Series []Series `json:"series"`
	// Window is how many latest commits of each series were judged; 0
	// means all.
	Window int `json:"window"`
	// Filters describe the query's filters in words ("branch main"),
	// so that whoever shows the result can say what was left out.
	Filters []string `json:"filters,omitempty"`
}

// A Source is where stored series come from; a store.Store is one.
type Source interface {
	Commits(ctx context.Context, f store.Filter) ([]store.Commit, error)
	Benchmarks(ctx context.Context, f store.Filter) ([]store.Benchmark, error)
	Series(ctx context.Context, key store.SeriesKey, f store.Filter) ([]store.SeriesPoint, error)
}

// Changes is change detection over stored history: every benchmark metric
// q selects, one series per branch and machine it was measured on, each
// judged by DetectChanges over its latest q.Window commits in commit order.
// It is the one answer to "what changed" that the CLI and every page of the
// dashboard show. Series come in the store's order of benchmarks and
// units, then by branch and machine; series without points are left out.
// When no benchmark matches at all, the error is ErrNoBenchmarks.
//
// Commits are ordered by committer date within a branch, which is the
// branch's first-parent order as long as its history is linear; runs on no
// branch (a detached checkout) form a line of their own.
func Changes(ctx context.Context, src Source, q Query) (*Result, error) {
	f := q.Filter
	f.Limit, f.Order = 0, store.ByCommitTime
	res := &Result{Window: q.window(), Filters: describeFilter(f)}
	benches, err := src.Benchmarks(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list benchmarks: %w", err)
	}
	if len(benches) == 0 {
		return nil, ErrNoBenchmarks
	}
	lines, err := listLines(ctx, src, f)
	if err != nil {
		return nil, err
	}
	for _, b := range benches {
		for _, u := range b.Units {
			key := store.SeriesKey{Package: b.Package, Name: b.Name, Unit: u}
			for _, l := range lines {
				s, ok, err := lineSeries(ctx, src, key, l, f, res.Window, q.Options)
				if err != nil {
					return nil, err
				}
				if ok {
					res.Series = append(res.Series, s)
				}
			}
		}
	}
	return res, nil
}

// lineSeries reads and judges one metric's series on line l.
func lineSeries(ctx context.Context, src Source, key store.SeriesKey, l Line, f store.Filter, window int, opts Options) (Series, bool, error) {
	f.Branch, f.Machine, f.Limit = l.Branch, l.Machine, window
	points, err := src.Series(ctx, key, f)
	if err != nil {
		return Series{}, false, fmt.Errorf("read series %s %s %s: %w", key.Package, key.Name, key.Unit, err)
	}
	if l.Branch == "" {
		// An empty branch does not filter: keep the commits whose runs
		// there are on no branch.
		points = slices.DeleteFunc(points, func(p store.SeriesPoint) bool { return p.Branch != "" })
	}
	if len(points) == 0 {
		return Series{}, false, nil
	}
	return NewSeries(key, l, points, opts), true, nil
}

// listLines lists the branches and machines with runs that f selects,
// sorted by branch, then machine.
func listLines(ctx context.Context, src Source, f store.Filter) ([]Line, error) {
	all, err := src.Commits(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list commits: %w", err)
	}
	var machines []string
	for _, c := range all {
		for _, m := range c.Machines {
			if !slices.Contains(machines, m) {
				machines = append(machines, m)
			}
		}
	}
	var lines []Line
	for _, m := range machines {
		// A commit names the branch of its first run that the filter
		// selects: asked per machine, each machine's branches.
		mf := f
		mf.Machine = m
		commits, err := src.Commits(ctx, mf)
		if err != nil {
			return nil, fmt.Errorf("list commits: %w", err)
		}
		for _, c := range commits {
			if l := (Line{Branch: c.Branch, Machine: m}); !slices.Contains(lines, l) {
				lines = append(lines, l)
			}
		}
	}
	slices.SortFunc(lines, func(a, b Line) int {
		return cmp.Or(cmp.Compare(a.Branch, b.Branch), cmp.Compare(a.Machine, b.Machine))
	})
	return lines, nil
}

// describeFilter says in words what f leaves out.
func describeFilter(f store.Filter) []string {
	var out []string
	for _, kv := range []struct{ what, v string }{
		{"branch", f.Branch}, {"machine", f.Machine}, {"package matching", f.Package},
		{"benchmark matching", f.Name}, {"unit", f.Unit},
	} {
		if kv.v != "" {
			out = append(out, kv.what+" "+kv.v)
		}
	}
	if !f.Since.IsZero() {
		out = append(out, "commits since "+f.Since.Format(time.DateTime))
	}
	return out
}
