package findings

import (
	"fmt"
	"strings"

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
(*conn).serve, fasthttp or gRPC), charges their samples in os.ReadFile,
os.Open and os.(*File).Read to the line of your code that read, and counts the
decoding (encoding/json, xml, csv, yaml, toml, templates) done by the same
function. Static file handlers (http.ServeFile, http.FileServer) are left out:
reading files is their job. It fires when one function's reading and parsing
take at least %s of CPU or %s of allocated bytes.`, units.Percent(rereadCPU), units.Percent(rereadBytes)),
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
	parses := map[Resource]sites{}
	for _, res := range order {
		reads[res] = e.callers(res, callerQuery{match: readFuncs.match, keep: serving})
		parses[res] = e.callers(res, callerQuery{match: parseFuncs, keep: serving})
	}
	readFns := map[string]bool{}
	for _, ss := range reads {
		for k := range ss {
			readFns[k.fn] = true
		}
	}
	// Parsing counts in the functions that also read.
	all := map[Resource]sites{}
	for _, res := range order {
		all[res] = sites{}
		for k, s := range reads[res] {
			all[res][k] = s
		}
		for k, s := range parses[res] {
			if readFns[k.fn] && all[res][k] == nil {
				all[res][k] = s
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
			if readFuncs.match(l.matched) || reads[CPU][l.siteKey] != nil || reads[AllocBytes][l.siteKey] != nil {
				ev.Detail = "reads a file per request (" + l.call + ")"
			} else {
				parsed = true
				ev.Detail = "parses it per request (" + l.call + ")"
			}
			evs = append(evs, ev)
		}
		what := "reads a file"
		if parsed {
			what = "reads and parses a file"
		}
		summary := fmt.Sprintf("%s %s on every request: %s.", g.fn, what, shareText(g, order))
		out = append(out, r.finding(sev, res, strings.TrimSpace(summary), evs))
	}
	return out
}
