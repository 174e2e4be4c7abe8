package report

import (
	"io"
	"strconv"
	"strings"
)

// An Align says where text sits in a column wider than it.
type Align int

// Alignments.
const (
	Left   Align = iota
	Right        // numbers
	Center       // group headings
)

// A TextTable lays out rows of cells in fixed-width columns for a terminal.
// It serves every table the tool prints: each column has an alignment and
// a heading; optional group headings span several columns above the
// headings; a line may span the whole table (a section title inside it);
// and cells may carry numbered footnotes printed after the table.
//
// A column whose heading and cells are all empty takes no space, so a
// table may reserve columns (such as footnote marks) it ends up not using.
// Lines never end in spaces.
type TextTable struct {
	// Indent starts every line.
	Indent string
	// Gap separates adjacent columns; default two spaces.
	Gap string
	// Columns are the table's columns, left to right.
	Columns []TextColumn
	// Groups are rows of headings above the column headings, outermost
	// first; each spans a run of columns.
	Groups [][]Span

	rows  []textRow
	notes []string
	mark  map[string]int
}

// A TextColumn is a column's heading and alignment.
type TextColumn struct {
	Heading string
	Align   Align
}

// A Span is a group heading over the columns [Start, Start+Len).
type Span struct {
	Text       string
	Start, Len int
}

type textRow struct {
	cells []string
	line  string // when cells is nil: a line across the table
}

// AddRow adds a row; missing trailing cells are empty.
func (t *TextTable) AddRow(cells ...string) { t.rows = append(t.rows, textRow{cells: cells}) }

// AddLine adds a line of text across the whole table, which does not
// widen any column.
func (t *TextTable) AddLine(text string) { t.rows = append(t.rows, textRow{line: text}) }

// Note returns the footnote marks ("¹ ²") for msgs, numbering each
// distinct message once in order of first use; "" for none.
func (t *TextTable) Note(msgs ...string) string {
	if t.mark == nil {
		t.mark = make(map[string]int)
	}
	var marks []string
	for _, m := range msgs {
		n, ok := t.mark[m]
		if !ok {
			t.notes = append(t.notes, m)
			n = len(t.notes)
			t.mark[m] = n
		}
		marks = append(marks, Superscript(n))
	}
	return strings.Join(marks, " ")
}

// Superscript writes n in superscript digits, as footnote marks are.
func Superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	var b strings.Builder
	for _, d := range strconv.Itoa(n) {
		if d == '-' {
			b.WriteRune('⁻')
			continue
		}
		b.WriteString(string([]rune(digits)[d-'0']))
	}
	return b.String()
}

// widths returns each column's width: its widest heading or cell, then
// widened so that every group heading fits over its columns.
func (t *TextTable) widths(gap int) []int {
	w := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		w[i] = width(c.Heading)
	}
	for _, r := range t.rows {
		for i, c := range r.cells {
			if i < len(w) {
				w[i] = max(w[i], width(c))
			}
		}
	}
	for _, level := range t.Groups {
		for _, s := range level {
			end := min(s.Start+s.Len, len(w))
			if s.Start >= end {
				continue
			}
			have := 0
			for i := s.Start; i < end; i++ {
				if w[i] > 0 {
					have += w[i] + gap
				}
			}
			have = max(have-gap, 0)
			// Spread what is missing over the spanned columns, the
			// last taking the remainder.
			missing := width(s.Text) - have
			for i := s.Start; missing > 0 && i < end; i++ {
				add := missing / (end - i)
				if i == end-1 {
					add = missing
				}
				if w[i] == 0 && add > 0 {
					add = max(add-gap, 1) // the column now costs a gap too
				}
				w[i] += add
				missing -= add
			}
		}
	}
	return w
}

// WriteText writes the table, then its footnotes.
func (t *TextTable) WriteText(w io.Writer) error {
	gap := t.Gap
	if gap == "" {
		gap = "  "
	}
	widths := t.widths(width(gap))
	var b strings.Builder
	// start[i] is where column i begins after the indent; a column of
	// width zero is skipped with its gap.
	start := make([]int, len(widths)+1)
	pos := 0
	for i, wd := range widths {
		start[i] = pos
		if wd > 0 {
			pos += wd + width(gap)
		}
	}
	start[len(widths)] = pos
	emit := func(line string) {
		b.WriteString(strings.TrimRight(t.Indent+line, " "))
		b.WriteString("\n")
	}
	cellsLine := func(cells []string, align func(i int) Align) string {
		var l strings.Builder
		first := true
		for i, wd := range widths {
			if wd == 0 {
				continue
			}
			if !first {
				l.WriteString(gap)
			}
			first = false
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			l.WriteString(align1(c, wd, align(i)))
		}
		return l.String()
	}
	for _, level := range t.Groups {
		line := []rune(strings.Repeat(" ", pos))
		for _, s := range level {
			end := min(s.Start+s.Len, len(widths))
			if s.Start >= end {
				continue
			}
			from, to := start[s.Start], start[end]-width(gap)
			text := []rune(align1(s.Text, to-from, Center))
			copy(line[from:], text)
		}
		emit(string(line))
	}
	hasHeading := false
	headings := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		headings[i] = c.Heading
		hasHeading = hasHeading || c.Heading != ""
	}
	colAlign := func(i int) Align { return t.Columns[i].Align }
	if hasHeading {
		emit(cellsLine(headings, colAlign))
	}
	for _, r := range t.rows {
		if r.cells == nil {
			emit(r.line)
			continue
		}
		emit(cellsLine(r.cells, colAlign))
	}
	for i, n := range t.notes {
		emit(Superscript(i+1) + " " + n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// align1 pads s to width w as a says; s wider than w is left as it is.
func align1(s string, w int, a Align) string {
	n := w - width(s)
	if n <= 0 {
		return s
	}
	switch a {
	case Right:
		return strings.Repeat(" ", n) + s
	case Center:
		l := n / 2
		return strings.Repeat(" ", l) + s + strings.Repeat(" ", n-l)
	}
	return s + strings.Repeat(" ", n)
}
