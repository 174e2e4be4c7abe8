package web

import (
	"bytes"
	"net/url"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
)

// Compare is the comparison page's data: the forms' choices, and the
// comparison of two commits or of two runs.
type Compare struct {
	Base, Head, Branch, Machine, BaseRun, HeadRun string
	Alpha                                         float64
	// Runs are the latest runs, the choices of the runs' form.
	Runs    []store.ProfileRun
	Commits *CommitComparison
	RunCmp  *RunComparison
	// CommitRuns are profiling runs of the two commits, for diff flame
	// graphs next to the benchmark comparison.
	CommitRuns *CommitRuns
	// Instructions are the benchmarks whose instructions/op moved beyond
	// the gate's threshold between the commits, with where they changed.
	Instructions *InstructionChanges
	Error        string
}

// A CommitComparison is the comparison of two recorded commits: the
// tables 'perfscope compare' prints, footnotes and geomeans included, and
// its text.
type CommitComparison struct {
	Base, Head *store.CommitSamples
	Tables     []CompareTable
	// Text is the comparison as 'perfscope compare' prints it.
	Text string
}

// A CompareTable is one of report's comparison tables with each row's
// colour on the page.
type CompareTable struct {
	report.BenchTable
	Rows []CompareRow
}

// A CompareRow is a row of a CompareTable.
type CompareRow struct {
	report.TableRow
	// Class is "better" or "worse" for a significant change of the last
	// input against the base in a unit with a better direction, ""
	// otherwise and on the geomean row.
	Class string
}

// NewCommitComparison lays out cmp, the comparison of base and head, as
// 'perfscope compare' does.
func NewCommitComparison(base, head *store.CommitSamples, cmp *benchstats.Comparison) *CommitComparison {
	cc := &CommitComparison{Base: base, Head: head}
	var text bytes.Buffer
	if err := report.WriteBenchComparison(&text, report.Text, cmp, nil); err != nil {
		text.WriteString("\n(comparison incomplete: " + err.Error() + ")")
	}
	cc.Text = text.String()
	for i, bt := range report.BenchTables(cmp) {
		t := cmp.Tables[i]
		ct := CompareTable{BenchTable: bt}
		for j, r := range bt.Rows {
			row := CompareRow{TableRow: r}
			if j < len(t.Rows) {
				row.Class = changeClass(t.Unit, t.Rows[j])
			}
			ct.Rows = append(ct.Rows, row)
		}
		cc.Tables = append(cc.Tables, ct)
	}
	return cc
}

// changeClass is the colour of a row: its last input's significant change
// against the base, by the unit's better direction.
func changeClass(unit string, r *benchstats.Row) string {
	if len(r.Cells) == 0 {
		return ""
	}
	head := r.Cells[len(r.Cells)-1]
	if head == nil || head.Change == nil || !head.Change.Significant {
		return ""
	}
	return BetterClass(measure.Improves(unit, nil, head.Change.Base.Summary.Center, head.Summary.Center))
}

// CommitRuns are the latest profiling runs of two commits.
type CommitRuns struct {
	Base, Head string
	Kinds      []string // profile kinds both have
}

// A RunComparison is two runs side by side, as 'perfscope demo' shows
// them.
type RunComparison struct {
	Base, Head *run.Run
	// BaseHealth and HeadHealth are each run's health (RunHealth).
	BaseHealth, HeadHealth string
	// Problems say why the two runs' numbers are not comparable: one run's
	// load failed or was interrupted, or the runs loaded different
	// endpoints. When there are any, no row has a verdict or a change:
	// a faster answer of 404 is not an improvement.
	Problems []string
	// Rows are the load and per-request metrics, their change a ratio;
	// Shares are the shares of CPU, their change in percentage points.
	Rows, Shares []report.SideBySideRow
	Kinds        []string // profile kinds both runs have, for diff flame graphs
}

// NewRunComparison lays out two runs' analyses side by side.
func NewRunComparison(base, head *run.Run, ba, ha *analysis.Result) *RunComparison {
	c := &RunComparison{Base: base, Head: head, BaseHealth: RunHealth(base), HeadHealth: RunHealth(head),
		Kinds: SharedKinds(base, head)}
	for _, side := range []struct {
		name string
		r    *run.Run
	}{{"base", base}, {"head", head}} {
		if why := runProblem(side.r); why != "" {
			c.Problems = append(c.Problems, "The "+side.name+" run, "+side.r.ID+": "+why+".")
		}
	}
	if bp, hp := endpoint(base.Target), endpoint(head.Target); bp != hp {
		c.Problems = append(c.Problems, "The runs loaded different endpoints ("+bp+" and "+hp+
			"): their numbers measure different work and are not comparable.")
	}
	for _, r := range report.SideBySideRows(analysis.Beside(base.ID, ba.Analysis, head.ID, ha.Analysis)) {
		if len(c.Problems) > 0 {
			r.Change, r.Ratio, r.Verdict = "", "", ""
		}
		if r.Share {
			c.Shares = append(c.Shares, r)
		} else {
			c.Rows = append(c.Rows, r)
		}
	}
	return c
}

// runProblem says why r's numbers do not describe a working service
// under its whole load: its load failed or was interrupted; "" when they
// do.
func runProblem(r *run.Run) string {
	switch RunHealth(r) {
	case HealthInterrupted:
		return "interrupted, its numbers cover part of its load"
	case HealthFailed:
		if r.Error != "" {
			return "the run failed: " + r.Error
		}
		return loadFailure(r.Load)
	}
	return ""
}

// endpoint is the path of a target URL: the same service is often run on
// another loopback port each time, so host and port do not tell endpoints
// apart, while the path does.
func endpoint(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return target
	}
	if u.Path == "" {
		return "/"
	}
	return u.Path
}

// SharedKinds are the kinds of profile both runs have, in head's order:
// those a diff flame graph can show.
func SharedKinds(base, head *run.Run) []string {
	var kinds []string
	for _, pf := range head.Profiles {
		if pf.File != "" && base.Has(pf.Kind) {
			kinds = append(kinds, pf.Kind)
		}
	}
	return kinds
}

// A DiffPage frames the diff flame graph of one kind of profile of two
// runs with the way back to their comparison.
type DiffPage struct {
	Base, Head *run.Run
	Kind       string
	Frame      string // the flame graph's address
	Back       string // the comparison's address
}
