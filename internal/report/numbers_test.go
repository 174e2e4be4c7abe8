package report

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// renderingPackages may format numbers: the rendering layer and the
// packages that spell values for it.
var renderingPackages = []string{
	"internal/report",
	"internal/units",
	"internal/measure",
}

// numberFormattingAllowed lists the functions outside the rendering layer
// that format numbers for something other than a reader of results, with
// why. A key is a file, relative to the module root, and the function
// (Type.Method for methods) the call is in.
var numberFormattingAllowed = map[string]string{
	// Protocol fields, command lines, SQL, keys and file names: read by
	// programs, not people.
	"internal/loadgen/request.go:buildRequest":                  "the Content-Length header",
	"internal/loadgen/run.go:run.result":                        "an error kind's key (status_404), a JSON map key",
	"internal/fetch/delta.go:Endpoint.Delta":                    "the ?seconds= query parameter",
	"internal/fetch/endpoint.go:Endpoint.CPU":                   "the ?seconds= query parameter",
	"internal/scrape/decode.go:decoder.value":                   "a list item's place in a configuration error (scrape_configs[0])",
	"internal/bench/instructions.go:countRun":                   "a -test.benchtime flag",
	"internal/bench/run.go:Options.testFlags":                   "a -count flag",
	"internal/bench/interleave.go:testBinaryPath":               "a test binary's file name",
	"internal/bench/seed_linux.go:seedExecs":                    "a /proc path",
	"internal/bench/seed_linux.go:writeSeed":                    "a /proc path",
	"internal/cputime/of_linux.go:Of":                           "a /proc path",
	"internal/escape/build.go:buildArgs":                        "a package name for the compiler",
	"internal/escape/key.go:buildKey":                           "a cache key",
	"internal/escape/key.go:keyHash.stamp":                      "a cache key",
	"internal/profiles/goroutines.go:GoroutineGrowth":           "a stack's grouping key",
	"internal/store/schema.go:dialect.rebind":                   "SQL placeholders ($1)",
	"internal/testenv/testenv.go:PostgresSchema":                "a schema name",
	"cmd/perfscope/gate.go:newGateCmd":                          "the defaults in --rounds' and --max-rounds' usage, which depend on the measure",
	"internal/benchstats/input.go:ResolveAll":                   "an input's name (old.txt#2), as benchstat names repeated files",
	"internal/httpmetrics/metrics.go:Registry.WriteTo":          "the Prometheus exposition format, read by a scraper",
	"internal/report/web/cache.go:cacheKey":                     "a cache key",
	"internal/bench/allocations.go:RecordAllocations":           "a -test.benchtime flag and a profile's file name",
	"internal/server/api_profiles.go:Server.handleProfileMerge": "the Perfscope-Restarted-Targets response header",
	"internal/profseries/query.go:ProcessNote":                  "a comment inside the merged profile (pprof's own field, which go tool pprof -comments shows), written where the profile is built",
	"internal/profseries/deploy.go:deployKey.String":            "the key a store keeps a deploy's judgement under",
	// Locations: file:line names a place, which editors and terminals
	// parse; it is not a measured value.
	"internal/escape/escape.go:Position.String":   "file:line:col",
	"internal/escape/reason.go:short":             "file:line",
	"internal/profseries/leak.go:frameText":       "function file:line",
	"internal/profiles/sites.go:Site.Where":       "file:line",
	"internal/findings/finding.go:Evidence.Where": "file:line",
	"internal/findings/concat.go:short":           "file:line",
	// Errors, built before fmt.Errorf or errors.New takes them.
	"internal/bench/interleave.go:runBinary":         "an exit code in an error",
	"internal/bench/instructions.go:CountBenchmarks": "calls per operation in an error",
	"internal/bench/parse.go:malformed":              "why a benchmark line is malformed",
	"internal/runupload/receive.go:receiver.tarGz":   "the cap an upload passed, in a 413's message",
	"internal/runupload/receive.go:receiver.save":    "the cap an upload passed, in a 413's message",
	"internal/runupload/check.go:check":              "the memory limit a run passed, in a 413's message",
	"internal/fetch/identity.go:identityAttempt":     "why an endpoint is refused as not the target's",
	// Warnings that travel with results (in JSON too), as benchmath's do.
	"internal/history/series.go:NewSeries":       "a series that mixes machines, in its warnings",
	"internal/fetch/bounded.go:LimitError.Error": "the limit a profile exceeded",
	"internal/store/resolve.go:nearestStored":    "the stored commits nearest a missing one, in an error",

	// SQL: PostgreSQL partitions of profile series, one per day.
	"internal/store/profileseries_retention.go:partitionName":                 "a partition's table name",
	"internal/store/profileseries_retention.go:(package level)":               "the resolutions a query of blocks names, in SQL",
	"internal/store/profileseries_retention.go:ProfileSeries.ensurePartition": "a partition's bounds",
}

// TestNoNumberFormattedOutsideRendering holds the rule that every number a
// user reads is written by the rendering layer, so that a value is spelled
// one way everywhere: outside renderingPackages, non-test code of
// internal/ and cmd/ may not format a number with strconv, with fmt (a
// numeric verb, or %v and friends on a value of numeric type that has no
// String method of its own), or with the unit-scaling helpers of units
// and benchunit. Errors may (fmt.Errorf): they name what failed, such as
// a line or a status code, and are not results. Anything else must be in
// numberFormattingAllowed with its reason.
func TestNoNumberFormattedOutsideRendering(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	hits, checked := numberFormattingHits(t, root)
	used := map[string]bool{}
	for _, h := range hits {
		if _, ok := numberFormattingAllowed[h.key]; ok {
			used[h.key] = true
			continue
		}
		t.Errorf("%s: %s formats a number outside the rendering layer (in %s); render it in internal/report, or allow it in numberFormattingAllowed with why", h.pos, h.call, h.key)
	}
	for k := range numberFormattingAllowed {
		file, _, _ := strings.Cut(k, ":")
		if !used[k] && slices.Contains(checked, file) { // a file built only on another system is not checked here
			t.Errorf("%s formats no number now: remove it from numberFormattingAllowed", k)
		}
	}
}

type numberHit struct {
	pos  string // file:line, relative to the module root
	key  string // file:function
	call string
}

// numberFormattingHits type-checks every non-test package of internal/
// and cmd/ outside renderingPackages against the export data the go
// command builds, and returns each call that formats a number and the
// files it checked.
func numberFormattingHits(t *testing.T, root string) (hits []numberHit, checked []string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \",\"}}\t{{.Module}}", "./internal/...", "./cmd/...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	type pkg struct {
		path, dir string
		files     []string
	}
	var ours []pkg
	const module = "github.com/perfscope/perfscope/"
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 5 {
			continue
		}
		exports[f[0]] = f[1]
		rel, ok := strings.CutPrefix(f[0], module)
		if !ok || f[3] == "" || !(strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "cmd/")) {
			continue
		}
		if slices.ContainsFunc(renderingPackages, func(p string) bool { return rel == p || strings.HasPrefix(rel, p+"/") }) {
			continue
		}
		ours = append(ours, pkg{f[0], f[2], strings.Split(f[3], ",")})
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		e, ok := exports[path]
		if !ok || e == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(e)
	})
	for _, p := range ours {
		var files []*ast.File
		for _, name := range p.files {
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(p.path, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.path, err)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(root, fset.File(f.Pos()).Name())
			rel = filepath.ToSlash(rel)
			checked = append(checked, rel)
			for _, d := range f.Decls {
				fn := declName(d)
				ast.Inspect(d, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if what := formatsNumber(info, call); what != "" {
						pos := fset.Position(call.Pos())
						hits = append(hits, numberHit{pos: rel + ":" + strconv.Itoa(pos.Line), key: rel + ":" + fn, call: what})
					}
					return true
				})
			}
		}
	}
	return hits, checked
}

// declName names a declaration as numberFormattingAllowed does.
func declName(d ast.Decl) string {
	fd, ok := d.(*ast.FuncDecl)
	if !ok {
		return "(package level)"
	}
	if fd.Recv != nil && len(fd.Recv.List) > 0 {
		typ := fd.Recv.List[0].Type
		if s, ok := typ.(*ast.StarExpr); ok {
			typ = s.X
		}
		if ix, ok := typ.(*ast.IndexExpr); ok {
			typ = ix.X
		}
		if id, ok := typ.(*ast.Ident); ok {
			return id.Name + "." + fd.Name.Name
		}
	}
	return fd.Name.Name
}

// formatsNumber says which call formats a number ("strconv.Itoa",
// "fmt.Sprintf %d"), or "" when call does not.
func formatsNumber(info *types.Info, call *ast.CallExpr) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	obj := info.Uses[sel.Sel]
	fn, ok := obj.(*types.Func)
	if !ok || fn.Pkg() == nil {
		return ""
	}
	pkg, name := fn.Pkg().Path(), fn.Name()
	switch {
	case pkg == "strconv" && (strings.HasPrefix(name, "Format") || strings.HasPrefix(name, "Append") || name == "Itoa") && name != "FormatBool" && name != "AppendBool" && !strings.HasPrefix(name, "AppendQuote"):
		return "strconv." + name
	case pkg == "github.com/perfscope/perfscope/internal/units" && !strings.HasPrefix(name, "Parse"):
		return "units." + name
	case pkg == "golang.org/x/perf/benchunit" && (name == "Scale" || name == "Format"):
		return "benchunit." + name
	case pkg == "fmt":
		return fmtFormatsNumber(info, name, call)
	}
	return ""
}

// fmtFormatsNumber reports a fmt call that writes a number: a numeric
// verb, or a value of numeric type (without a String method) under %v,
// %s or a Print function.
func fmtFormatsNumber(info *types.Info, name string, call *ast.CallExpr) string {
	args := call.Args
	switch name {
	case "Errorf":
		return "" // errors name what failed; they are not results
	case "Fprintf", "Fprint", "Fprintln", "Appendf", "Append", "Appendln":
		if len(args) == 0 {
			return ""
		}
		args = args[1:]
	}
	if !strings.HasSuffix(name, "f") {
		for _, a := range args {
			if isNumber(info, a) {
				return "fmt." + name + " of a number"
			}
		}
		return ""
	}
	if len(args) == 0 {
		return ""
	}
	tv, ok := info.Types[args[0]]
	if !ok || tv.Value == nil {
		return "" // a format not known until run time
	}
	format, err := strconv.Unquote(tv.Value.ExactString())
	if err != nil {
		return ""
	}
	for i, verb := range verbs(format) {
		arg := i + 1
		if arg >= len(args) {
			break
		}
		switch verb {
		case 'd', 'f', 'F', 'g', 'G', 'e', 'E', 'b', 'o', 'O':
			if isNumber(info, args[arg]) {
				return "fmt." + name + " %" + string(verb)
			}
		case 'v', 's':
			if isNumber(info, args[arg]) {
				return "fmt." + name + " %" + string(verb) + " of a number"
			}
		}
	}
	return ""
}

// verbs lists the verbs of a format in the order they take arguments; a
// '*' width or precision takes one too.
func verbs(format string) []rune {
	var out []rune
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			if c == '*' {
				out = append(out, '*')
				continue
			}
			if strings.IndexByte("+-# 0123456789.[]", c) >= 0 {
				continue
			}
			if c != '%' {
				out = append(out, rune(c))
			}
			break
		}
	}
	return out
}

// isNumber reports whether e has a numeric type that fmt writes as a
// number: one without a String or Error method of its own.
func isNumber(info *types.Info, e ast.Expr) bool {
	tv, ok := info.Types[e]
	if !ok || tv.Type == nil {
		return false
	}
	b, ok := tv.Type.Underlying().(*types.Basic)
	if !ok || b.Info()&types.IsNumeric == 0 {
		return false
	}
	ms := types.NewMethodSet(tv.Type)
	for i := range ms.Len() {
		if n := ms.At(i).Obj().Name(); n == "String" || n == "Error" {
			return false
		}
	}
	return true
}
