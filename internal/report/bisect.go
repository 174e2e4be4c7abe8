package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/units"
)

// WriteBisect renders a bisection in format f: the answer (the first bad
// commit, with the measure at it and at the last good commit before it),
// the builds it took, the commits skipped, then every step. Its JSON form
// is the gate.BisectResult object plus "outcome" (the one-line
// conclusion) and "exit_code"; a change from 0, which has no ratio, is
// null.
func WriteBisect(w io.Writer, f Format, r *gate.BisectResult) error {
	if f == JSON {
		return writeJSON(w, bisectJSON(r))
	}
	return renderDoc(w, f, bisectDoc(r))
}

// BisectProgress is the line that says which commit a bisection is
// measuring, or what it concluded there.
func BisectProgress(s gate.BisectStep) string {
	what := fmt.Sprintf("%s %s", gitstate.Short(s.Hash), s.Subject)
	switch s.Verdict {
	case "":
		return fmt.Sprintf("bisect: building and measuring %s commit %s", s.Role, what)
	case gate.BisectSkipped:
		return fmt.Sprintf("bisect: skipped %s: %s", what, s.Reason)
	}
	return fmt.Sprintf("bisect: %s is %s (%s)", what, s.Verdict, bisectValues(s.Values))
}

// bisectOutcome is the one-line conclusion.
func bisectOutcome(r *gate.BisectResult) string {
	switch {
	case !r.Moved:
		return fmt.Sprintf("nothing to find: %s did not move beyond %s from --good to --bad", r.Unit, units.Percent(r.Threshold))
	case r.FirstBad == nil:
		return "not finished"
	case len(r.Candidates) > 0:
		return fmt.Sprintf("the change began at one of %d commits; skipped commits leave it open", len(r.Candidates))
	}
	return fmt.Sprintf("first bad commit %s %s", gitstate.Short(r.FirstBad.Hash), r.FirstBad.Subject)
}

func bisectDoc(r *gate.BisectResult) *doc {
	d := &doc{
		title: "perfscope bisect — " + bisectOutcome(r),
		meta: []string{
			fmt.Sprintf("%s of --bench %s, moved beyond %s from good %s (%s) to bad %s (%s)", r.Unit, r.Bench,
				units.Percent(r.Threshold), r.Good.Ref, gitstate.Short(r.Good.Hash), r.Bad.Ref, gitstate.Short(r.Bad.Hash)),
			fmt.Sprintf("%d commit%s on the first-parent path; %d built, %d measured, %d skipped", r.PathCommits, plural(r.PathCommits), r.Builds, r.Counted, len(r.Skipped)),
		},
	}
	if r.FirstBad != nil {
		var b block
		if len(r.Candidates) > 0 {
			b.caption = "the change began at one of these (oldest first)"
			for _, c := range r.Candidates {
				b.items = append(b.items, []string{gitstate.Short(c.Hash) + " " + c.Subject})
			}
		} else {
			b.pairs = [][2]string{{"commit", r.FirstBad.Hash}, {"subject", r.FirstBad.Subject}}
			if !r.FirstBad.Time.IsZero() {
				b.pairs = append(b.pairs, [2]string{"date", r.FirstBad.Time.Format("2006-01-02 15:04 -0700")})
			}
		}
		t := &table{header: []string{"benchmark", "last good " + gitstate.Short(r.LastGood.Hash), "first bad " + gitstate.Short(r.FirstBad.Hash), "change"}, right: []bool{false, true, true, true}}
		for i, v := range r.FirstBad.Values {
			before := ""
			if i < len(r.LastGood.Values) {
				before = measure.Format(r.LastGood.Values[i].Value, r.Unit)
			}
			t.addStrong([]string{benchName(v.Package, v.Benchmark), before, measure.Format(v.Value, r.Unit), measure.TableChange(v.Change)}, 3)
		}
		d.add(section{title: "First bad commit", blocks: []block{b, {caption: r.Unit + " (change from --good)", table: t}}})
	}
	ends := &table{header: []string{"benchmark", "good", "bad", "change", "followed"}, right: []bool{false, true, true, true, false}}
	for _, b := range r.Benchmarks {
		followed := "no: within the threshold"
		if b.Moved {
			followed = "yes"
		}
		ends.add(benchName(b.Package, b.Benchmark), measure.Format(b.Good, r.Unit), measure.Format(b.Bad, r.Unit), measure.TableChange(b.Change), followed)
	}
	d.add(section{title: "Good and bad", blocks: []block{{table: ends}}})
	if len(r.Skipped) > 0 {
		var b block
		for _, s := range r.Skipped {
			b.items = append(b.items, []string{gitstate.Short(s.Hash) + " " + s.Subject + ": " + s.Reason})
		}
		d.add(section{title: "Skipped", blocks: []block{b}})
	}
	if len(r.Explanations) > 0 {
		d.add(gateExplanations(r.Explanations))
	}
	steps := &table{header: []string{"#", "commit", "subject", "verdict", r.Unit}, right: []bool{true, false, false, false, false}, code: []bool{false, true}}
	for i, s := range r.Steps {
		v := bisectValues(s.Values)
		if s.Verdict == gate.BisectSkipped {
			v = "—"
		}
		steps.add(fmt.Sprint(i+1), gitstate.Short(s.Hash), s.Subject, s.Verdict, v)
	}
	d.add(section{title: "Builds, in order", blocks: []block{{table: steps}, {notes: r.Notes}}})
	return d
}

// benchName names a benchmark with its package.
func benchName(pkg, name string) string {
	if pkg == "" {
		return "Benchmark" + name
	}
	return pkg + " Benchmark" + name
}

// bisectValues writes a commit's values with their change from good.
func bisectValues(vs []gate.BisectValue) string {
	var parts []string
	for _, v := range vs {
		s := measure.Format(v.Value, "")
		if v.Change != 0 {
			s += " " + measure.FormatChange(v.Change)
		}
		if len(vs) > 1 {
			s = v.Benchmark + " " + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// bisectJSON is the JSON form of a bisection, with null for changes JSON
// cannot carry.
func bisectJSON(r *gate.BisectResult) any {
	type value struct {
		gate.BisectValue
		Change *float64 `json:"change"`
	}
	type step struct {
		gate.BisectStep
		Values []value `json:"values,omitempty"`
	}
	type benchmark struct {
		gate.BisectBenchmark
		Change *float64 `json:"change"`
	}
	conv := func(s *gate.BisectStep) *step {
		if s == nil {
			return nil
		}
		out := &step{BisectStep: *s}
		for _, v := range s.Values {
			out.Values = append(out.Values, value{v, finite(v.Change)})
		}
		return out
	}
	steps := func(ss []gate.BisectStep) []*step {
		out := make([]*step, 0, len(ss))
		for i := range ss {
			out = append(out, conv(&ss[i]))
		}
		return out
	}
	bms := make([]benchmark, 0, len(r.Benchmarks))
	for _, b := range r.Benchmarks {
		bms = append(bms, benchmark{b, finite(b.Change)})
	}
	return struct {
		*gate.BisectResult
		Benchmarks []benchmark `json:"benchmarks"`
		FirstBad   *step       `json:"first_bad,omitempty"`
		LastGood   *step       `json:"last_good,omitempty"`
		Steps      []*step     `json:"steps"`
		Skipped    []*step     `json:"skipped"`
		Outcome    string      `json:"outcome"`
		ExitCode   int         `json:"exit_code"`
	}{r, bms, conv(r.FirstBad), conv(r.LastGood), steps(r.Steps), steps(r.Skipped), bisectOutcome(r), r.ExitCode()}
}
