package findings

import (
	"go/ast"
	"slices"

	"github.com/perfscope/perfscope/internal/profiles"
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
		Explanation: sentence(`
A handler that reads a file (configuration, a data set, a template) and decodes
it on every request repeats system calls, copies the whole file into memory and
re-runs the decoder each time, although the content rarely changes. Caching the
parsed result costs one read at start (or one per change) instead.

The rule looks at stacks that are serving a request (under net/http's
(*conn).serve, fasthttp or gRPC) and finds the lines of your code that call
os.ReadFile, os.Open or os.(*File).Read. It charges the function that read with
everything done under those lines and under the later calls of the same
function that are given what was read (data in data, err := os.ReadFile(path)):
the parse, whether it is encoding/json or a function of your own. A function
that returns what it read (return data, nil) hands it to its caller: the
caller's line that calls it reads too, and the caller's later calls given its
result parse, up to {} calls up; the finding is then the caller's, with the
helper's read shown beside it. That is what keeping the parsed result would
save. Without the source, the calls are not
seen, and the decoding the function does itself (encoding/json, xml, csv, yaml,
toml, templates) is counted instead. Static file handlers (http.ServeFile,
http.FileServer) are left out: reading files is their job. It fires when one
function's reading and parsing take at least {} of CPU or {} of allocated
bytes, and the reading alone at least a third of either threshold.`,
			count(maxReturns), share(rereadCPU), share(rereadBytes)),
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
	returned := map[siteKey]bool{}
	for k, start := range readLines {
		l := &line{siteKey: k, start: start}
		if !e.sourceMatches(l) {
			continue
		}
		checked[k.fn] = true
		for _, n := range e.usesOfRead(l) {
			parses[siteKey{k.fn, k.file, n}] = true
		}
		if e.returnsRead(l) {
			returned[k] = true
		}
	}
	// A function that returns what it read (a helper's return data, nil)
	// hands it to its callers: their lines that call it read too, and
	// their calls given its result parse it.
	followed, callerReads := e.followReturns(returned, serving, readLines, parses)
	for _, res := range order {
		for k, s := range e.lineTotals(res, func(fs []frame) bool { return serving(fs) && anyFrame(fs, readFuncs.match) }, func(k siteKey) bool { _, ok := callerReads[k]; return ok }) {
			if reads[res][k] == nil {
				reads[res][k] = s
			}
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
	all, hidden := map[Resource]sites{}, map[Resource]sites{}
	for _, res := range order {
		all[res] = e.lineTotals(res, serving, charged)
		// The caller's line stands for a followed read: it is charged
		// with it, and the finding is the caller's; the read is shown
		// beside it.
		for k := range followed {
			if s := all[res][k]; s != nil {
				if hidden[res] == nil {
					hidden[res] = sites{}
				}
				hidden[res][k] = s
				delete(all[res], k)
			}
		}
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
				ev.Detail = sentence("parses what was read, per request ({})", l.call)
			} else {
				ev.Detail = sentence("reads a file per request ({})", l.call)
			}
			evs = append(evs, ev)
			evs = append(evs, e.returnedReads(l.siteKey, callerReads, followed, hidden, order)...)
		}
		what, kept := "reads a file", "what it read"
		if parsed {
			what, kept = "reads and parses a file", "the parsed result"
		}
		summary := sentence("{} {} on every request: {}. Keeping {} would save all of it.", g.fn, what, shareText(g, order), kept)
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

// maxReturns bounds how many calls up the reread rule follows a value
// returned from function to caller.
const maxReturns = 3

// followReturns follows the reads whose functions return what they read
// (returned) to their callers, up to maxReturns calls up. A caller's line
// calling such a function reads too: it is added to readLines (and to
// callerReads), and its later calls given the result parse (added to
// parses); callerReads maps each such line to the returning reads it
// calls. followed holds the returning reads all of whose callers were
// followed: their callers' lines stand for them. A caller that is not the
// user's code, or whose source is not at hand, is not followed.
func (e *env) followReturns(returned map[siteKey]bool, serving func([]frame) bool, readLines map[siteKey]int64, parses map[siteKey]bool) (followed map[siteKey]bool, callerReads map[siteKey][]siteKey) {
	followed, callerReads = map[siteKey]bool{}, map[siteKey][]siteKey{}
	for range maxReturns {
		if len(returned) == 0 {
			break
		}
		// Each returning line's callers, with their functions' first
		// lines; the zero key stands for a caller that cannot be
		// followed.
		callers := map[siteKey]map[siteKey]int64{}
		for _, res := range []Resource{CPU, AllocBytes} {
			for fs := range e.samples(res) {
				if !serving(fs) {
					continue
				}
				for j, f := range fs[:len(fs)-1] {
					k := siteKey{f.fn, f.file, f.line}
					if !returned[k] {
						continue
					}
					if callers[k] == nil {
						callers[k] = map[siteKey]int64{}
					}
					if c := fs[j+1]; c.class == profiles.User {
						callers[k][siteKey{c.fn, c.file, c.line}] = c.start
					} else {
						callers[k][siteKey{}] = 0
					}
				}
			}
		}
		next := map[siteKey]bool{}
		for k, cs := range callers {
			all := true
			for ck, start := range cs {
				l := &line{siteKey: ck, start: start}
				if ck.fn == "" || !e.sourceMatches(l) {
					all = false
					continue
				}
				if _, direct := readLines[ck]; !direct || callerReads[ck] != nil {
					readLines[ck] = start
					callerReads[ck] = append(callerReads[ck], k)
				}
				for _, n := range e.usesOfRead(l) {
					parses[siteKey{ck.fn, ck.file, n}] = true
				}
				if e.returnsRead(l) {
					next[ck] = true
				}
			}
			if all {
				followed[k] = true
			}
		}
		returned = next
	}
	return followed, callerReads
}

// returnedReads is the evidence of the reads a caller's line k stands
// for: the lines of the functions it calls that read a file and return
// what they read, followed down through helpers that return it in turn.
func (e *env) returnedReads(k siteKey, callerReads map[siteKey][]siteKey, followed map[siteKey]bool, hidden map[Resource]sites, order []Resource) []Evidence {
	var out []Evidence
	for depth, next := 0, callerReads[k]; depth < maxReturns && len(next) > 0; depth++ {
		var deeper []siteKey
		for _, r := range next {
			if !followed[r] {
				continue
			}
			ls := lines(map[Resource]sites{CPU: onlyKey(hidden[CPU], r), AllocBytes: onlyKey(hidden[AllocBytes], r)}, order...)
			for _, l := range ls {
				ev := e.evidence(l, order)
				ev.Detail = sentence("where it is read and returned ({})", l.call)
				out = append(out, ev)
			}
			deeper = append(deeper, callerReads[r]...)
		}
		next = deeper
	}
	return out
}

// onlyKey is the site of ss at k alone.
func onlyKey(ss sites, k siteKey) sites {
	if s := ss[k]; s != nil {
		return sites{k: s}
	}
	return nil
}

// readVars returns the variables the statement of l's function at l's
// line assigns (data in data, err := os.ReadFile(path)), but the last of
// several, the error by convention, and the function's span. The source
// must match the profile.
func (e *env) readVars(l *line) (sf *profiles.SourceFile, vars map[string]bool, from, to int64) {
	sf = e.src.File(l.file)
	from, to, err := sf.FunctionSpan(l.fn, l.start)
	if err != nil {
		return sf, nil, 0, 0
	}
	lineOf := func(n ast.Node) int64 { return int64(sf.Fset.Position(n.Pos()).Line) }
	// The innermost assignment spanning the read's line.
	vars = map[string]bool{}
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
	return sf, vars, from, to
}

// returnsRead reports whether l's function returns what the read at l
// gave it: a return statement after l with a variable the read assigned
// among its results (return data, nil), or a return statement holding
// the read itself (return os.ReadFile(path), the call on the read's line
// with no call in its arguments). A result computed from the variable
// (return parse(data)) is not what was read: the function parsed it
// already.
func (e *env) returnsRead(l *line) bool {
	sf, vars, from, to := e.readVars(l)
	if to == 0 {
		return false
	}
	found := false
	ast.Inspect(sf.AST, func(n ast.Node) bool {
		ret, ok := n.(*ast.ReturnStmt)
		if found || !ok {
			return !found && n != nil
		}
		first, last := int64(sf.Fset.Position(ret.Pos()).Line), int64(sf.Fset.Position(ret.End()).Line)
		if first < from || last > to {
			return true
		}
		for _, x := range ret.Results {
			switch x := x.(type) {
			case *ast.Ident:
				found = found || first > l.line && vars[x.Name]
			case *ast.CallExpr:
				found = found || int64(sf.Fset.Position(x.Lparen).Line) == l.line && !callsIn(x.Args)
			}
		}
		return !found
	})
	return found
}

// usesOfRead returns the lines of l's function, after l, that call
// something with a value l assigned (data in data, err :=
// os.ReadFile(path), f in f, err := os.Open(path)): the parsing of what
// was read, wherever the parser lives. The source must match the profile.
func (e *env) usesOfRead(l *line) []int64 {
	sf, vars, _, to := e.readVars(l)
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

// callsIn reports whether any of xs holds a call.
func callsIn(xs []ast.Expr) bool {
	for _, x := range xs {
		found := false
		ast.Inspect(x, func(n ast.Node) bool {
			_, call := n.(*ast.CallExpr)
			found = found || call
			return !found
		})
		if found {
			return true
		}
	}
	return false
}
