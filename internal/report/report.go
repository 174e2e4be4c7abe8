// Package report renders analyses, findings, comparisons, load results,
// benchmark runs, escape listings and upload answers as text for a
// terminal, Markdown for pull-request comments and JSON for machines. It only
// renders: what is hot, what changed and what it means were decided by the
// packages that computed them, and every format shows the same facts.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/profiles"
)

// A Format is an output format.
type Format string

// Output formats.
const (
	Text     Format = "text"     // aligned columns for a terminal
	Markdown Format = "markdown" // GitHub-flavoured Markdown, for PR comments
	JSON     Format = "json"     // the data itself, with stable field names
)

// Formats lists the formats, the default first.
func Formats() []string { return []string{string(Text), string(Markdown), string(JSON)} }

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, Markdown, JSON:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q: use one of %s", s, strings.Join(Formats(), ", "))
}

// Write renders the analysis a in format f, with the findings diagnosed from
// it first (in the order given: findings.Diagnose ranks them by severity).
//
// The JSON form is the Analysis object with one more field, "findings"
// (always present, possibly empty), holding the findings as RenderFindings
// writes them.
func Write(w io.Writer, f Format, a *profiles.Analysis, fs []findings.Finding) error {
	if f == JSON {
		// load stays at the top level, where it was before the run
		// description carried it.
		return writeJSON(w, struct {
			Findings []findingJSON   `json:"findings"`
			Load     *loadgen.Result `json:"load,omitempty"`
			*profiles.Analysis
		}{findingsJSON(fs), a.Run.Load, a})
	}
	body := analysisDoc(a)
	head := &doc{title: body.title, meta: body.meta}
	body.title, body.meta = "", nil
	if err := renderDoc(w, f, head); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write %s report: %w", f, err)
	}
	if err := renderRunFindings(w, f, fs, findingsAbsence(a)); err != nil {
		return err
	}
	return renderDoc(w, f, body)
}

// WriteAnalysis renders a's sections in format f, text or markdown,
// without findings: for a page that shows the findings its own way.
func WriteAnalysis(w io.Writer, f Format, a *profiles.Analysis) error {
	return renderDoc(w, f, analysisDoc(a))
}

// WriteSideBySide renders two analyses side by side in format f; its JSON
// form is the SideBySide object.
func WriteSideBySide(w io.Writer, f Format, c *analysis.SideBySide) error {
	if f == JSON {
		return writeJSON(w, c)
	}
	return renderDoc(w, f, comparisonDoc(c))
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON report: %w", err)
	}
	return nil
}

func renderDoc(w io.Writer, f Format, d *doc) error {
	var err error
	switch f {
	case Text:
		err = d.writeText(w)
	case Markdown:
		err = d.writeMarkdown(w)
	default:
		return fmt.Errorf("unknown format %q", f)
	}
	if err != nil {
		return fmt.Errorf("write %s report: %w", f, err)
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
