package web

import (
	"bytes"
	"cmp"
	"html/template"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
)

// Runs is the run list's data: the runs that match its search, in the
// order asked for.
type Runs struct {
	Runs []RunSummary
	// Query is the search text, Sort the order; All counts the runs
	// before the search.
	Query, Sort string
	All         int
}

// RunSorts are the orders of the run list, the default first.
var RunSorts = []string{"start", "target", "health", "throughput", "p99"}

// RunSort reports whether s is an order of the run list ("" for the
// default).
func RunSort(s string) bool { return s == "" || slices.Contains(RunSorts, s) }

// NewRuns lists sums, newest first as given, keeping those whose id,
// target or commit contains query (any case), in the order sort names.
func NewRuns(sums []RunSummary, query, sort string) Runs {
	l := Runs{Query: query, Sort: sort, All: len(sums)}
	if l.Sort == "" {
		l.Sort = RunSorts[0]
	}
	q := strings.ToLower(strings.TrimSpace(query))
	for _, r := range sums {
		if q == "" || strings.Contains(strings.ToLower(r.ID+" "+r.Target+" "+r.Commit), q) {
			l.Runs = append(l.Runs, r)
		}
	}
	rank := map[string]int{HealthFailed: 0, HealthInterrupted: 1, HealthOK: 2}
	slices.SortStableFunc(l.Runs, func(a, b RunSummary) int {
		switch l.Sort {
		case "target":
			return strings.Compare(a.Target, b.Target)
		case "health":
			return rank[a.Health] - rank[b.Health]
		case "throughput":
			return cmp.Compare(b.ProfileRun.RPS, a.ProfileRun.RPS)
		case "p99":
			return cmp.Compare(a.P99Ms, b.P99Ms)
		}
		return 0
	})
	return l
}

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
	// Analysis is the report's sections but its findings, as text: the
	// tables the page does not draw (functions, allocation sites, waits).
	Analysis string
	// Profiles are the run's profiles with the views of pprof's UI that
	// can answer for each.
	Profiles []ProfileLinks
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
	if err := report.WriteAnalysis(&text, report.Text, a); err != nil {
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
		Analysis: text.String(), Profiles: profileLinks(saved, a), Flame: flameKind(saved), TooLarge: tooLarge}
}

// ProfileLinks are one profile of a run and the views of it that pprof's
// UI can show.
type ProfileLinks struct {
	run.ProfileFile
	// Empty says the profile holds no sample of its default value (a
	// mutex profile of a service without contention): pprof's peek and
	// source views have nothing to list.
	Empty bool
	// Source is the query of the source view: pprof lists every function
	// of a profile without a filter, which takes seconds and megabytes, so
	// it is filtered to the profile's own hottest user functions; "" when
	// the profile has none, and the view is not offered.
	Source template.URL
}

// profileLinks lists the views each profile of saved can answer, from
// the profiles as analysed; a profile the analysis could not read gets
// its flame graph and top only.
func profileLinks(saved *run.Run, a *profiles.Analysis) []ProfileLinks {
	var out []ProfileLinks
	for _, pf := range saved.Profiles {
		pl := ProfileLinks{ProfileFile: pf, Empty: true}
		if p := a.Profiles[pf.Kind]; p != nil && pf.File != "" {
			if vi, err := profiles.SampleIndex(p, ""); err == nil {
				pl.Empty = profiles.SampleTotal(p, vi) == 0
			}
			if !pl.Empty {
				pl.Source = sourceFocus(p, a.Classifier)
			}
		}
		out = append(out, pl)
	}
	return out
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

// sourceFocus returns the query that focuses pprof's source view on p's
// hottest user functions by its default value, cumulative, or "" when it
// has none.
func sourceFocus(p *profile.Profile, c *profiles.Classifier) template.URL {
	t, err := profiles.Functions(p, "", c)
	if err != nil {
		return ""
	}
	var names []string
	for _, r := range t.Top(profiles.ByCum, 0, true).Rows {
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
