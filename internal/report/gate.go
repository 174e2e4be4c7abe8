package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/units"
)

// WriteGate renders a gate report in format f: the outcome, the
// judgements that matter, then every measurement. Its JSON form is the
// gate.Report object plus "outcome" (the one-line conclusion) and
// "exit_code"; in judgements, "resolution" is the relative half-width of
// the noisier median's 95% confidence interval (null when unbounded).
func WriteGate(w io.Writer, f Format, r *gate.Report) error {
	if f == JSON {
		return writeJSON(w, gateJSON(r))
	}
	return renderDoc(w, f, gateDoc(r))
}

// gateJSON is the JSON form of a gate report: its own fields, with null
// for numbers JSON cannot carry (a benchmark may report +Inf, and an
// unbounded resolution is +Inf).
func gateJSON(r *gate.Report) any {
	type judgement struct {
		gate.Judgement
		// These shadow the embedded fields of the same names.
		Base       []*float64 `json:"base"`
		Head       []*float64 `json:"head"`
		BaseMedian *float64   `json:"base_median"`
		HeadMedian *float64   `json:"head_median"`
		Change     *float64   `json:"change"`
		Resolution *float64   `json:"resolution"`
	}
	type decision struct {
		*gate.Decision
		Judgements []judgement `json:"judgements"`
	}
	d := decision{Decision: r.Decision, Judgements: make([]judgement, len(r.Decision.Judgements))}
	for i, j := range r.Decision.Judgements {
		d.Judgements[i] = judgement{j, finites(j.Base), finites(j.Head), finite(j.BaseMedian), finite(j.HeadMedian), finite(j.Change), finite(j.Resolution)}
	}
	return struct {
		*gate.Report
		Decision decision `json:"decision"`
		Notes    []string `json:"notes,omitempty"`
		Outcome  string   `json:"outcome"`
		ExitCode int      `json:"exit_code"`
	}{r, d, gateNotes(r), gateOutcome(r.Decision), r.Decision.ExitCode()}
}

func finites(xs []float64) []*float64 {
	out := make([]*float64, len(xs))
	for i, x := range xs {
		out[i] = finite(x)
	}
	return out
}

// finite is x, or nil for values JSON cannot carry (±Inf, NaN).
func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

// gateOutcome is the one-line conclusion of a decision.
func gateOutcome(d *gate.Decision) string {
	switch d.ExitCode() {
	case 1:
		return fmt.Sprintf("FAIL: %d regression%s", d.Regressions, plural(d.Regressions))
	case 2:
		few, noisy := 0, 0
		worst := 0.0
		for _, j := range d.Judgements {
			switch j.Verdict {
			case gate.TooFewSamples:
				few++
			case gate.TooNoisy:
				noisy++
				worst = max(worst, j.Resolution)
			}
		}
		var why []string
		if few > 0 {
			why = append(why, fmt.Sprintf("%d measurement%s had too few samples to conclude (raise --rounds)", few, plural(few)))
		}
		if noisy > 0 {
			w := "unbounded"
			if !math.IsInf(worst, 1) {
				w = fmt.Sprintf("±%.0f%%", 100*worst)
			}
			why = append(why, fmt.Sprintf("%d measurement%s too noisy to see a change of the threshold's size (median uncertain by up to %s; run on a quieter machine, raise --rounds or use --max-rounds)", noisy, plural(noisy), w))
		}
		return "UNDECIDED: " + strings.Join(why, "; ")
	}
	out := "PASS: no regression"
	if d.Improvements > 0 {
		out += fmt.Sprintf(", %d improvement%s", d.Improvements, plural(d.Improvements))
	}
	if d.Undecided > 0 {
		out += fmt.Sprintf(" (%d wall-time measurement%s too noisy to decide; not gated without --strict)", d.Undecided, plural(d.Undecided))
	}
	return out
}

// gateMethod says in one line what decided and how.
func gateMethod(r *gate.Report) string {
	d := r.Decision
	if r.Measure == gate.MeasureInstructions {
		return fmt.Sprintf("measure: instructions (instructions/op, allocs/op, B/op decide exactly; wall time from %d interleaved rounds of %s, alpha %.3g with Holm–Bonferroni over %d tests, gates only when decidable), %s",
			r.Rounds, r.Benchtime, d.Alpha, d.Tests, r.Elapsed.Round(time.Second))
	}
	return fmt.Sprintf("measure: time, %d interleaved rounds, benchtime %s, alpha %.3g with Holm–Bonferroni over %d tests, %s",
		r.Rounds, r.Benchtime, d.Alpha, d.Tests, r.Elapsed.Round(time.Second))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// gateRow is the cells of one judgement: benchmark, base, head, change,
// threshold, verdict, test.
func gateRow(j gate.Judgement, withPackage bool) []string {
	name := "Benchmark" + j.Benchmark + " " + j.Unit
	if withPackage && j.Package != "" {
		name = j.Package + " " + name
	}
	threshold := ""
	switch j.Verdict {
	case gate.NotGated, gate.Added, gate.Removed:
	default:
		threshold = fmt.Sprintf("%.4g%%", j.Threshold*100)
	}
	switch j.Verdict {
	case gate.Added:
		return []string{name, "", middle(j.Head, j.Unit), "", threshold, string(j.Verdict), ""}
	case gate.Removed:
		return []string{name, middle(j.Base, j.Unit), "", "", threshold, string(j.Verdict), ""}
	}
	sc := measure.TableScale(j.Unit, []float64{j.BaseMedian, j.HeadMedian})
	test := fmt.Sprintf("p=%.3f adj=%.3f n=%d+%d", j.P, j.AdjustedP, len(j.Base), len(j.Head))
	if j.Exact {
		test = fmt.Sprintf("exact n=%d+%d ±%.2f%%", len(j.Base), len(j.Head), 100*j.Resolution)
	}
	if j.Verdict == gate.TooNoisy {
		if math.IsInf(j.Resolution, 1) {
			test += " ±∞"
		} else {
			test += fmt.Sprintf(" ±%.0f%%", 100*j.Resolution)
		}
	}
	return []string{name, sc.Format(j.BaseMedian), sc.Format(j.HeadMedian), measure.TableChange(j.Change), threshold, string(j.Verdict), test}
}

// middle shows the one side a benchmark ran on by its middle sample.
func middle(xs []float64, unit string) string {
	if len(xs) == 0 {
		return ""
	}
	return measure.TableValue(xs[len(xs)/2], unit)
}

// gateSections are the short tables that lead a report, in order: what
// fails first, then what got better, then what could not be judged.
// Every judgement is in at most one of them; every measurement then
// follows in full.
var gateSections = []struct {
	title    string
	verdicts []gate.Verdict
}{
	{"Regressions", []gate.Verdict{gate.Regression}},
	{"Improvements", []gate.Verdict{gate.Improvement}},
	{"Undecided", []gate.Verdict{gate.TooFewSamples, gate.TooNoisy}},
	{"On one side only", []gate.Verdict{gate.Added, gate.Removed}},
}

// gateDoc lays the report out: the outcome as the title, what was
// compared and how, the judgements that matter, then every measurement
// under a line per package (as benchstat does for configuration), which
// keeps the rows short; a regression's change and verdict are strong, its
// verdict in capitals.
func gateDoc(r *gate.Report) *doc {
	d := r.Decision
	icon := map[int]string{0: "✅", 1: "❌", 2: "⚠️"}[d.ExitCode()]
	doc := &doc{title: icon + " perfscope gate — " + gateOutcome(d), meta: []string{"base " + r.Base + " vs head " + r.Head, gateMethod(r)}}
	table := func(keep func(gate.Judgement) bool, byPackage bool) *table {
		t := &table{header: []string{"benchmark", "base", "head", "change", "threshold", "verdict", "test"}, right: []bool{false, true, true, true, true, false, false}}
		for i, j := range d.Judgements {
			if !keep(j) {
				continue
			}
			if byPackage && (i == 0 || j.Package != d.Judgements[i-1].Package) {
				t.addLine("pkg: " + j.Package)
			}
			cells := gateRow(j, !byPackage)
			if j.Verdict == gate.Regression {
				cells[5] = strings.ToUpper(cells[5])
				t.addStrong(cells, 3, 5)
				continue
			}
			t.add(cells...)
		}
		return t
	}
	for _, sec := range gateSections {
		in := func(j gate.Judgement) bool { return slices.Contains(sec.verdicts, j.Verdict) }
		if slices.ContainsFunc(d.Judgements, in) {
			doc.add(section{title: sec.title, blocks: []block{{table: table(in, false)}}})
		}
	}
	if len(r.Explanations) > 0 {
		doc.add(gateExplanations(r.Explanations))
	}
	all := block{caption: "every benchmark and unit, by package", table: table(func(gate.Judgement) bool { return true }, true), folded: true}
	doc.add(section{title: "All measurements", blocks: []block{all, {notes: gateNotes(r)}}})
	return doc
}

// gateExplanations lays out where each explained measure changed: per
// benchmark, one folded block of its top functions (or allocation sites),
// then one of its top source lines.
func gateExplanations(es []gate.Explanation) section {
	s := section{title: "Where it changed"}
	for _, e := range es {
		caption, ft, lt := explanationTables(e)
		s.blocks = append(s.blocks, block{caption: caption, table: ft, folded: true})
		if lt != nil {
			s.blocks = append(s.blocks, block{caption: "Benchmark" + e.Benchmark + ": the lines that changed most", table: lt, folded: true})
		}
	}
	return s
}

// explanationTables lays out one explanation: its caption, the table of
// its functions (or allocation sites) and that of its lines (nil without
// lines).
func explanationTables(e gate.Explanation) (caption string, funcs, lines *table) {
	what := "function"
	if e.Unit != measure.Instructions {
		what = "allocation site"
	}
	caption = fmt.Sprintf("%s Benchmark%s %s: %s → %s, %s per operation", e.Package, e.Benchmark, e.Unit,
		units.Number(e.Base), units.Number(e.Head), signedNumber(e.Delta))
	funcs = &table{header: []string{what, "base", "head", "delta", "share"}, right: []bool{false, true, true, true, true}, code: []bool{true}}
	for _, c := range e.Functions {
		name := c.Function
		if w := changeWhere(c); w != "" {
			name += " " + w
		}
		funcs.add(name, units.Number(c.Base), units.Number(c.Head), signedNumber(c.Delta), units.Percent(c.Share))
	}
	if e.Omitted > 0 {
		funcs.addLine(fmt.Sprintf("%d more %s%s changed: %s together", e.Omitted, what, plural(e.Omitted), signedNumber(e.Rest)))
	}
	if len(e.Lines) > 0 {
		lines = &table{header: []string{"line", "source", "base", "head", "delta", "share"}, right: []bool{false, false, true, true, true, true}, code: []bool{true, true}}
		for _, c := range e.Lines {
			lines.add(changeWhere(c), c.Source, units.Number(c.Base), units.Number(c.Head), signedNumber(c.Delta), units.Percent(c.Share))
		}
	}
	return caption, funcs, lines
}

// An ExplanationView is an explanation as the dashboard draws it: the
// caption and tables the text and Markdown outputs have.
type ExplanationView struct {
	Caption   string
	Functions Table
	// Lines is empty when the explanation has no lines.
	Lines Table
}

// ExplanationTables lays out e for the dashboard, as the gate's "Where it
// changed" section does.
func ExplanationTables(e gate.Explanation) ExplanationView {
	caption, ft, lt := explanationTables(e)
	v := ExplanationView{Caption: caption, Functions: ft.cellTable()}
	if lt != nil {
		v.Lines = lt.cellTable()
	}
	return v
}

// signedNumber is units.Number with a sign: "+2,800", "-8.76".
func signedNumber(x float64) string {
	if x > 0 {
		return "+" + units.Number(x)
	}
	return units.Number(x)
}

// changeWhere is the place a change names: "file:line" for a line or an
// allocation site, else "".
func changeWhere(c gate.Change) string {
	if c.File == "" {
		return ""
	}
	if c.Line > 0 {
		return c.File + ":" + strconv.Itoa(c.Line)
	}
	return c.File
}

// gateNotes are a gate's notes, what limited its instruction counts first.
func gateNotes(r *gate.Report) []string {
	return append(countNoteTexts(r.CountNotes), r.Notes...)
}
