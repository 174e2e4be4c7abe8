package compare

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/perf/benchproc"
	"golang.org/x/perf/benchunit"
)

// WriteText renders the comparison as benchstat's text tables: the
// configuration lines that change between tables, then each table with
// its numbered footnotes.
func (cmp *Comparison) WriteText(w io.Writer) error {
	return cmp.eachTable(func(line string) error {
		_, err := fmt.Fprintln(w, line)
		return err
	}, func(t *Table) error { return t.WriteText(w) })
}

// eachTable calls hdr with a "key: value" line for each configuration
// value that differs from the previous table, and blank lines between
// tables, then tbl for the table.
func (cmp *Comparison) eachTable(hdr func(string) error, tbl func(*Table) error) error {
	var prev *Table
	for i, t := range cmp.Tables {
		if i > 0 {
			if err := hdr(""); err != nil {
				return err
			}
		}
		cur := t.Config()
		var before [][2]string
		if prev != nil {
			before = prev.Config()
		}
		for j, kv := range cur {
			if prev == nil || j >= len(before) || before[j][1] != kv[1] {
				if err := hdr(kv[0] + ": " + kv[1]); err != nil {
					return err
				}
			}
		}
		prev = t
		if err := tbl(t); err != nil {
			return err
		}
	}
	return nil
}

// footnotes numbers distinct warning messages in order of appearance.
type footnotes struct {
	list []string
	idx  map[string]int
}

func (f *footnotes) mark(errs ...[]error) string {
	if f.idx == nil {
		f.idx = make(map[string]int)
	}
	var marks []string
	for _, es := range errs {
		for _, e := range es {
			s := e.Error()
			i, ok := f.idx[s]
			if !ok {
				i = len(f.list)
				f.idx[s] = i
				f.list = append(f.list, s)
			}
			marks = append(marks, superscript(i+1))
		}
	}
	return strings.Join(marks, " ")
}

// WriteText renders one table exactly as benchstat's text format.
func (t *Table) WriteText(w io.Writer) error {
	var o textTable
	const labelCols, centerCols, deltaCols = 1, 3, 3
	startCol := func(exp int) int {
		if exp == 0 {
			return labelCols
		}
		return labelCols + centerCols + (exp-1)*(centerCols+deltaCols)
	}
	var notes footnotes

	kt := benchproc.NewKeyHeader(t.Cols)
	rEdge := startCol(len(t.Cols) + 1)
	for nodes := kt.Top; len(nodes) > 0; {
		var next []*benchproc.KeyHeaderNode
		o.row()
		for _, n := range nodes {
			l, r := startCol(n.Start), startCol(n.Start+n.Len)
			o.col(l)
			o.span(r-l, n.Value, alignCenterOpt, leftMargin(" │ "))
			next = append(next, n.Children...)
		}
		o.col(rEdge)
		o.cell("", leftMargin(" │"))
		nodes = next
	}

	o.row()
	for i := range t.Cols {
		l := startCol(i)
		o.col(l)
		o.span(centerCols, t.Unit, alignCenterOpt, leftMargin(" │ "))
		if i > 0 {
			o.span(deltaCols, "vs base", alignLeftOpt, leftMargin("  "))
		}
		for j := l + 1; j < o.curCol; j++ {
			o.setShrink(j)
		}
	}
	o.col(rEdge)
	o.cell("", leftMargin(" │"))

	for _, row := range t.Rows {
		o.row()
		o.cell(row.StringValues())
		scaler := t.rowScaler(row)
		for exp, col := range t.Cols {
			c, ok := t.Cells[cellKey{row, col}]
			if !ok {
				continue
			}
			o.col(startCol(exp))
			o.cell(scaler.Format(c.Summary.Center), alignRightOpt)
			o.cell(c.Summary.PctRangeString(), alignRightOpt, leftMargin(" ± "))
			o.cell(notes.mark(c.Sample.Warnings, c.Summary.Warnings))
			if exp > 0 && c.Baseline != nil {
				o.cell(c.Delta(), alignRightOpt)
				o.cell("(" + c.Comparison.String() + ")")
				o.cell(notes.mark(c.Comparison.Warnings))
			}
		}
	}

	if len(t.Rows) > 1 {
		o.row()
		o.cell("geomean")
		cls := benchunit.ClassOf(t.Unit)
		for exp, g := range t.Geomeans {
			if g.HasCenter {
				o.col(startCol(exp))
				o.cell(benchunit.Scale(g.Center, cls), alignRightOpt)
			}
			if exp > 0 {
				o.col(startCol(exp) + centerCols)
				if g.HasRatio {
					o.cell(geomeanDelta(g), alignRightOpt)
				} else {
					o.cell("?")
				}
			}
			o.col(startCol(exp+1) - 1)
			o.cell(notes.mark(g.Warnings))
		}
	}

	if err := o.format(w); err != nil {
		return err
	}
	for i, msg := range notes.list {
		if _, err := fmt.Fprintf(w, "%s %s\n", superscript(i+1), msg); err != nil {
			return err
		}
	}
	return nil
}

func superscript(i int) string {
	digits := []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")
	if i == 0 {
		return string(digits[0])
	}
	var buf []rune
	for ; i > 0; i /= 10 {
		buf = append([]rune{digits[i%10]}, buf...)
	}
	return string(buf)
}
