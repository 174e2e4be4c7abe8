package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/units"
)

// Findings are not yet laid out through the document layer (document.go):
// a finding's evidence nests lists that hold code (its source line, a
// stack folded away in Markdown) inside a numbered entry, which the
// document does not model yet. Their sentences arrive as findings.Texts,
// whose values are written here (FindingText), in every format.

// RenderFindings writes diagnosed findings, in the order given (Diagnose
// ranks them by severity), in format f. The JSON form is
// {"findings": [...]}, each finding with the field names the findings
// package documents and its sentences written as strings.
func RenderFindings(w io.Writer, f Format, fs []findings.Finding) error {
	switch f {
	case JSON:
		return writeJSON(w, struct {
			Findings []findingJSON `json:"findings"`
		}{findingsJSON(fs)})
	case Markdown:
		return RenderFindingsMarkdown(w, fs)
	}
	return RenderFindingsText(w, fs)
}

// renderRunFindings writes the findings of a run; absence, when not empty,
// replaces "none" (see findingsAbsence), and heads the findings of a failed
// load.
func renderRunFindings(w io.Writer, f Format, fs []findings.Finding, absence string) error {
	if absence == "" {
		return RenderFindings(w, f, fs)
	}
	if f == Markdown {
		if _, err := fmt.Fprintf(w, "### Findings\n\n%s.\n", mdText(capitalize(absence))); err != nil {
			return fmt.Errorf("write findings: %w", err)
		}
	} else if _, err := fmt.Fprintf(w, "FINDINGS\n  %s\n", absence); err != nil {
		return fmt.Errorf("write findings: %w", err)
	}
	if len(fs) == 0 {
		return nil
	}
	if f == Markdown {
		return renderFindingsMarkdownBody(w, fs)
	}
	return renderFindingsTextBody(w, fs)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// RenderFindingsText writes findings for a terminal: a numbered heading per
// finding with its share, the summary, each evidence line with its numbers,
// source and compiler reasons, the fix with its example, and the notes.
func RenderFindingsText(w io.Writer, fs []findings.Finding) error {
	head := "FINDINGS\n"
	if len(fs) == 0 {
		head += "  none: no rule found a known problem in this run\n"
	}
	if _, err := io.WriteString(w, head); err != nil {
		return fmt.Errorf("write findings: %w", err)
	}
	return renderFindingsTextBody(w, fs)
}

func renderFindingsTextBody(w io.Writer, fs []findings.Finding) error {
	bw := bufio.NewWriter(w)
	for i, f := range fs {
		fmt.Fprintf(bw, "\n%d. %s  [%s]  (%s)\n", i+1, f.Title, severityText(f), f.Rule)
		writeWrapped(bw, "   ", FindingText(f.Summary))
		for _, ev := range f.Evidence {
			bw.WriteString("   - " + evidenceHead(ev) + "\n")
			if ev.Source != "" {
				bw.WriteString("       | " + ev.Source + "\n")
			}
			if m := measuresText(ev.Measures); m != "" {
				bw.WriteString("       " + m + "\n")
			}
			if len(ev.Detail) > 0 {
				bw.WriteString("       " + FindingText(ev.Detail) + "\n")
			}
			for _, c := range ev.Compiler {
				bw.WriteString("       compiler: " + c + "\n")
			}
			for j, fr := range ev.Stack {
				if j == 8 {
					fmt.Fprintf(bw, "         ... %d more frames\n", len(ev.Stack)-j)
					break
				}
				bw.WriteString("         " + fr + "\n")
			}
		}
		writeWrapped(bw, "   fix: ", f.Fix.Summary)
		for _, line := range exampleLines(f.Fix.Example) {
			bw.WriteString("       " + line + "\n")
		}
		for _, n := range f.Notes {
			writeWrapped(bw, "   note: ", n)
		}
		fmt.Fprintf(bw, "   more: perfscope report --explain %s\n", f.Rule)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write findings: %w", err)
	}
	return nil
}

// RenderFindingsMarkdown writes findings as GitHub-flavoured Markdown, for
// pull-request comments.
func RenderFindingsMarkdown(w io.Writer, fs []findings.Finding) error {
	head := "### Findings\n\n"
	if len(fs) == 0 {
		head += "None: no rule found a known problem in this run.\n"
	}
	if _, err := io.WriteString(w, head); err != nil {
		return fmt.Errorf("write findings: %w", err)
	}
	return renderFindingsMarkdownBody(w, fs)
}

func renderFindingsMarkdownBody(w io.Writer, fs []findings.Finding) error {
	bw := bufio.NewWriter(w)
	for i, f := range fs {
		fmt.Fprintf(bw, "#### %d. %s — %s\n\n", i+1, mdText(f.Title), severityText(f))
		fmt.Fprintf(bw, "%s `%s`\n\n", mdText(FindingText(f.Summary)), f.Rule)
		for _, ev := range f.Evidence {
			fmt.Fprintf(bw, "- %s", mdEvidenceHead(ev))
			if m := measuresText(ev.Measures); m != "" {
				bw.WriteString(": " + mdText(m))
			}
			bw.WriteString("\n")
			if ev.Source != "" {
				bw.WriteString("  ```go\n  " + ev.Source + "\n  ```\n")
			}
			if len(ev.Detail) > 0 {
				bw.WriteString("  " + mdText(FindingText(ev.Detail)) + "\n")
			}
			for _, c := range ev.Compiler {
				bw.WriteString("  - compiler: " + mdText(c) + "\n")
			}
			if len(ev.Stack) > 0 {
				bw.WriteString("  <details><summary>stack</summary>\n\n  ```\n")
				for _, fr := range ev.Stack {
					bw.WriteString("  " + fr + "\n")
				}
				bw.WriteString("  ```\n  </details>\n")
			}
		}
		fmt.Fprintf(bw, "\n**Fix:** %s\n", mdText(f.Fix.Summary))
		if f.Fix.Example != "" {
			bw.WriteString("\n```go\n" + strings.TrimRight(f.Fix.Example, "\n") + "\n```\n")
		}
		for _, n := range f.Notes {
			bw.WriteString("\n> " + mdText(n) + "\n")
		}
		bw.WriteString("\n")
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write findings: %w", err)
	}
	return nil
}

// severityText is "28.8% of allocated objects".
func severityText(f findings.Finding) string {
	return units.Percent(f.Severity) + " of " + f.Resource.Noun()
}

func evidenceHead(ev findings.Evidence) string {
	s := ev.Function
	if w := ev.Where(); w != "" {
		s += "  " + w
	}
	if ev.Call != "" {
		s += "  calls " + ev.Call
	}
	return s
}

func mdEvidenceHead(ev findings.Evidence) string {
	s := mdCode(ev.Function)
	if w := ev.Where(); w != "" {
		s += " at " + mdCode(w)
	}
	if ev.Call != "" {
		s += " (calls " + mdCode(ev.Call) + ")"
	}
	return s
}

func measuresText(ms []findings.Measure) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = measureText(m)
	}
	return strings.Join(parts, ", ")
}

func exampleLines(ex string) []string {
	if ex == "" {
		return nil
	}
	return strings.Split(strings.TrimRight(ex, "\n"), "\n")
}

// writeWrapped writes s after prefix, wrapped at 100 columns, continuation
// lines indented like the text after the prefix.
func writeWrapped(w *bufio.Writer, prefix, s string) {
	const limit = 100
	indent := strings.Repeat(" ", width(prefix))
	line := prefix
	for _, word := range strings.Fields(s) {
		if width(line)+1+width(word) > limit && strings.TrimSpace(line) != strings.TrimSpace(prefix) {
			w.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		}
		if line != prefix && line != indent {
			line += " "
		}
		line += word
	}
	w.WriteString(strings.TrimRight(line, " ") + "\n")
}
