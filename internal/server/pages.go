package server

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/units"
)

//go:embed web
var webFS embed.FS

// pages renders the dashboard's HTML pages from the embedded templates.
type pages struct {
	version string
	tmpl    map[string]*template.Template // by page name
	static  http.HandlerFunc
}

// pageNames are the templates under web/ that are pages; each is
// rendered inside layout.html.
var pageNames = []string{"home", "benchmarks", "trend", "compare", "runs", "run", "error"}

func newPages(version string) (*pages, error) {
	funcs := template.FuncMap{
		"short": shortRef,
		"when": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04")
		},
		"pct": units.Percent,
		// share writes a finding's severity as the CLI's report does.
		"share": units.Percent,
		"pctOf": func(f float64) float64 { return 100 * f },
		"signedPct": func(p *float64) string {
			if p == nil {
				return ""
			}
			return signedPercent(*p)
		},
		"num":       units.Number,
		"thousands": thousands,
		"millis":    units.Millis,
		"seconds":   units.Seconds,
		"rate":      units.Rate,
		// signedPctOf writes a relative change as "+12.3%" or "−4.5%".
		"signedPctOf": signedPercent,
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
		"pathEscape": url.PathEscape,
		// shortFile keeps a source file's directory and name: the
		// full path, in the title, is too long beside a flame graph.
		"shortFile": func(file string) string {
			dir, name := path.Split(file)
			return path.Join(path.Base(dir), name)
		},
		"deref": func(p *float64) float64 { return deref(p, 0) },
	}
	p := &pages{version: version, tmpl: make(map[string]*template.Template)}
	layout, err := fs.ReadFile(webFS, "web/layout.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard templates: %w", err)
	}
	for _, name := range pageNames {
		body, err := fs.ReadFile(webFS, "web/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard templates: %w", err)
		}
		t, err := template.New("layout").Funcs(funcs).Parse(string(layout))
		if err == nil {
			_, err = t.Parse(string(body))
		}
		if err != nil {
			return nil, fmt.Errorf("dashboard template %s: %w", name, err)
		}
		p.tmpl[name] = t
	}
	static, err := fs.Sub(webFS, "web/static")
	if err != nil {
		return nil, err
	}
	files := http.FileServerFS(static)
	p.static = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + path.Base(r.PathValue("file"))
		files.ServeHTTP(w, r2)
	}
	return p, nil
}

// pageData is what every page template gets: its own data in Data.
type pageData struct {
	Title   string
	Nav     string // the section highlighted in the menu
	Version string
	Elapsed string
	Data    any
}

// render writes page name with data. Pages are rendered into a buffer
// first, so a template error becomes a clean 500 instead of half a page.
func (p *pages) render(w http.ResponseWriter, code int, name, title, nav string, data any, start time.Time) {
	var buf bytes.Buffer
	// Pages are tens of KiB, a trend over thousands of commits a few
	// hundred KiB more than its chart: sized once, not grown by copying.
	size := 64 << 10
	if d, ok := data.(*trendData); ok {
		size += 2 * len(d.Chart)
	}
	buf.Grow(size)
	err := p.tmpl[name].Execute(&buf, pageData{Title: title, Nav: nav, Version: p.version,
		Elapsed: time.Since(start).Round(time.Millisecond / 10).String(), Data: data})
	if err != nil {
		http.Error(w, "render page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// errorData is the error page's data.
type errorData struct {
	Status     int
	Text, Msg  string
	Hint       template.HTML // what to do about it, when the page knows
	Back, Name string        // the page to go back to and its name
}

// errorPage renders an error as a page, for 404s and other failures of
// page requests, with a link back to the section the request was in.
func (p *pages) errorPage(w http.ResponseWriter, r *http.Request, code int, msg string, hint template.HTML) {
	data := errorData{Status: code, Text: http.StatusText(code), Msg: msg, Hint: hint}
	data.Back, data.Name = backTo(r.URL.Path)
	p.render(w, code, "error", fmt.Sprintf("%d %s", code, http.StatusText(code)), "", data, time.Now())
}

// backTo is the list page a page belongs to, for the way back from an
// error: runs and their profiles to the runs, trends to the benchmarks,
// diffs to the comparison, anything else to the home page.
func backTo(p string) (href, name string) {
	switch {
	case strings.HasPrefix(p, "/runs"):
		return "/runs", "all runs"
	case strings.HasPrefix(p, "/trend"), strings.HasPrefix(p, "/benchmarks"):
		return "/benchmarks", "all benchmarks"
	case strings.HasPrefix(p, "/diff"), strings.HasPrefix(p, "/compare"):
		return "/compare", "compare"
	}
	return "/", "what changed"
}

// thousands writes a count of any integer type with thousands separators.
func thousands(n any) string {
	switch n := n.(type) {
	case int:
		return units.Thousands(int64(n))
	case int64:
		return units.Thousands(n)
	}
	return fmt.Sprint(n)
}

// signedPercent writes a relative change with its sign: "+12.3%", "-4.5%",
// "from 0" (see measure.FormatChange).
func signedPercent(f float64) string { return measure.FormatChange(f) }

// formatUnit writes a value of a benchmark unit standing alone, as the CLI
// does (see measure.Format).
func formatUnit(v float64, unit string) string { return measure.Format(v, unit) }

// exactRegexp is a regular expression matching exactly s, for filters
// that take patterns but are given one value from a menu.
func exactRegexp(s string) string {
	if s == "" {
		return ""
	}
	return "^" + regexp.QuoteMeta(s) + "$"
}
