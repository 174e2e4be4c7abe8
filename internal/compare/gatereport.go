package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"golang.org/x/perf/benchunit"

	"github.com/perfscope/perfscope/internal/report"
)

// A GateReport is a gate decision with the context a reader needs: what
// was compared, how, and how long it took.
type GateReport struct {
	Base      string        `json:"base"` // "main (1a2b3c4d5e6f)"
	Head      string        `json:"head"` // "working tree (…)"
	Rounds    int           `json:"rounds"`
	Benchtime string        `json:"benchtime"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	Decision  *Decision     `json:"decision"`
	// Notes are things the reader should know that are not failures,
	// such as packages that exist only in the head.
	Notes []string `json:"notes,omitempty"`
}

// Outcome is the one-line conclusion.
func (r *GateReport) Outcome() string {
	d := r.Decision
	switch d.ExitCode() {
	case 1:
		return fmt.Sprintf("FAIL: %d regression%s", d.Regressions, plural(d.Regressions))
	case 2:
		few, noisy := 0, 0
		worst := 0.0
		for _, j := range d.Judgements {
			switch j.Verdict {
			case TooFewSamples:
				few++
			case TooNoisy:
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
	if d.Improvements > 0 {
		return fmt.Sprintf("PASS: no regression, %d improvement%s", d.Improvements, plural(d.Improvements))
	}
	return "PASS: no regression"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// judgementRow formats the numbers of one judgement for tables.
func judgementRow(j Judgement, withPackage bool) (name, base, head, change, p string) {
	name = "Benchmark" + j.Benchmark + " " + j.Unit
	if withPackage && j.Package != "" {
		name = j.Package + " " + name
	}
	cls := benchunit.ClassOf(j.Unit)
	switch j.Verdict {
	case Added:
		return name, "", summarize(j.Head, cls), "", ""
	case Removed:
		return name, summarize(j.Base, cls), "", "", ""
	}
	sc := benchunit.CommonScale([]float64{j.BaseMedian, j.HeadMedian}, cls)
	base, head = sc.Format(j.BaseMedian), sc.Format(j.HeadMedian)
	change = fmt.Sprintf("%+.2f%%", j.Change*100)
	p = fmt.Sprintf("p=%.3f adj=%.3f n=%d+%d", j.P, j.AdjustedP, len(j.Base), len(j.Head))
	if j.Verdict == TooNoisy {
		if math.IsInf(j.Resolution, 1) {
			p += " ±∞"
		} else {
			p += fmt.Sprintf(" ±%.0f%%", 100*j.Resolution)
		}
	}
	return
}

// thresholdText shows the threshold of judged measurements only.
func thresholdText(j Judgement) string {
	switch j.Verdict {
	case NotGated, Added, Removed:
		return ""
	}
	return fmt.Sprintf("%.4g%%", j.Threshold*100)
}

func summarize(xs []float64, cls benchunit.Class) string {
	if len(xs) == 0 {
		return ""
	}
	return benchunit.Scale(xs[len(xs)/2], cls)
}

// interesting reports whether a judgement belongs in the short list that
// leads a report.
func interesting(j Judgement) bool {
	switch j.Verdict {
	case Regression, Improvement, TooFewSamples, TooNoisy, Added, Removed:
		return true
	}
	return false
}

// WriteText writes the report for a terminal or CI log: the outcome, the
// judgements that matter, then every measurement.
func (r *GateReport) WriteText(w io.Writer) error {
	var b strings.Builder
	d := r.Decision
	fmt.Fprintf(&b, "gate: base %s vs head %s\n", r.Base, r.Head)
	fmt.Fprintf(&b, "%d interleaved rounds, benchtime %s, alpha %.3g with Holm–Bonferroni over %d tests, %s\n\n", r.Rounds, r.Benchtime, d.Alpha, d.Tests, r.Elapsed.Round(time.Second))
	// One table, with a "pkg:" line before each package's rows (as
	// benchstat does for configuration), keeps the rows short.
	o := report.TextTable{Columns: []report.TextColumn{
		{Heading: "benchmark"}, {Heading: "base", Align: report.Right}, {Heading: "head", Align: report.Right},
		{Heading: "change", Align: report.Right}, {Heading: "threshold", Align: report.Right}, {Heading: "verdict"}, {Heading: "test"},
	}}
	pkg := ""
	for i, j := range d.Judgements {
		if i == 0 || j.Package != pkg {
			pkg = j.Package
			o.AddLine("pkg: " + pkg)
		}
		name, base, head, change, p := judgementRow(j, false)
		o.AddRow(name, base, head, change, thresholdText(j), strings.ToUpper(string(j.Verdict)), p)
	}
	if err := o.WriteText(&b); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "\n%s\n", r.Outcome())
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the report as a pull-request comment.
func (r *GateReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	d := r.Decision
	icon := map[int]string{0: "✅", 1: "❌", 2: "⚠️"}[d.ExitCode()]
	fmt.Fprintf(&b, "### %s perfscope gate — %s\n\n", icon, r.Outcome())
	fmt.Fprintf(&b, "Base %s vs head %s: %d interleaved rounds, benchtime %s, α = %.3g with Holm–Bonferroni over %d tests, %s.\n\n",
		report.MarkdownCell(r.Base), report.MarkdownCell(r.Head), r.Rounds, r.Benchtime, d.Alpha, d.Tests, r.Elapsed.Round(time.Second))
	table := func(filter func(Judgement) bool) {
		b.WriteString("| benchmark | base | head | change | threshold | verdict | test |\n| --- | --: | --: | --: | --: | --- | --- |\n")
		for _, j := range d.Judgements {
			if !filter(j) {
				continue
			}
			name, base, head, change, p := judgementRow(j, true)
			v := string(j.Verdict)
			if j.Verdict == Regression {
				v = "**" + v + "**"
				change = "**" + change + "**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", report.MarkdownCell(name), base, head, change, thresholdText(j), v, p)
		}
	}
	hasInteresting := false
	for _, j := range d.Judgements {
		hasInteresting = hasInteresting || interesting(j)
	}
	if hasInteresting {
		table(interesting)
		b.WriteString("\n")
	}
	b.WriteString("<details><summary>All measurements</summary>\n\n")
	table(func(Judgement) bool { return true })
	b.WriteString("\n</details>\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n> %s\n", report.MarkdownCell(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// MarshalJSON writes a judgement with null for numbers JSON cannot carry
// (a benchmark may report +Inf).
func (j Judgement) MarshalJSON() ([]byte, error) {
	type plain Judgement // without this method
	return json.Marshal(struct {
		plain
		Base       []*float64 `json:"base"`
		Head       []*float64 `json:"head"`
		BaseMedian *float64   `json:"base_median"`
		HeadMedian *float64   `json:"head_median"`
		Change     *float64   `json:"change"`
		Resolution *float64   `json:"resolution"`
	}{plain(j), report.JSONFloats(j.Base), report.JSONFloats(j.Head), report.JSONFloat(j.BaseMedian), report.JSONFloat(j.HeadMedian), report.JSONFloat(j.Change), report.JSONFloat(j.Resolution)})
}

// WriteJSON writes the report as one JSON object; field names are those
// of GateReport, Decision and Judgement, plus "outcome" and "exit_code".
// "resolution" is the relative half-width of the noisier median's 95%
// confidence interval (null when unbounded).
func (r *GateReport) WriteJSON(w io.Writer) error {
	out := struct {
		*GateReport
		Outcome  string `json:"outcome"`
		ExitCode int    `json:"exit_code"`
	}{r, r.Outcome(), r.Decision.ExitCode()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
