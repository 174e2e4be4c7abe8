package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/perfscope/perfscope/internal/benchstats"
)

// WriteBenchComparisonCSV writes a benchmark comparison as CSV laid out as benchstat
// lays out its own, so spreadsheets built on one read the other: per
// table, the changed configuration lines, a row per column-label field, a
// row naming the unit, "CI", "vs base" and "P" columns, a row per
// benchmark with full-precision centers, and the geomean row. Warnings go
// to warnings, each prefixed with the spreadsheet cell it belongs to
// ("C4: need >= 6 samples ..."), so the CSV itself stays regular.
//
// It does not go through the document layout that text and Markdown
// share: a spreadsheet reads records at full precision and addresses
// warnings by cell, which a layout for people does not keep.
func WriteBenchComparisonCSV(w, warnings io.Writer, cmp *benchstats.Comparison) error {
	c := &benchCSV{out: csv.NewWriter(w), warnings: warnings}
	for i, t := range cmp.Tables {
		if i > 0 {
			c.record([]string{""})
		}
		for _, kv := range changedConfig(cmp, i) {
			c.record([]string{kv.Key + ": " + kv.Value})
		}
		c.table(t)
	}
	c.out.Flush()
	if c.err != nil {
		return c.err
	}
	return c.out.Error()
}

// benchCSV writes records and counts them, to name the cells warnings
// belong to.
type benchCSV struct {
	out      *csv.Writer
	warnings io.Writer
	n        int // records written
	err      error
}

func (c *benchCSV) record(r []string) {
	c.n++
	if err := c.out.Write(r); err != nil && c.err == nil {
		c.err = err
	}
}

// warn reports errs against the cell that field col of the next record
// holds.
func (c *benchCSV) warn(col int, errs []error) {
	for _, e := range errs {
		if _, err := fmt.Fprintf(c.warnings, "%s%d: %s\n", spreadsheetColumn(col), c.n+1, e); err != nil && c.err == nil {
			c.err = err
		}
	}
}

// csvCol returns the first field of input i: the label, then two fields
// (center, CI) for the base and four (center, CI, delta, P) for the others.
func csvCol(i int) int {
	if i == 0 {
		return 1
	}
	return 3 + (i-1)*4
}

func (c *benchCSV) table(t *benchstats.Table) {
	width := csvCol(len(t.Columns))
	pad := func(r []string, to int) []string {
		for len(r) < to {
			r = append(r, "")
		}
		return r
	}
	if len(t.Columns) > 0 {
		for level := range t.Columns[0].Fields {
			var r []string
			for i, col := range t.Columns {
				r = append(pad(r, csvCol(i)), col.Fields[level].Value)
			}
			c.record(pad(r, width))
		}
	}
	var units []string
	for i := range t.Columns {
		units = append(pad(units, csvCol(i)), t.Unit, "CI")
		if i > 0 {
			units = append(units, "vs base", "P")
		}
	}
	c.record(units)
	for _, row := range t.Rows {
		r := []string{row.Name}
		for i, cell := range row.Cells {
			if cell == nil {
				continue
			}
			r = pad(r, csvCol(i))
			c.warn(len(r), cell.Warnings)
			r = append(r, strconv.FormatFloat(cell.Summary.Center, 'g', -1, 64), cell.Summary.PctRangeString())
			if ch := cell.Change; ch != nil {
				c.warn(len(r), ch.Test.Warnings)
				r = append(r, ch.Delta, ch.Test.String())
			}
		}
		c.record(r)
	}
	r := []string{"geomean"}
	for i, g := range t.Geomeans {
		r = pad(r, csvCol(i))
		c.warn(len(r), g.Warnings)
		if g.HasCenter {
			r = append(r, strconv.FormatFloat(g.Center, 'g', -1, 64))
		}
		if i > 0 {
			r = append(pad(r, csvCol(i)+2), geomeanDelta(g))
		}
	}
	c.record(pad(r, width))
}

// spreadsheetColumn names the 0-based column i as spreadsheets do: A … Z,
// AA, AB, …
func spreadsheetColumn(i int) string {
	name := ""
	for i++; i > 0; i = (i - 1) / 26 {
		name = string(rune('A'+(i-1)%26)) + name
	}
	return name
}
