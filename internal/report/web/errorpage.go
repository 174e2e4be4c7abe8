package web

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

// An ErrorPage is the error page's data.
type ErrorPage struct {
	Status     int
	Text, Msg  string
	Hint       template.HTML // what to do about it, when the page knows
	Back, Name string        // the page to go back to and its name
}

// NewErrorPage is the page of an error of status code answering a request
// for path, with a link back to the section the request was in.
func NewErrorPage(code int, path, msg string, hint template.HTML) ErrorPage {
	p := ErrorPage{Status: code, Text: http.StatusText(code), Msg: msg, Hint: hint}
	p.Back, p.Name = backTo(path)
	return p
}

// Title is the page's title: "404 Not Found".
func (p ErrorPage) Title() string { return strconv.Itoa(p.Status) + " " + p.Text }

// backTo is the list page a page belongs to, for the way back from an
// error: runs and their profiles to the runs, trends to the benchmarks,
// diffs to the comparison, anything else to the home page.
func backTo(p string) (href, name string) {
	switch {
	case strings.HasPrefix(p, "/runs"):
		return "/runs", "all runs"
	case strings.HasPrefix(p, "/trend"), strings.HasPrefix(p, "/benchmarks"):
		return "/benchmarks", "all benchmarks"
	case strings.HasPrefix(p, "/services"):
		return "/services", "all services"
	case strings.HasPrefix(p, "/diff"), strings.HasPrefix(p, "/compare"):
		return "/compare", "compare"
	}
	return "/", "what changed"
}

// GraphvizHint says how to install what pprof's graph view runs.
const GraphvizHint = template.HTML(`<p>pprof draws its call graph with Graphviz's <code>dot</code>, which is not installed on the machine serving this dashboard. Install it there and reload this page:</p>
<pre class="report">sudo apt-get install graphviz     # Debian, Ubuntu
sudo dnf install graphviz         # Fedora
brew install graphviz             # macOS</pre>
<p>The flame graph, top, source and peek views need no Graphviz.</p>`)
