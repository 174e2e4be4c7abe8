package compare

import (
	"encoding/csv"
	"fmt"
	"io"
)

// WriteCSV renders the comparison as benchstat's CSV. Warnings go to
// warnings, prefixed with the spreadsheet cell they belong to, so the CSV
// itself stays regular.
func (cmp *Comparison) WriteCSV(w, warnings io.Writer) error {
	o := csv.NewWriter(w)
	row := 1
	err := cmp.eachTable(func(hdr string) error {
		row++
		return o.Write([]string{hdr})
	}, func(t *Table) error {
		row += t.writeCSV(o, row, warnings)
		return nil
	})
	if err != nil {
		return err
	}
	o.Flush()
	return o.Error()
}

func (t *Table) writeCSV(o *csv.Writer, startRow int, warnings io.Writer) (rowCount int) {
	const labelCols, centerCols, deltaCols = 1, 2, 2
	startCol := func(exp int) int {
		if exp == 0 {
			return labelCols
		}
		return labelCols + centerCols + (exp-1)*(centerCols+deltaCols)
	}
	var row []string
	clearTo := func(col int) {
		for len(row) < col {
			row = append(row, "")
		}
	}
	emit := func() {
		o.Write(row)
		row = row[:0]
		rowCount++
	}
	warn := func(msgs []error) {
		var name []byte
		x := len(row)
		for ; x > 0; x /= 26 {
			name = append([]byte{'A' + byte(x%26)}, name...)
		}
		if len(name) == 0 {
			name = []byte{'A'}
		}
		for _, m := range msgs {
			fmt.Fprintf(warnings, "%s%d: %s\n", name, startRow+rowCount, m)
		}
	}

	for _, field := range t.Cols[0].Projection().FlattenedFields() {
		for exp, key := range t.Cols {
			clearTo(startCol(exp))
			row = append(row, key.Get(field))
		}
		clearTo(startCol(len(t.Cols)))
		emit()
	}
	for exp := range t.Cols {
		clearTo(startCol(exp))
		row = append(row, t.Unit, "CI")
		if exp > 0 {
			row = append(row, "vs base", "P")
		}
	}
	emit()

	for _, rk := range t.Rows {
		row = append(row, rk.StringValues())
		for exp, ck := range t.Cols {
			c, ok := t.Cells[cellKey{rk, ck}]
			if !ok {
				continue
			}
			clearTo(startCol(exp))
			warn(c.Sample.Warnings)
			warn(c.Summary.Warnings)
			row = append(row, fmt.Sprint(c.Summary.Center), c.Summary.PctRangeString())
			if exp > 0 && c.Baseline != nil {
				warn(c.Comparison.Warnings)
				row = append(row, c.Delta(), c.Comparison.String())
			}
		}
		emit()
	}

	row = append(row, "geomean")
	for exp, g := range t.Geomeans {
		clearTo(startCol(exp))
		warn(g.Warnings)
		if g.HasCenter {
			row = append(row, fmt.Sprint(g.Center))
		}
		if exp > 0 {
			clearTo(startCol(exp) + centerCols)
			row = append(row, geomeanDelta(g))
		}
	}
	clearTo(startCol(len(t.Cols)))
	emit()
	return rowCount
}
