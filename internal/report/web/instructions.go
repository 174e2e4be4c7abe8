package web

import (
	"net/url"
	"strconv"

	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

// InstructionChanges are the benchmarks whose instructions/op moved
// beyond the threshold between two compared commits, each with where it
// changed: the comparison page's "Where it changed" section.
type InstructionChanges struct {
	// Threshold is the relative change that counts, written "1%".
	Threshold string
	Changes   []InstructionChange
}

// An InstructionChange is one benchmark of InstructionChanges.
type InstructionChange struct {
	Package, Benchmark string
	// Base, Head and Change are its instructions/op and their change,
	// written.
	Base, Head, Change string
	// Class is "better" or "worse".
	Class string
	// Explanation is where it changed, as the gate's outputs lay it
	// out; nil when Unexplained says why there is none.
	Explanation *report.ExplanationView
	Unexplained string
	// Flame is the address of the diff flame graph of its profiles,
	// "" when a side kept none.
	Flame string
}

// NewInstructionChanges lays out changes (gate.ExplainRecorded) between
// the commits base and head; nil when there are none.
func NewInstructionChanges(base, head store.Commit, changes []gate.RecordedChange) *InstructionChanges {
	if len(changes) == 0 {
		return nil
	}
	out := &InstructionChanges{Threshold: units.Percent(changes[0].Threshold)}
	for _, c := range changes {
		ic := InstructionChange{Package: c.Package, Benchmark: c.Benchmark,
			Base: measure.Format(c.Base, measure.Instructions), Head: measure.Format(c.Head, measure.Instructions),
			Change: measure.FormatChange(c.Change), Class: BetterClass(measure.Improves(measure.Instructions, nil, c.Base, c.Head)),
			Unexplained: c.Unexplained}
		if c.Explanation != nil {
			v := report.ExplanationTables(*c.Explanation)
			ic.Explanation = &v
		}
		if c.BaseRun != 0 && c.HeadRun != 0 {
			ic.Flame = InstructionDiffPath(c.BaseRun, c.HeadRun, c.Package, c.Benchmark) + "?" +
				url.Values{"base": {base.Ref()}, "head": {head.Ref()}}.Encode()
		}
		out.Changes = append(out.Changes, ic)
	}
	return out
}

// InstructionDiffPath is the address of the page of the diff flame graph
// of one benchmark's instruction profiles in two benchmark runs; pprof's
// views of it are below it.
func InstructionDiffPath(baseRun, headRun int64, pkg, name string) string {
	return "/compare/instructions/" + strconv.FormatInt(baseRun, 10) + "/" + strconv.FormatInt(headRun, 10) + "/" +
		url.PathEscape(pkg) + "/" + url.PathEscape(name)
}

// An InstructionDiffPage frames the diff flame graph of one benchmark's
// instruction profiles with the way back to the commits' comparison.
type InstructionDiffPage struct {
	Package, Benchmark string
	BaseRun, HeadRun   int64
	Frame              string // the flame graph's address
	// Back is the comparison's address, "" when the commits are not
	// known.
	Back       string
	Base, Head string // the commits compared, as given
}

// NewInstructionDiffPage lays out the page of the diff flame graph of
// benchmark name of package pkg between two runs, with the way back to
// the comparison of the commits base and head (refs, "" when not known).
func NewInstructionDiffPage(baseRun, headRun int64, pkg, name, base, head string) *InstructionDiffPage {
	p := &InstructionDiffPage{Package: pkg, Benchmark: name, BaseRun: baseRun, HeadRun: headRun, Base: base, Head: head,
		Frame: InstructionDiffPath(baseRun, headRun, pkg, name) + "/flamegraph"}
	if base != "" && head != "" {
		p.Back = "/compare?" + url.Values{"base": {base}, "head": {head}}.Encode()
	}
	return p
}
