package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/units"
)

// FindingText writes a finding's sentence (its summary, an evidence's
// detail, a rule's explanation): its words as the rule put them, its
// values as the rest of the report writes them.
func FindingText(t findings.Text) string {
	var b strings.Builder
	for _, p := range t {
		switch p.Kind {
		case findings.Words:
			b.WriteString(p.Words)
		case findings.Share:
			b.WriteString(units.Percent(p.Value))
		case findings.Count:
			b.WriteString(strconv.FormatFloat(p.Value, 'f', 0, 64))
		case findings.Quantity:
			b.WriteString(units.Value(int64(p.Value), p.Unit))
		case findings.Cores:
			b.WriteString(strconv.FormatFloat(p.Value, 'f', 2, 64))
		case findings.Seconds:
			b.WriteString(strconv.FormatFloat(p.Value, 'f', 1, 64) + "s")
		}
	}
	return b.String()
}

// measureText is one number of a piece of evidence: "12.3% of CPU (1.23s)".
func measureText(m findings.Measure) string {
	return units.Percent(m.Share) + " of " + m.Resource.Noun() + " (" + units.Value(m.Value, m.Unit) + ")"
}

// Explain returns the long explanation of a rule, with its fix, as
// `perfscope report --explain RULE` prints it.
func Explain(id string) (string, error) {
	r, ok := findings.Lookup(id)
	if !ok {
		return "", fmt.Errorf("unknown rule %q: the rules are %s", id, strings.Join(findings.RuleIDs(), ", "))
	}
	var b strings.Builder
	b.WriteString(r.ID + ": " + r.Title + "\n\n")
	b.WriteString(strings.TrimSpace(FindingText(r.Explanation)))
	b.WriteString("\n\nFix: ")
	b.WriteString(r.Fix.Summary)
	b.WriteString("\n")
	if r.Fix.Example != "" {
		b.WriteString("\n")
		for _, line := range exampleLines(r.Fix.Example) {
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String(), nil
}

// findingJSON is a finding in JSON, with findings.Finding's values and
// its sentences written as strings. Field names are stable (see the
// findings package).
type findingJSON struct {
	Rule     string            `json:"rule"`
	Title    string            `json:"title"`
	Severity float64           `json:"severity"`
	Resource findings.Resource `json:"resource"`
	Summary  string            `json:"summary"`
	Evidence []evidenceJSON    `json:"evidence"`
	Fix      findings.Fix      `json:"fix"`
	Notes    []string          `json:"notes,omitempty"`
}

type evidenceJSON struct {
	Function string             `json:"function"`
	File     string             `json:"file,omitempty"`
	Line     int64              `json:"line,omitempty"`
	Call     string             `json:"call,omitempty"`
	Source   string             `json:"source,omitempty"`
	Measures []findings.Measure `json:"measures"`
	Compiler []string           `json:"compiler,omitempty"`
	Stack    []string           `json:"stack,omitempty"`
	Detail   string             `json:"detail,omitempty"`
}

// findingsJSON is fs in JSON: an array, empty rather than null.
func findingsJSON(fs []findings.Finding) []findingJSON {
	out := make([]findingJSON, len(fs))
	for i, f := range fs {
		j := findingJSON{Rule: f.Rule, Title: f.Title, Severity: f.Severity, Resource: f.Resource,
			Summary: FindingText(f.Summary), Fix: f.Fix, Notes: f.Notes}
		if f.Evidence != nil {
			j.Evidence = make([]evidenceJSON, len(f.Evidence))
		}
		for k, ev := range f.Evidence {
			j.Evidence[k] = evidenceJSON{Function: ev.Function, File: ev.File, Line: ev.Line, Call: ev.Call,
				Source: ev.Source, Measures: ev.Measures, Compiler: ev.Compiler, Stack: ev.Stack, Detail: FindingText(ev.Detail)}
		}
		out[i] = j
	}
	return out
}
