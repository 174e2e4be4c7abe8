package compare

// This file lays out fixed-width text tables the way benchstat's texttab
// does, so that text output matches benchstat's column for column.

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

type textTable struct {
	cells          []textCell
	cols           int
	shrink         []bool
	curRow, curCol int
}

type textCell struct {
	row, col, span int
	value          string
	leftMargin     string
	alignment      align
}

type cellOption func(c *textCell)

func leftMargin(x string) cellOption { return func(c *textCell) { c.leftMargin = x } }

func alignLeftOpt(c *textCell)   { c.alignment = alignLeft }
func alignCenterOpt(c *textCell) { c.alignment = alignCenter }
func alignRightOpt(c *textCell)  { c.alignment = alignRight }

type align int

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

func (a align) lpad(s string, w int) string {
	switch a {
	case alignCenter:
		l := (w - utf8.RuneCountInString(s)) / 2
		return fmt.Sprintf("%*s%s", l, "", s)
	case alignRight:
		return fmt.Sprintf("%*s", w, s)
	}
	return s
}

func (t *textTable) row() {
	if len(t.cells) > 0 {
		t.curRow++
	}
	t.curCol = 0
}

// col skips forward to column c; moving backwards is a programming error
// in this file, never a consequence of input.
func (t *textTable) col(c int) {
	if c < t.curCol {
		panic(fmt.Sprintf("cannot move from column %d to earlier column %d", t.curCol, c))
	}
	t.curCol = c
}

func (t *textTable) cell(value string, opts ...cellOption) { t.span(1, value, opts...) }

func (t *textTable) span(cols int, value string, opts ...cellOption) {
	lMargin := " "
	if t.curCol == 0 || len(value) == 0 {
		lMargin = ""
	}
	t.cells = append(t.cells, textCell{t.curRow, t.curCol, cols, value, lMargin, alignLeft})
	for _, o := range opts {
		o(&t.cells[len(t.cells)-1])
	}
	t.curCol += cols
	t.cols = max(t.cols, t.curCol)
}

func (t *textTable) setShrink(col int) {
	for len(t.shrink) < col+1 {
		t.shrink = append(t.shrink, false)
	}
	t.shrink[col] = true
}

func (t *textTable) format(w io.Writer) error {
	shrink := func(col int) bool { return col < len(t.shrink) && t.shrink[col] }
	lmargin := make([]int, t.cols)
	for _, c := range t.cells {
		lmargin[c.col] = max(utf8.RuneCountInString(c.leftMargin), lmargin[c.col])
	}
	// Widths: single-column cells first, then spans widen the
	// non-shrink columns they cover, widest first.
	ws := make([]int, t.cols)
	sort.Slice(t.cells, func(i, j int) bool { return t.cells[i].span < t.cells[j].span })
	var spanCols []int
	for _, c := range t.cells {
		w := utf8.RuneCountInString(c.value) + lmargin[c.col]
		if c.span == 1 {
			ws[c.col] = max(ws[c.col], w)
			continue
		}
		tw := 0
		for col := c.col; col < c.col+c.span; col++ {
			tw += ws[col]
		}
		if tw >= w {
			continue
		}
		spanCols = spanCols[:0]
		for col := c.col; col < c.col+c.span; col++ {
			if shrink(col) {
				w -= ws[col]
			} else {
				spanCols = append(spanCols, col)
			}
		}
		sort.Slice(spanCols, func(i, j int) bool { return ws[spanCols[i]] > ws[spanCols[j]] })
		span := len(spanCols)
		for _, col := range spanCols {
			avg := (w + span - 1) / span
			ws[col] = max(ws[col], avg)
			w -= ws[col]
			span--
		}
	}
	offs := make([]int, t.cols+1)
	off := 0
	for i, w := range ws {
		offs[i] = off
		off += w
	}
	offs[len(ws)] = off

	sort.Slice(t.cells, func(i, j int) bool {
		if t.cells[i].row != t.cells[j].row {
			return t.cells[i].row < t.cells[j].row
		}
		return t.cells[i].col < t.cells[j].col
	})
	var b strings.Builder
	row, off := 0, 0
	for _, c := range t.cells {
		if strings.TrimSpace(c.value) == "" && strings.TrimSpace(c.leftMargin) == "" {
			continue // no trailing spaces from empty cells
		}
		for c.row > row {
			b.WriteString("\n")
			row++
			off = 0
		}
		spaces := offs[c.col] - off
		fmt.Fprintf(&b, "%*s%*s", spaces, "", lmargin[c.col], c.leftMargin)
		off += spaces + lmargin[c.col]
		tw := offs[c.col+c.span] - offs[c.col] - lmargin[c.col]
		s := c.alignment.lpad(c.value, tw)
		b.WriteString(s)
		off += utf8.RuneCountInString(s)
	}
	if len(t.cells) > 0 {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
