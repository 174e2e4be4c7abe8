package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A doc is a report laid out once, independently of its format, so text
// and Markdown show the same facts in the same order. Builders say what a
// fact is (a heading, a table, a footnote, code, something that matters);
// only writeText and writeMarkdown decide how each format shows it.
type doc struct {
	title    string
	meta     []string // lines under the title
	sections []section
}

type section struct {
	title  string
	blocks []block
}

// A block is one of: lines of prose, key-value pairs, a list of items (each
// one or more lines), a table, or code; caption heads any of them, facts
// (short "key: value" settings, such as a benchmark's configuration) come
// right under it, and notes (remarks on what the block shows) end it. A
// folded block holds detail a long page may keep closed.
type block struct {
	caption  string
	facts    [][2]string
	lines    []string
	pairs    [][2]string
	items    [][]string
	numbered bool // the items are ranked: number them
	table    *table
	code     []string
	notes    []string
	folded   bool
}

// A table has a heading per column; groups head runs of columns above
// them. A column may continue the one before it: its cells belong to the
// same fact (a value, its interval, its footnote marks), which text aligns
// as a column of its own and Markdown joins into one cell.
type table struct {
	header []string
	right  []bool // right-align the column (numbers)
	code   []bool // code in Markdown (function names, paths)
	joined []bool // the column continues the one before it
	groups [][]Span
	rows   []row
	notes  []string // footnotes, numbered in order of first use
}

// A row is cells, or when cells is nil a line across the table (a heading
// inside it); strong marks the cells that matter most (a regression).
type row struct {
	cells  []string
	strong []bool
	line   string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, row{cells: cells}) }

// addStrong adds a row whose cells at the given indexes matter most.
func (t *table) addStrong(cells []string, strong ...int) {
	r := row{cells: cells, strong: make([]bool, len(cells))}
	for _, i := range strong {
		r.strong[i] = true
	}
	t.rows = append(t.rows, r)
}

// addLine adds a line across the table.
func (t *table) addLine(text string) { t.rows = append(t.rows, row{line: text}) }

// note returns the footnote marks ("¹ ²") for msgs, numbering each
// distinct message once per table in order of first use; "" for none.
func (t *table) note(msgs ...string) string {
	var marks []string
	for _, m := range msgs {
		n := 0
		for i, have := range t.notes {
			if have == m {
				n = i + 1
				break
			}
		}
		if n == 0 {
			t.notes = append(t.notes, m)
			n = len(t.notes)
		}
		marks = append(marks, Superscript(n))
	}
	return strings.Join(marks, " ")
}

func (t *table) is(flags []bool, i int) bool { return i < len(flags) && flags[i] }

// itemPrefix starts line j of item n: a bullet or the item's number,
// then the continuation lines indented under the item's text.
func (b block) itemPrefix(n, j int) string {
	head := "- "
	if b.numbered {
		head = strconv.Itoa(n+1) + ". "
	}
	if j > 0 {
		return strings.Repeat(" ", width(head))
	}
	return head
}

func (b block) hasBody() bool { return b.hasBodyBesidesNotes() || len(b.notes) > 0 }

func (b block) hasBodyBesidesNotes() bool {
	return len(b.facts)+len(b.lines)+len(b.pairs)+len(b.items)+len(b.code) > 0 || b.table != nil
}

func (d *doc) add(s section) {
	if len(s.blocks) > 0 {
		d.sections = append(d.sections, s)
	}
}

// writeText lays the doc out for a terminal: upper-case section titles,
// what a title heads indented by two spaces (a doc without titles, such
// as a benchstat-style comparison, starts at the margin), columns aligned
// by padding, footnotes under their table.
func (d *doc) writeText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if d.title != "" {
		bw.WriteString(d.title + "\n")
	}
	for _, m := range d.meta {
		bw.WriteString(m + "\n")
	}
	for si, s := range d.sections {
		indent := ""
		if d.title != "" || s.title != "" {
			indent = "  "
		}
		if s.title != "" { // an untitled section continues the one before
			bw.WriteString("\n" + strings.ToUpper(s.title) + "\n")
		} else if si > 0 && len(d.sections[si-1].blocks) > 0 {
			bw.WriteString("\n")
		}
		for i, b := range s.blocks {
			if i > 0 && (b.caption != "" || b.table != nil || len(b.facts) > 0) {
				bw.WriteString("\n")
			}
			if b.caption != "" {
				bw.WriteString(indent + b.caption + "\n")
			}
			for _, f := range b.facts {
				bw.WriteString(indent + f[0] + ": " + f[1] + "\n")
			}
			for _, l := range b.lines {
				bw.WriteString(indent + l + "\n")
			}
			if len(b.pairs) > 0 {
				kw := 0
				for _, p := range b.pairs {
					kw = max(kw, width(p[0]))
				}
				for _, p := range b.pairs {
					bw.WriteString(indent + pad(p[0], kw, false) + "  " + p[1] + "\n")
				}
			}
			for n, it := range b.items {
				for j, l := range it {
					bw.WriteString(indent + b.itemPrefix(n, j) + l + "\n")
				}
			}
			if b.table != nil {
				writeTextTable(bw, indent, b.table)
			}
			for _, l := range b.code {
				bw.WriteString(strings.TrimRight(indent+"    "+l, " ") + "\n")
			}
			for _, n := range b.notes {
				bw.WriteString(indent + "note: " + n + "\n")
			}
		}
	}
	return bw.Flush()
}

func writeTextTable(w *bufio.Writer, indent string, t *table) {
	tt := &TextTable{Indent: indent, Groups: t.groups}
	for i, h := range t.header {
		a := Left
		if t.is(t.right, i) {
			a = Right
		}
		tt.Columns = append(tt.Columns, TextColumn{Heading: h, Align: a})
	}
	for _, r := range t.rows {
		if r.cells == nil {
			tt.AddLine(r.line)
			continue
		}
		// Strong cells show as they are: a terminal's bold cannot be
		// relied on, and benchstat's layout has none.
		tt.AddRow(r.cells...)
	}
	tt.WriteText(w) // a bufio.Writer reports its errors on Flush
	for i, n := range t.notes {
		w.WriteString(strings.TrimRight(indent+Superscript(i+1)+" "+n, " ") + "\n")
	}
}

// writeMarkdown lays the doc out as GitHub-flavoured Markdown.
func (d *doc) writeMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if d.title != "" {
		bw.WriteString("## " + mdText(d.title) + "\n\n")
	}
	for i, m := range d.meta {
		end := "  \n" // a hard line break keeps the lines apart
		if i == len(d.meta)-1 {
			end = "\n"
		}
		bw.WriteString(mdText(m) + end)
	}
	started := d.title != "" || len(d.meta) > 0
	for _, s := range d.sections {
		if s.title != "" {
			bw.WriteString("\n### " + mdText(s.title) + "\n")
			started = true
		}
		for _, b := range s.blocks {
			if started {
				bw.WriteString("\n")
			}
			started = true
			if b.folded {
				bw.WriteString("<details><summary>" + mdText(b.caption) + "</summary>\n\n")
			} else if b.caption != "" {
				bw.WriteString("**" + mdText(b.caption) + "**\n")
				if b.hasBody() {
					bw.WriteString("\n")
				}
			}
			writeMarkdownBlock(bw, b)
			if b.folded {
				bw.WriteString("\n</details>\n")
			}
		}
	}
	return bw.Flush()
}

func writeMarkdownBlock(bw *bufio.Writer, b block) {
	var facts []string
	for _, f := range b.facts {
		if v := strings.TrimSpace(f[1]); v != "" {
			facts = append(facts, mdText(f[0])+": "+mdCode(v))
		}
	}
	if len(facts) > 0 {
		bw.WriteString(strings.Join(facts, " · ") + "\n\n")
	}
	for _, l := range b.lines {
		bw.WriteString(mdText(l) + "  \n")
	}
	for _, p := range b.pairs {
		bw.WriteString("- **" + mdText(p[0]) + "**: " + mdText(p[1]) + "\n")
	}
	for n, it := range b.items {
		for j, l := range it {
			if j > 0 {
				bw.WriteString("  \n") // a hard break continues the list item
			}
			bw.WriteString(b.itemPrefix(n, j) + mdText(l))
		}
		bw.WriteString("\n")
	}
	if b.table != nil {
		writeMarkdownTable(bw, b.table)
	}
	if len(b.code) > 0 {
		fence := "```"
		for strings.Contains(strings.Join(b.code, "\n"), fence) {
			fence += "`"
		}
		bw.WriteString(fence + "\n" + strings.Join(b.code, "\n") + "\n" + fence + "\n")
	}
	for i, n := range b.notes {
		if i > 0 || b.hasBodyBesidesNotes() {
			bw.WriteString("\n") // a quote of its own for each note
		}
		bw.WriteString("> " + mdText(n) + "\n")
	}
}

// writeMarkdownTable writes t as a GitHub table: joined columns share a
// cell, group headings lead the heading of the column they start at, a
// line across the table is a row of its own.
func writeMarkdownTable(w *bufio.Writer, t *table) {
	mt := t.cellTable()
	w.WriteString("|")
	for _, c := range mt.Columns {
		w.WriteString(" " + mdCell(c.Heading) + " |")
	}
	w.WriteString("\n|")
	for _, c := range mt.Columns {
		if c.Right {
			w.WriteString("---:|")
		} else {
			w.WriteString("---|")
		}
	}
	w.WriteString("\n")
	for _, r := range mt.Rows {
		if r.Cells == nil {
			w.WriteString("| **" + mdCell(r.Line) + "** |" + strings.Repeat(" |", len(mt.Columns)-1) + "\n")
			continue
		}
		w.WriteString("|")
		for _, c := range r.Cells {
			parts := make([]string, len(c.Parts))
			for i, p := range c.Parts {
				s := mdCell(p.Text)
				if p.Code {
					s = mdCode(p.Text)
				}
				if p.Strong {
					s = "**" + s + "**"
				}
				parts[i] = s
			}
			w.WriteString(" " + strings.Join(parts, " ") + " |")
		}
		w.WriteString("\n")
	}
	if len(mt.Notes) > 0 {
		w.WriteString("\n")
		for i, n := range mt.Notes {
			w.WriteString(Superscript(i+1) + " " + mdText(n) + "  \n")
		}
	}
}

// A Table is a table of the document layer as a format that draws cells
// rather than aligning characters shows it (Markdown, the dashboard's
// HTML): a column joined to the one before it shares its cell, and group
// headings lead the heading of the column they start at.
type Table struct {
	Columns []TableColumn
	Rows    []TableRow
	// Notes are the footnotes the cells' marks number, from 1.
	Notes []string
}

// A TableColumn is a column's heading and whether it holds numbers,
// aligned right.
type TableColumn struct {
	Heading string
	Right   bool
}

// A TableRow is one cell per column, or when Cells is nil a line across
// the table (a heading inside it).
type TableRow struct {
	Cells []TableCell
	Line  string
}

// A TableCell is the non-empty parts of a fact: a value, its interval and
// its footnote marks, or a change, its test and marks.
type TableCell struct {
	Parts []TablePart
}

// A TablePart is one text of a cell. Strong marks what matters most (a
// regression), Code a function name or path.
type TablePart struct {
	Text         string
	Strong, Code bool
}

// cellTable lays t out with joined columns in one cell.
func (t *table) cellTable() Table {
	var starts []int // the first table column of each cell
	for i := range t.header {
		if i == 0 || !t.is(t.joined, i) {
			starts = append(starts, i)
		}
	}
	// A column that starts its innermost group carries the headings of
	// every group over it, as one Markdown heading row must.
	heading := func(col int) string {
		var parts []string
		for _, level := range t.groups {
			for _, s := range level {
				if s.Start <= col && col < s.Start+s.Len && s.Text != "" {
					parts = append(parts, s.Text)
				}
			}
		}
		if len(t.groups) > 0 && !startsSpan(t.groups[len(t.groups)-1], col) {
			parts = nil
		}
		if h := t.header[col]; h != "" {
			parts = append(parts, h)
		}
		return strings.Join(parts, " ")
	}
	out := Table{Notes: t.notes}
	for _, c := range starts {
		out.Columns = append(out.Columns, TableColumn{Heading: heading(c), Right: t.is(t.right, c)})
	}
	for _, r := range t.rows {
		if r.cells == nil {
			out.Rows = append(out.Rows, TableRow{Line: r.line})
			continue
		}
		row := TableRow{Cells: make([]TableCell, len(starts))}
		for k, c := range starts {
			end := len(t.header)
			if k+1 < len(starts) {
				end = starts[k+1]
			}
			for i := c; i < end && i < len(r.cells); i++ {
				if r.cells[i] != "" {
					row.Cells[k].Parts = append(row.Cells[k].Parts, TablePart{Text: r.cells[i], Strong: t.is(r.strong, i), Code: t.is(t.code, i)})
				}
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

func startsSpan(spans []Span, col int) bool {
	for _, s := range spans {
		if s.Start == col {
			return true
		}
	}
	return false
}

// mdText escapes the characters that would turn plain text into Markdown
// formatting, such as the * in main.(*T).M.
func mdText(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)
	return r.Replace(s)
}

// mdCell escapes s for a Markdown table cell: as mdText, and a pipe
// would end the cell.
func mdCell(s string) string { return strings.ReplaceAll(mdText(s), "|", `\|`) }

// mdCode wraps s in a code span, whose contents Markdown leaves alone; a
// pipe still ends a table cell, so it is escaped, which GitHub honours
// inside code spans in tables.
func mdCode(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, w int, right bool) string {
	n := w - width(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}
