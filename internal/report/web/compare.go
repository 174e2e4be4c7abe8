package web

import (
	"bytes"

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
	Error      string
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
	Rows       []report.SideBySideRow
	Kinds      []string // profile kinds both runs have, for diff flame graphs
}

// NewRunComparison lays out two runs' analyses side by side.
func NewRunComparison(base, head *run.Run, ba, ha *analysis.Result) *RunComparison {
	return &RunComparison{Base: base, Head: head,
		Rows:  report.SideBySideRows(analysis.Beside(base.ID, ba.Analysis, head.ID, ha.Analysis)),
		Kinds: SharedKinds(base, head)}
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
