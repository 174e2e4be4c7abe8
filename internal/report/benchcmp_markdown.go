package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/measure"
)

// writeBenchMarkdown renders a benchmark comparison for a pull-request
// comment: one GitHub table per benchmark table, preceded by the
// configuration that changed, significant changes in bold, warnings as
// numbered footnotes.
func writeBenchMarkdown(w io.Writer, cmp *benchstats.Comparison) error {
	var b strings.Builder
	for i, t := range cmp.Tables {
		var cfg []string
		for _, kv := range changedConfig(cmp, i) {
			if v := strings.TrimSpace(kv.Value); v != "" {
				cfg = append(cfg, kv.Key+": "+mdCode(v))
			}
		}
		if len(cfg) > 0 {
			fmt.Fprintf(&b, "%s\n\n", strings.Join(cfg, " · "))
		}
		benchMarkdownTable(&b, t)
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func benchMarkdownTable(b *strings.Builder, t *benchstats.Table) {
	var notes TextTable // numbers the footnotes; never written as text
	marked := func(s string, errs []error) string {
		if m := notes.Note(errorTexts(errs)...); m != "" {
			return s + " " + m
		}
		return s
	}
	head := []string{"**" + mdCell(t.Unit) + "**"}
	rule := []string{"---"}
	for i, c := range t.Columns {
		head = append(head, mdCell(c.Label))
		rule = append(rule, "--:")
		if i > 0 {
			head = append(head, "vs base")
			rule = append(rule, "--:")
		}
	}
	fmt.Fprintf(b, "| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(rule, " | "))
	for _, r := range t.Rows {
		row := []string{mdCell(r.Name)}
		scale := rowScale(r, t.Unit)
		for i, c := range r.Cells {
			center, change := "", ""
			if c != nil {
				center = marked(scale.Format(c.Summary.Center)+" ± "+c.Summary.PctRangeString(), c.Warnings)
				if ch := c.Change; ch != nil {
					d := ch.Delta
					if ch.Significant && d != "~" {
						d = "**" + d + "**"
					}
					change = marked(d+" ("+ch.Test.String()+")", ch.Test.Warnings)
				}
			}
			row = append(row, center)
			if i > 0 {
				row = append(row, change)
			}
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	if len(t.Rows) > 1 {
		row := []string{"geomean"}
		for i, g := range t.Geomeans {
			center := ""
			if g.HasCenter {
				center = measure.TableValue(g.Center, t.Unit)
			}
			if i == 0 {
				row = append(row, marked(center, g.Warnings))
				continue
			}
			row = append(row, center, marked(geomeanDelta(g), g.Warnings))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	if len(notes.notes) > 0 {
		b.WriteString("\n")
		for i, n := range notes.notes {
			fmt.Fprintf(b, "%s %s  \n", Superscript(i+1), mdText(n))
		}
	}
}
