package history

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// A CommitChanges is one commit of a line with the metrics that changed
// there: what the dashboard's home page lists under "what changed".
type CommitChanges struct {
	Ref  string
	Line Line
	Time time.Time
	// Subject and Author are the commit's, where its runs recorded them.
	Subject, Author string
	// Measured counts the metrics with results at this commit on its
	// line.
	Measured int
	// Changes are the marked changes, regressions first, then
	// improvements, then those of units without a better direction;
	// the largest first within each.
	Changes []Change
}

// Regressions counts the commit's regressions.
func (c CommitChanges) Regressions() int {
	n := 0
	for _, ch := range c.Changes {
		if ch.Better < 0 {
			n++
		}
	}
	return n
}

// A Change is one metric's marked change at a commit, against the commit
// before it on the same line.
type Change struct {
	Package, Name, Unit string
	Line                Line
	Delta               float64 // relative change of the median
	P                   float64 // the U test's p-value
	Better              int     // 1 improvement, -1 regression, 0 neither
	Median              float64 // the commit's median
	Previous, Ref       string  // the commits compared
}

// ByCommit gathers the marked changes of series by commit and line and
// returns the newest n commits (all when n <= 0), newest first. A commit
// measured on two lines is two entries: each is judged against the commit
// before it on its own line. Changes whose size is unknown (from a median
// of 0) are left out.
func ByCommit(series []Series, n int) []CommitChanges {
	type key struct {
		ref  string
		line Line
	}
	byKey := make(map[key]*CommitChanges)
	for _, s := range series {
		line := Line{Branch: s.Branch, Machine: s.Machine}
		for _, c := range s.Commits {
			k := key{c.Ref, line}
			cc := byKey[k]
			if cc == nil {
				cc = &CommitChanges{Ref: c.Ref, Line: line, Time: c.Time}
				byKey[k] = cc
			}
			if cc.Subject == "" && cc.Author == "" {
				cc.Subject, cc.Author = c.Subject, c.Author
			}
			cc.Measured++
			if !c.Changed || c.Delta == nil || c.P == nil {
				continue
			}
			cc.Changes = append(cc.Changes, Change{Package: s.Package, Name: s.Name, Unit: s.Unit, Line: line,
				Delta: *c.Delta, P: *c.P, Better: c.Better, Median: c.Median, Previous: c.Previous, Ref: c.Ref})
		}
	}
	out := make([]CommitChanges, 0, len(byKey))
	for _, cc := range byKey {
		out = append(out, *cc)
	}
	slices.SortFunc(out, func(a, b CommitChanges) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(a.Ref, b.Ref),
			cmp.Compare(a.Line.Branch, b.Line.Branch), cmp.Compare(a.Line.Machine, b.Line.Machine))
	})
	if n > 0 {
		out = out[:min(n, len(out))]
	}
	for i := range out {
		slices.SortFunc(out[i].Changes, func(a, b Change) int {
			return cmp.Or(betterRank(a.Better)-betterRank(b.Better), cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)),
				cmp.Compare(a.Package, b.Package), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Unit, b.Unit))
		})
	}
	return out
}

// betterRank orders regressions before improvements before changes of
// units without a better direction.
func betterRank(better int) int {
	switch better {
	case -1:
		return 0
	case 1:
		return 1
	}
	return 2
}
