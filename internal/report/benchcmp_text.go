package report

import (
	"fmt"
	"io"

	"golang.org/x/perf/benchunit"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/profdiff"
)

// WriteBenchComparison renders a benchmark comparison in format f, then the
// profile diffs: text for a terminal, Markdown for a pull-request comment,
// or one JSON object holding both (see writeBenchJSON for its fields).
func WriteBenchComparison(w io.Writer, f Format, cmp *benchstats.Comparison, diffs []*profdiff.Diff) error {
	if f == JSON {
		return writeBenchJSON(w, cmp, diffs)
	}
	d := &doc{}
	d.add(section{blocks: benchBlocks(cmp)})
	d.add(section{blocks: profileDiffBlocks(diffs)})
	return renderDoc(w, f, d)
}

// WriteCommitComparison renders the comparison of two recorded commits
// as WriteBenchComparison does, then where the instruction counts that
// moved beyond the threshold changed (changes, from
// gate.ExplainRecorded): a "Where it changed" section in text and
// Markdown, the field instruction_changes in JSON.
func WriteCommitComparison(w io.Writer, f Format, cmp *benchstats.Comparison, changes []gate.RecordedChange) error {
	if f == JSON {
		out := benchJSONOf(cmp, nil)
		out.InstructionChanges = changes
		return encodeBenchJSON(w, out)
	}
	d := &doc{}
	d.add(section{blocks: benchBlocks(cmp)})
	var es []gate.Explanation
	var notes []string
	for _, c := range changes {
		if c.Explanation != nil {
			es = append(es, *c.Explanation)
		} else {
			notes = append(notes, fmt.Sprintf("%s Benchmark%s %s %s: not explained, %s", c.Package, c.Benchmark, measure.Instructions, measure.FormatChange(c.Change), c.Unexplained))
		}
	}
	if len(changes) > 0 {
		s := gateExplanations(es)
		s.blocks = append(s.blocks, block{notes: notes})
		d.add(s)
	}
	return renderDoc(w, f, d)
}

// benchBlocks lays out a benchmark comparison as benchstat does: before
// each table the configuration lines that changed since the previous one,
// then a table per unit with each input's center ± confidence interval,
// the change against the base column with its p-value and sample sizes, a
// geomean row, and the warnings as numbered footnotes. In text this is
// benchstat's own layout, column for column.
func benchBlocks(cmp *benchstats.Comparison) []block {
	var blocks []block
	for i, t := range cmp.Tables {
		b := block{table: benchTable(t)}
		for _, kv := range changedConfig(cmp, i) {
			b.facts = append(b.facts, [2]string{kv.Key, kv.Value})
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// A BenchTable is one table of a benchmark comparison as
// WriteBenchComparison lays it out, for a format drawn outside this
// package (the dashboard's comparison page): the same cells, footnotes and
// geomean row as the CLI's tables.
type BenchTable struct {
	Unit string
	// Config is the configuration of the table's results that differs
	// from the table before it: all of it for the first.
	Config []benchstats.KeyValue
	// Table has one row per row of the comparison's table, in order,
	// then the geomean row when there are several.
	Table
}

// BenchTables lays out every table of cmp.
func BenchTables(cmp *benchstats.Comparison) []BenchTable {
	out := make([]BenchTable, len(cmp.Tables))
	for i, t := range cmp.Tables {
		out[i] = BenchTable{Unit: t.Unit, Config: changedConfig(cmp, i), Table: benchTable(t).cellTable()}
	}
	return out
}

// changedConfig returns the configuration of table i that differs from the
// table before it: all of it for the first.
func changedConfig(cmp *benchstats.Comparison, i int) []benchstats.KeyValue {
	cur := cmp.Tables[i].Config
	if i == 0 {
		return cur
	}
	prev := cmp.Tables[i-1].Config
	var out []benchstats.KeyValue
	for j, kv := range cur {
		if j >= len(prev) || prev[j] != kv {
			out = append(out, kv)
		}
	}
	return out
}

// Per input, the table has a center, an interval and footnote marks;
// compared inputs add the delta, the test and its marks.
const (
	baseCols     = 3
	comparedCols = 6
)

// inputCol returns the first table column of input i.
func inputCol(i int) int {
	if i == 0 {
		return 1
	}
	return 1 + baseCols + (i-1)*comparedCols
}

// benchTable lays out one benchmark table: per input its center, interval
// and footnote marks as one fact; per compared input also its delta, then
// the test and its marks as another.
func benchTable(t *benchstats.Table) *table {
	tt := &table{}
	col := func(heading string, right, joined bool) {
		tt.header = append(tt.header, heading)
		tt.right = append(tt.right, right)
		tt.joined = append(tt.joined, joined)
	}
	col(t.Unit, false, false)
	for i := range t.Columns {
		col(t.Center, true, false)
		col("CI", true, true)
		col("", false, true)
		if i > 0 {
			col("vs base", true, false)
			col("", false, true)
			col("", false, true)
		}
	}
	tt.groups = columnGroups(t.Columns)
	for _, r := range t.Rows {
		cells := make([]string, len(tt.header))
		var strong []int
		cells[0] = r.Name
		scale := rowScale(r, t.Unit)
		for i, c := range r.Cells {
			if c == nil {
				continue
			}
			at := inputCol(i)
			cells[at] = scale.Format(c.Summary.Center)
			cells[at+1] = "± " + c.Summary.PctRangeString()
			cells[at+2] = tt.note(errorTexts(c.Warnings)...)
			if ch := c.Change; ch != nil {
				cells[at+3] = ch.Delta
				cells[at+4] = "(" + ch.Test.String() + ")"
				cells[at+5] = tt.note(errorTexts(ch.Test.Warnings)...)
				if ch.Significant && ch.Delta != "~" {
					strong = append(strong, at+3)
				}
			}
		}
		tt.addStrong(cells, strong...)
	}
	if len(t.Rows) > 1 {
		cells := make([]string, len(tt.header))
		cells[0] = "geomean"
		for i, g := range t.Geomeans {
			at := inputCol(i)
			if g.HasCenter {
				cells[at] = measure.TableValue(g.Center, t.Unit)
			}
			if i == 0 {
				cells[at+2] = tt.note(errorTexts(g.Warnings)...)
				continue
			}
			cells[at+3] = geomeanDelta(g)
			cells[at+5] = tt.note(errorTexts(g.Warnings)...)
		}
		tt.add(cells...)
	}
	return tt
}

// columnGroups heads the inputs' table columns with their labels: one row
// per field of the column projection, adjacent inputs that share a value
// (and every value above it) under one heading.
func columnGroups(cols []benchstats.Column) [][]Span {
	if len(cols) == 0 {
		return nil
	}
	levels := len(cols[0].Fields)
	groups := make([][]Span, levels)
	for level := range levels {
		for i := 0; i < len(cols); {
			j := i + 1
			for j < len(cols) && sameUpTo(cols[i], cols[j], level) {
				j++
			}
			// Input j's first column is the one after input j-1's last.
			end := inputCol(j)
			groups[level] = append(groups[level], Span{Text: cols[i].Fields[level].Value, Start: inputCol(i), Len: end - inputCol(i)})
			i = j
		}
	}
	return groups
}

// sameUpTo reports whether two columns have the same values in their
// fields up to and including level.
func sameUpTo(a, b benchstats.Column, level int) bool {
	for l := 0; l <= level && l < len(a.Fields) && l < len(b.Fields); l++ {
		if a.Fields[l].Value != b.Fields[l].Value {
			return false
		}
	}
	return true
}

// rowScale picks one SI prefix for a row's centers, so the inputs of a
// benchmark read in the same unit.
func rowScale(r *benchstats.Row, unit string) benchunit.Scaler {
	var centers []float64
	for _, c := range r.Cells {
		if c != nil {
			centers = append(centers, c.Summary.Center)
		}
	}
	return measure.TableScale(unit, centers)
}

// geomeanDelta writes a geomean's change from the base as a signed
// percentage, "?" where no ratio could be computed.
func geomeanDelta(g *benchstats.Geomean) string {
	if !g.HasRatio {
		return "?"
	}
	return measure.TableChange(g.Ratio - 1)
}

func errorTexts(errs []error) []string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return s
}
