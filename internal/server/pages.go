package server

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"time"

	"github.com/perfscope/perfscope/internal/report/web"
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
var pageNames = []string{"home", "benchmarks", "trend", "compare", "runs", "run", "error", "leaks", "diff", "instrdiff", "services", "service", "deploys"}

func newPages(version string) (*pages, error) {
	funcs := web.Funcs()
	p := &pages{version: version, tmpl: make(map[string]*template.Template)}
	layout, err := fs.ReadFile(webFS, "web/layout.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard templates: %w", err)
	}
	partials, err := fs.ReadFile(webFS, "web/partials.html")
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
			_, err = t.Parse(string(partials))
		}
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
	if d, ok := data.(*web.Trend); ok {
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

// errorPage renders an error as a page, for 404s and other failures of
// page requests, with a link back to the section the request was in.
func (p *pages) errorPage(w http.ResponseWriter, r *http.Request, code int, msg string, hint template.HTML) {
	data := web.NewErrorPage(code, r.URL.Path, msg, hint)
	p.render(w, code, "error", data.Title(), "", data, time.Now())
}

// exactRegexp is a regular expression matching exactly s, for filters
// that take patterns but are given one value from a menu.
func exactRegexp(s string) string {
	if s == "" {
		return ""
	}
	return "^" + regexp.QuoteMeta(s) + "$"
}
