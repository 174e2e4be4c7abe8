package web

import (
	"html/template"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

// Funcs are the functions the dashboard's templates call: formats of
// times, numbers and changes, and the query strings of links.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"short": gitstate.ShortRef,
		// commitBy names a commit in words: "subject — author".
		"commitBy": CommitBy,
		"when":     when,
		"pct":      units.Percent,
		// share writes a finding's severity as the CLI's report does.
		"share": units.Percent,
		// findingText writes a finding's summary as the CLI's report does.
		"findingText": report.FindingText,
		"pctOf":       func(f float64) float64 { return 100 * f },
		"signedPct": func(p *float64) string {
			if p == nil {
				return ""
			}
			return measure.FormatChange(*p)
		},
		"num":       units.Number,
		"thousands": Thousands,
		"millis":    units.Millis,
		"seconds":   units.Seconds,
		"rate":      units.Rate,
		// signedPctOf writes a relative change as "+12.3%" or "-4.5%"
		// (see measure.FormatChange).
		"signedPctOf": measure.FormatChange,
		// loadFailure leads a run's page with why its load failed.
		"loadFailure": report.LoadFailure,
		"query": func(kv ...string) template.URL {
			q := url.Values{}
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i+1] != "" {
					q.Set(kv[i], kv[i+1])
				}
			}
			return template.URL(q.Encode())
		},
		"pathEscape":  url.PathEscape,
		"runLabel":    RunLabel,
		"healthClass": HealthClass,
		// shortFile keeps a source file's directory and name: the
		// full path, in the title, is too long beside a flame graph.
		"shortFile": func(file string) string {
			dir, name := path.Split(file)
			return path.Join(path.Base(dir), name)
		},
		"deref": func(p *float64) float64 { return deref(p, 0) },
	}
}

// RunLabel names a run in a menu as a reader tells runs apart: its id,
// the endpoint it loaded, when, on which commit, and whether its load
// failed.
func RunLabel(pr store.ProfileRun) string {
	parts := []string{pr.ID, endpoint(pr.Target), when(pr.Start)}
	if pr.Commit != "" {
		c := gitstate.ShortRef(pr.Commit)
		if pr.Dirty {
			c += "+dirty"
		}
		parts = append(parts, c)
	}
	if pr.LoadFailed {
		parts = append(parts, "load failed")
	}
	return strings.Join(parts, " · ")
}

// when writes a time as the pages do, "" for none.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04")
}
