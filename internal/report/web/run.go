package web

import (
	"bytes"
	"html/template"
	"net/url"
	"regexp"
	"strings"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
)

// Runs is the run list's data.
type Runs struct{ Runs []store.ProfileRun }

// A RunPage is one profiling run's page: its load results, findings,
// profiles, CPU by route and the full report.
type RunPage struct {
	Run      *run.Run
	Findings []findings.Finding
	// CompilerSkipped says the findings lack the compiler's reasons: the
	// server is configured not to build them.
	CompilerSkipped bool
	Routes          []profiles.RouteShare
	// RoutesNote explains the routes' unlabelled row, if any.
	RoutesNote string
	// Others are the other recent runs, to compare this one with.
	Others []store.ProfileRun
	Report string
	// SourceFocus is the query of the source links: pprof lists every
	// function of a profile without one, which takes seconds and pages;
	// the hottest user functions are what a reader wants.
	SourceFocus template.URL
	// Flame is the profile whose flame graph the page shows beside the
	// findings: CPU, or allocations when there is no CPU profile; ""
	// when there is neither.
	Flame string
	// TooLarge says which profiles were beyond the server's limits.
	TooLarge []string
}

// NewRunPage lays out the page of saved from its analysis; recent are the
// latest runs (saved among them or not) and tooLarge names the profiles the
// analysis could not read within the server's limits.
func NewRunPage(saved *run.Run, res *analysis.Result, recent []store.ProfileRun, tooLarge []string) *RunPage {
	a := res.Analysis
	var text bytes.Buffer
	if err := report.Write(&text, report.Text, a, res.Findings); err != nil {
		text.WriteString("\n(report incomplete: " + err.Error() + ")")
	}
	var others []store.ProfileRun
	for _, r := range recent {
		if r.ID != saved.ID {
			others = append(others, r)
		}
	}
	return &RunPage{Run: saved, Findings: res.Findings, CompilerSkipped: res.CompilerSkipped,
		Routes: a.Routes, RoutesNote: report.UnlabelledRouteNote(a.Routes), Others: others,
		Report: text.String(), SourceFocus: sourceFocus(a), Flame: flameKind(saved), TooLarge: tooLarge}
}

// flameKind is the profile whose flame graph a run page shows.
func flameKind(r *run.Run) string {
	for _, kind := range []string{run.KindCPU, run.KindAllocs} {
		if r.Has(kind) {
			return kind
		}
	}
	return ""
}

// sourceFocus returns the query parameter that focuses pprof's source view
// on the run's hottest user functions by cumulative CPU, or "" when the run
// has no CPU profile.
func sourceFocus(a *profiles.Analysis) template.URL {
	if a.CPU == nil || a.CPU.Cum == nil {
		return ""
	}
	var names []string
	for _, r := range a.CPU.Cum.Rows {
		if r.Class == profiles.User && r.Folded == 0 {
			names = append(names, regexp.QuoteMeta(r.Function))
		}
		if len(names) == 5 {
			break
		}
	}
	if len(names) == 0 {
		return ""
	}
	return template.URL("?" + url.Values{"f": {"^(" + strings.Join(names, "|") + ")$"}}.Encode())
}
