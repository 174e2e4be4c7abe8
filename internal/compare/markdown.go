package compare

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/perf/benchunit"
)

// WriteMarkdown renders the comparison for a pull-request comment: one
// GitHub table per benchmark table, significant changes in bold, warnings
// as numbered footnotes.
func WriteMarkdown(w io.Writer, cmp *Comparison) error {
	var b strings.Builder
	var prev [][2]string
	for _, t := range cmp.Tables {
		// Like the text form, name only the configuration that
		// changed since the previous table.
		var cfg []string
		cur := t.Config()
		for i, kv := range cur {
			v := strings.TrimSpace(kv[1])
			if v != "" && (i >= len(prev) || prev[i][1] != kv[1]) {
				cfg = append(cfg, kv[0]+": `"+v+"`")
			}
		}
		prev = cur
		if len(cfg) > 0 {
			fmt.Fprintf(&b, "%s\n\n", strings.Join(cfg, " · "))
		}
		t.writeMarkdown(&b)
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *Table) writeMarkdown(b *strings.Builder) {
	var notes footnotes
	hdr := []string{"**" + t.Unit + "**"}
	align := []string{"---"}
	for i := range t.Cols {
		hdr = append(hdr, mdEscape(t.ColumnLabel(i)))
		align = append(align, "--:")
		if i > 0 {
			hdr = append(hdr, "vs base")
			align = append(align, "--:")
		}
	}
	fmt.Fprintf(b, "| %s |\n| %s |\n", strings.Join(hdr, " | "), strings.Join(align, " | "))
	for r := range t.Rows {
		row := []string{mdEscape(t.RowLabel(r))}
		scaler := t.rowScaler(t.Rows[r])
		for c := range t.Cols {
			cell := t.Cell(r, c)
			if cell == nil {
				row = append(row, "")
				if c > 0 {
					row = append(row, "")
				}
				continue
			}
			cw, kw := cell.Warnings()
			row = append(row, fmt.Sprintf("%s ± %s%s", scaler.Format(cell.Summary.Center), cell.Summary.PctRangeString(), sup(notes.mark(cw))))
			if c == 0 {
				continue
			}
			if cell.Baseline == nil {
				row = append(row, "")
				continue
			}
			d := cell.Delta()
			if cell.Significant() && d != "~" {
				d = "**" + d + "**"
			}
			row = append(row, fmt.Sprintf("%s (%s)%s", d, cell.Comparison.String(), sup(notes.mark(kw))))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	if len(t.Rows) > 1 {
		row := []string{"geomean"}
		cls := benchunit.ClassOf(t.Unit)
		for c, g := range t.Geomeans {
			v := ""
			if g.HasCenter {
				v = benchunit.Scale(g.Center, cls)
			}
			if c == 0 {
				row = append(row, v+sup(notes.mark(g.Warnings)))
				continue
			}
			row = append(row, v, geomeanDelta(g)+sup(notes.mark(g.Warnings)))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	if len(notes.list) > 0 {
		b.WriteString("\n")
		for i, n := range notes.list {
			fmt.Fprintf(b, "%s %s  \n", superscript(i+1), mdEscape(n))
		}
	}
}

func sup(marks string) string {
	if marks == "" {
		return ""
	}
	return " " + marks
}

// mdEscape keeps benchmark names from breaking table cells or turning
// into emphasis.
func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`")
	return r.Replace(s)
}
