package compare

import (
	"fmt"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
	"golang.org/x/perf/benchunit"
)

// A Table compares one unit across benchmarks (rows) and inputs (columns),
// as one benchstat table. Every cell is compared with the cell of the same
// row in the first column.
type Table struct {
	// Key is the table's configuration; its last field is ".unit".
	Key benchproc.Key
	// Unit is the tidied unit of every value in the table ("sec/op").
	Unit string
	// Assumption is the distributional assumption for Unit.
	Assumption benchmath.Assumption
	// Rows and Cols are the row and column keys in display order.
	Rows, Cols []benchproc.Key
	// Cells holds the cells present; a row may lack some columns.
	Cells map[cellKey]*Cell
	// Geomeans summarize each column, in Cols order.
	Geomeans []*Geomean
	// Alpha and Confidence are the levels the table was computed at.
	Alpha, Confidence float64
}

// A Cell summarizes the sample of one benchmark in one input.
type Cell struct {
	// Values are the measurements in the order they were read.
	Values []float64
	// Sample holds the sorted values and the sample's warnings.
	Sample *benchmath.Sample
	// Summary is the center (median) and its confidence interval.
	Summary benchmath.Summary
	// Baseline is the cell this one is compared with, or nil for the
	// first column and for rows missing there.
	Baseline *Cell
	// Comparison is the test against Baseline; meaningless when
	// Baseline is nil.
	Comparison benchmath.Comparison
}

// A Geomean summarizes one column of a table: the geometric mean of its
// centers and, for compared columns, of the ratios to the baseline.
type Geomean struct {
	HasCenter bool
	Center    float64
	HasRatio  bool
	Ratio     float64
	Warnings  []error
}

// Cell returns the cell at row r and column c, or nil.
func (t *Table) Cell(r, c int) *Cell { return t.Cells[cellKey{t.Rows[r], t.Cols[c]}] }

// Delta is benchstat's "vs base" text: "~" when the difference is not
// significant at the table's alpha, else the signed percent change.
func (c *Cell) Delta() string {
	if c.Baseline == nil {
		return ""
	}
	return c.Comparison.FormatDelta(c.Baseline.Summary.Center, c.Summary.Center)
}

// Significant reports whether the cell differs from its baseline at the
// table's alpha.
func (c *Cell) Significant() bool {
	return c.Baseline != nil && c.Comparison.P <= c.Comparison.Alpha
}

// Warnings returns the cell's sample and summary warnings, then those of
// its comparison, in benchstat's footnote order.
func (c *Cell) Warnings() (cell, comparison []error) {
	cell = append(append(cell, c.Sample.Warnings...), c.Summary.Warnings...)
	if c.Baseline != nil {
		comparison = c.Comparison.Warnings
	}
	return cell, comparison
}

// rowScaler returns the common unit scale of a row's centers, so every
// cell of a row is printed with the same SI prefix.
func (t *Table) rowScaler(row benchproc.Key) benchunit.Scaler {
	var values []float64
	for _, col := range t.Cols {
		if c, ok := t.Cells[cellKey{row, col}]; ok {
			values = append(values, c.Summary.Center)
		}
	}
	return benchunit.CommonScale(values, benchunit.ClassOf(t.Unit))
}

// ColumnLabel returns the label of column i ("old.txt").
func (t *Table) ColumnLabel(i int) string { return t.Cols[i].StringValues() }

// RowLabel returns the label of row i ("Encode/format=json-8").
func (t *Table) RowLabel(i int) string { return t.Rows[i].StringValues() }

// Config returns the table's configuration without its unit, as
// key/value pairs in projection order.
func (t *Table) Config() [][2]string {
	var kv [][2]string
	for _, f := range t.Key.Projection().FlattenedFields() {
		if f.Name == ".unit" {
			continue
		}
		kv = append(kv, [2]string{f.Name, t.Key.Get(f)})
	}
	return kv
}

// geomeanDelta formats a geomean ratio as benchstat does.
func geomeanDelta(g *Geomean) string {
	if !g.HasRatio {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", (g.Ratio-1)*100)
}
