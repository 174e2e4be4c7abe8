package findings

import (
	"fmt"
	"go/ast"
	"slices"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/units"
)

// Thresholds of the reread rule, for the file reads one function makes
// while serving requests (its parsing of what it read counts too).
const (
	rereadCPU   = 0.03
	rereadBytes = 0.10
)

// servingFuncs mark a stack as serving a request.
var servingFuncs = matcher{
	"net/http.(*conn).serve", "net/http.serverHandler.ServeHTTP", "net/http.(*http2serverConn).runHandler",
	"github.com/valyala/fasthttp.(*Server).serveConn", "google.golang.org/grpc.(*Server).handleStream",
}

// staticFileFuncs serve files by design: reading a file per request is
// their job.
var staticFileFuncs = matcher{"net/http.serveFile", "net/http.ServeFile", "net/http.ServeContent", "net/http.(*fileHandler).ServeHTTP", "net/http.serveContent"}

// readFuncs open or read files.
var readFuncs = matcher{
	"os.ReadFile", "os.Open", "os.OpenFile", "os.openFileNolog", "os.openDirNolog", "os.(*File).Read", "os.(*File).ReadAt",
	"os.(*File).ReadDir", "os.ReadDir", "io/ioutil.ReadFile",
}

// parseFuncs decode what was read.
var parseFuncs = inPackages("encoding/json", "encoding/xml", "encoding/csv", "encoding/gob",
	"gopkg.in/yaml.v2", "gopkg.in/yaml.v3", "sigs.k8s.io/yaml", "github.com/BurntSushi/toml", "github.com/pelletier/go-toml/v2",
	"text/template", "html/template")

func rereadRule() Rule {
	return Rule{
		ID:        "reread",
		Title:     "The same file is read and parsed on every request",
		Summary:   "a request handler opens, reads and decodes a file each time instead of keeping what it parsed",
		Resources: []Resource{CPU, AllocBytes},
		Explanation: fmt.Sprintf(`
A handler that reads a file (configuration, a data set, a template) and decodes
it on every request repeats system calls, copies the whole file into memory and
re-runs the decoder each time, although the content rarely changes. Caching the
parsed result costs one read at start (or one per change) instead.

The rule looks at stacks that are serving a request (under net/http's
(*conn).serve, fasthttp or gRPC) and finds the lines of your code that call
os.ReadFile, os.Open or os.(*File).Read. It charges the function that read with
everything done under those lines and under the later calls of the same
function that are given what was read (data in data, err := os.ReadFile(path)):
the parse, whether it is encoding/json or a function of your own. That is what
keeping the parsed result would save. Without the source, the calls are not
seen, and the decoding the function does itself (encoding/json, xml, csv, yaml,
toml, templates) is counted instead. Static file handlers (http.ServeFile,
http.FileServer) are left out: reading files is their job. It fires when one
function's reading and parsing take at least %s of CPU or %s of allocated
bytes, and the reading alone at least a third of either threshold.`, units.Percent(rereadCPU), units.Percent(rereadBytes)),
		Fix: Fix{
			Summary: "Read and parse once at start and keep the result (reload on a signal, a timer or when the file's modification time changes); hold it in an atomic.Pointer if it can be swapped.",
			Example: `// before: per request
data, _ := os.ReadFile(path)
var txs []Tx
json.Unmarshal(data, &txs)

// after: once, at start
txs, err := load(path)
if err != nil { log.Fatal(err) }
http.HandleFunc("/summary", func(w http.ResponseWriter, r *http.Request) {
	writeSummary(w, txs)
})`,
		},
		check: checkReread,
	}
}

func checkReread(e *env, r *Rule) []Finding {
	serving := func(fs []frame) bool {
		return anyFrame(fs, servingFuncs.match) && !anyFrame(fs, staticFileFuncs.match)
	}
	order := []Resource{CPU, AllocBytes}
	reads := map[Resource]sites{}
	for _, res := range order {
		reads[res] = e.callers(res, callerQuery{match: readFuncs.match, keep: serving})
	}
	// The lines of each reading function that use what it read: with the
	// source, the calls given the variables a read assigned; without it,
	// the decoders the function calls.
	readLines := map[siteKey]int64{} // the function's first line, by line
	readFns := map[string]bool{}
	for _, ss := range reads {
		for k, s := range ss {
			readLines[k] = s.start
			readFns[k.fn] = true
		}
	}
	parses := map[siteKey]bool{}
	checked := map[string]bool{} // reading functions whose source was read
	for k, start := range readLines {
		l := &line{siteKey: k, start: start}
		if !e.sourceMatches(l) {
			continue
		}
		checked[k.fn] = true
		for _, n := range e.usesOfRead(l) {
			parses[siteKey{k.fn, k.file, n}] = true
		}
	}
	for _, res := range order {
		for k := range e.callers(res, callerQuery{match: parseFuncs, keep: serving}) {
			if readFns[k.fn] && !checked[k.fn] {
				parses[k] = true
			}
		}
	}
	for k := range readLines {
		delete(parses, k)
	}
	// A line is charged everything under it: caching what the function
	// read saves the read and all the work of the calls that use it.
	charged := func(k siteKey) bool {
		_, read := readLines[k]
		return read || parses[k]
	}
	all := map[Resource]sites{}
	for _, res := range order {
		all[res] = e.lineTotals(res, serving, charged)
	}
	ls := lines(all, order...)
	var out []Finding
	for _, g := range e.groups(ls, order, atLeast(map[Resource]float64{CPU: rereadCPU, AllocBytes: rereadBytes})) {
		// The reads alone must matter too, or a handler that decodes
		// its request body and stats a file would pass.
		var readCPU, readBytes int64
		for _, l := range g.lines {
			if s := reads[CPU][l.siteKey]; s != nil {
				readCPU += s.value
			}
			if s := reads[AllocBytes][l.siteKey]; s != nil {
				readBytes += s.value
			}
		}
		if e.share(CPU, readCPU) < rereadCPU/3 && e.share(AllocBytes, readBytes) < rereadBytes/3 {
			continue
		}
		sev, res := g.top(order)
		var evs []Evidence
		parsed := false
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			if parses[l.siteKey] {
				parsed = true
				ev.Detail = "parses what was read, per request (" + l.call + ")"
			} else {
				ev.Detail = "reads a file per request (" + l.call + ")"
			}
			evs = append(evs, ev)
		}
		what, kept := "reads a file", "what it read"
		if parsed {
			what, kept = "reads and parses a file", "the parsed result"
		}
		summary := fmt.Sprintf("%s %s on every request: %s. Keeping %s would save all of it.", g.fn, what, shareText(g, order), kept)
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}

// lineTotals charges each sample of r whose stack keep accepts to every
// line of its stack that charged accepts, once per sample: a line's total
// is all the work done under it, as pprof's cumulative value of a line.
func (e *env) lineTotals(r Resource, keep func(fs []frame) bool, charged func(siteKey) bool) sites {
	out := sites{}
	seen := map[siteKey]bool{}
	for fs, v := range e.samples(r) {
		if !keep(fs) {
			continue
		}
		clear(seen)
		for i, f := range fs {
			k := siteKey{f.fn, f.file, f.line}
			if f.class != profiles.User || seen[k] || !charged(k) {
				continue
			}
			seen[k] = true
			call := ""
			if i > 0 {
				call = fs[i-1].fn
			}
			out.add(f, v, call, "")
		}
	}
	return out
}

// usesOfRead returns the lines of l's function, after l, that call
// something with a value l assigned (data in data, err :=
// os.ReadFile(path), f in f, err := os.Open(path)): the parsing of what
// was read, wherever the parser lives. The source must match the profile.
func (e *env) usesOfRead(l *line) []int64 {
	sf := e.src.File(l.file)
	from, to, err := sf.FunctionSpan(l.fn, l.start)
	if err != nil {
		return nil
	}
	lineOf := func(n ast.Node) int64 { return int64(sf.Fset.Position(n.Pos()).Line) }
	// The variables the read's statement assigns: the innermost
	// assignment spanning the read's line.
	vars := map[string]bool{}
	var span int64 = -1
	ast.Inspect(sf.AST, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		var lhs []ast.Expr
		switch a := n.(type) {
		case *ast.AssignStmt:
			lhs = a.Lhs
		case *ast.ValueSpec:
			for _, id := range a.Names {
				lhs = append(lhs, id)
			}
		default:
			return true
		}
		first, last := lineOf(n), int64(sf.Fset.Position(n.End()).Line)
		if first < from || last > to || l.line < first || l.line > last || span >= 0 && last-first >= span {
			return true
		}
		span = last - first
		clear(vars)
		// The last of several values is the read's error, by
		// convention: handling it is not parsing.
		if len(lhs) > 1 {
			lhs = lhs[:len(lhs)-1]
		}
		for _, x := range lhs {
			if id, ok := x.(*ast.Ident); ok && id.Name != "_" {
				vars[id.Name] = true
			}
		}
		return true
	})
	if len(vars) == 0 {
		return nil
	}
	var out []int64
	ast.Inspect(sf.AST, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return n != nil
		}
		at := int64(sf.Fset.Position(call.Lparen).Line)
		if at <= l.line || at > to {
			return true
		}
		uses := false
		ast.Inspect(call, func(m ast.Node) bool {
			if id, ok := m.(*ast.Ident); ok && vars[id.Name] {
				uses = true
			}
			return !uses
		})
		if uses && !slices.Contains(out, at) {
			out = append(out, at)
		}
		return true
	})
	return out
}
