package report

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"
)

// A doc is a report laid out once, independently of its format, so text
// and Markdown show the same facts in the same order.
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
// one or more lines), or a table; caption heads any of them.
type block struct {
	caption string
	lines   []string
	pairs   [][2]string
	items   [][]string
	table   *table
}

type table struct {
	header []string
	right  []bool // right-align the column (numbers)
	code   []bool // code in Markdown (function names, paths)
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (d *doc) add(s section) {
	if len(s.blocks) > 0 {
		d.sections = append(d.sections, s)
	}
}

// writeText lays the doc out for a terminal: upper-case section titles,
// two-space indents, columns aligned by padding.
func (d *doc) writeText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if d.title != "" {
		bw.WriteString(d.title + "\n")
	}
	for _, m := range d.meta {
		bw.WriteString(m + "\n")
	}
	for _, s := range d.sections {
		if s.title != "" { // an untitled section continues the title
			bw.WriteString("\n" + strings.ToUpper(s.title) + "\n")
		}
		for i, b := range s.blocks {
			if i > 0 && (b.caption != "" || b.table != nil) {
				bw.WriteString("\n")
			}
			if b.caption != "" {
				bw.WriteString("  " + b.caption + "\n")
			}
			for _, l := range b.lines {
				bw.WriteString("  " + l + "\n")
			}
			if len(b.pairs) > 0 {
				kw := 0
				for _, p := range b.pairs {
					kw = max(kw, width(p[0]))
				}
				for _, p := range b.pairs {
					bw.WriteString("  " + pad(p[0], kw, false) + "  " + p[1] + "\n")
				}
			}
			for _, it := range b.items {
				for j, l := range it {
					prefix := "  - "
					if j > 0 {
						prefix = "    "
					}
					bw.WriteString(prefix + l + "\n")
				}
			}
			if b.table != nil {
				writeTextTable(bw, b.table)
			}
		}
	}
	return bw.Flush()
}

func writeTextTable(w *bufio.Writer, t *table) {
	tt := &TextTable{Indent: "  "}
	for i, h := range t.header {
		a := Left
		if t.right[i] {
			a = Right
		}
		tt.Columns = append(tt.Columns, TextColumn{Heading: h, Align: a})
	}
	for _, r := range t.rows {
		tt.AddRow(r...)
	}
	tt.WriteText(w) // a bufio.Writer reports its errors on Flush
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
	for _, s := range d.sections {
		if s.title != "" {
			bw.WriteString("\n### " + mdText(s.title) + "\n")
		}
		for _, b := range s.blocks {
			bw.WriteString("\n")
			if b.caption != "" {
				bw.WriteString("**" + mdText(b.caption) + "**\n\n")
			}
			for _, l := range b.lines {
				bw.WriteString(mdText(l) + "  \n")
			}
			for _, p := range b.pairs {
				bw.WriteString("- **" + mdText(p[0]) + "**: " + mdText(p[1]) + "\n")
			}
			for _, it := range b.items {
				for j, l := range it {
					prefix := "- "
					if j > 0 {
						prefix = "  " // continuation of the list item
						bw.WriteString("  \n")
					}
					bw.WriteString(prefix + mdText(l))
				}
				bw.WriteString("\n")
			}
			if b.table != nil {
				writeMarkdownTable(bw, b.table)
			}
		}
	}
	return bw.Flush()
}

func writeMarkdownTable(w *bufio.Writer, t *table) {
	cell := func(i int, c string) string {
		if c == "" {
			return ""
		}
		if t.code[i] {
			return mdCode(c)
		}
		return mdCell(c)
	}
	w.WriteString("|")
	for _, h := range t.header {
		w.WriteString(" " + mdText(h) + " |")
	}
	w.WriteString("\n|")
	for i := range t.header {
		if t.right[i] {
			w.WriteString("---:|")
		} else {
			w.WriteString("---|")
		}
	}
	w.WriteString("\n")
	for _, r := range t.rows {
		w.WriteString("|")
		for i, c := range r {
			w.WriteString(" " + cell(i, c) + " |")
		}
		w.WriteString("\n")
	}
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
