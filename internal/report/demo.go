package report

import (
	"fmt"
	"io"

	"github.com/perfscope/perfscope/internal/analysis"
)

// A DemoMode is one mode of the demo as WriteDemo shows it.
type DemoMode struct {
	Example string // "leftpad"
	Mode    string // "naive"
	RunDir  string // where its run was saved
	Result  *analysis.Result
}

// WriteDemo writes the demo's outcome. By default it is a summary: for each
// mode the headline of every finding and the command that shows its whole
// report, then the modes side by side (cmp, when every mode was profiled).
// full writes each mode's whole report instead of the headlines, as
// 'perfscope report' does. JSON is always whole: each mode's report, then
// the comparison.
func WriteDemo(w io.Writer, f Format, modes []DemoMode, cmp *analysis.SideBySide, full bool) error {
	if f == JSON || full {
		for _, m := range modes {
			if f != JSON {
				d := &doc{title: "=== " + m.Example + " --mode " + m.Mode + " ==="}
				if err := renderDoc(w, f, d); err != nil {
					return err
				}
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
			if err := Write(w, f, m.Result.Analysis, m.Result.Findings); err != nil {
				return err
			}
		}
		if cmp == nil {
			return nil
		}
		if f != JSON {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		return WriteSideBySide(w, f, cmp)
	}
	return renderDoc(w, f, demoDoc(modes, cmp))
}

// demoDoc lays out the demo's summary.
func demoDoc(modes []DemoMode, cmp *analysis.SideBySide) *doc {
	d := &doc{title: "perfscope demo"}
	for _, m := range modes {
		s := section{title: m.Example + ", " + m.Mode + " mode"}
		var heads []string
		for i, f := range m.Result.Findings {
			heads = append(heads, fmt.Sprintf("%d. %s  [%s]  (%s)", i+1, f.Title, severityText(f), f.Rule))
		}
		if len(heads) == 0 {
			heads = []string{"no findings: no rule found a known problem in this run"}
		}
		if n := len(m.Result.Analysis.Warnings); n > 0 {
			heads = append(heads, fmt.Sprintf("and %d warnings about the run", n))
		}
		s.blocks = append(s.blocks, block{caption: "findings; the whole report, with evidence, source lines and fixes: perfscope report " + m.RunDir, lines: heads})
		d.add(s)
	}
	if cmp != nil {
		d.sections = append(d.sections, comparisonDoc(cmp).sections...)
	}
	return d
}
