package findings

import (
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
)

// Thresholds of the built-per-call rule, for what one function spends
// building the objects of the constructors table.
const (
	perCallCPU     = 0.02
	perCallObjects = 0.05
	perCallBytes   = 0.05
)

// A constructor is an object that is expensive to build and meant to be
// built once and reused.
type constructor struct {
	// Name is the constructor as users write it.
	Name string
	// Funcs are the functions whose samples mean the object is being
	// built: the constructor, and the work it defers to first use.
	Funcs matcher
	// Why says what building it costs.
	Why string
}

// constructors is the table the built-per-call rule matches. It is never
// modified.
var constructors = []constructor{
	{
		Name:  "strings.NewReplacer",
		Funcs: matcher{"strings.NewReplacer", "strings.(*Replacer).build", "strings.makeGenericReplacer", "strings.makeSingleStringReplacer"},
		Why:   "a Replacer builds its lookup tables (a trie for generic replacers) on first use",
	},
	{
		Name:  "regexp.Compile",
		Funcs: matcher{"regexp.Compile", "regexp.MustCompile", "regexp.CompilePOSIX", "regexp.MustCompilePOSIX", "regexp.compile", "regexp/syntax.Parse", "regexp/syntax.Compile"},
		Why:   "compiling parses the expression and builds its program; package-level regexp.MatchString compiles on every call too",
	},
	{
		Name:  "template.Parse",
		Funcs: matcher{"text/template.(*Template).Parse", "html/template.(*Template).Parse", "text/template/parse.Parse", "text/template.parseFiles", "html/template.parseFiles", "text/template.parseGlob", "html/template.parseGlob"},
		Why:   "parsing a template lexes and parses its text (and reads its files) into a tree",
	},
	{
		Name:  "json.NewEncoder/NewDecoder",
		Funcs: matcher{"encoding/json.NewEncoder", "encoding/json.NewDecoder"},
		Why:   "each Encoder or Decoder allocates its state and buffers",
	},
	{
		Name:  "time.LoadLocation",
		Funcs: matcher{"time.LoadLocation"},
		Why:   "loading a location reads and parses the zoneinfo database from disk",
	},
}

func constructorOf(fn string) (constructor, bool) {
	for _, c := range constructors {
		if c.Funcs.match(fn) {
			return c, true
		}
	}
	return constructor{}, false
}

func perCallRule() Rule {
	var names []string
	for _, c := range constructors {
		names = append(names, c.Name)
	}
	return Rule{
		ID:        "built-per-call",
		Title:     "Reusable object built on every call",
		Summary:   "a replacer, regular expression, template, encoder or location is built per call instead of once",
		Resources: []Resource{CPU, AllocObjects, AllocBytes},
		Explanation: sentence(`
Some objects cost far more to build than to use, and are safe to share between
goroutines once built: strings.Replacer, *regexp.Regexp, parsed templates,
*time.Location. Building one inside a handler or a per-item function repeats
that cost on every call and allocates garbage every time.

The rule matches this table of constructors (and the work they defer to first
use, such as strings.(*Replacer).build): {}. It charges their CPU and
allocations to the line of your code that calls them, leaving out init
functions, which run once. It fires when one function's constructions take at
least {} of CPU, {} of allocated objects or {} of allocated bytes.

json.NewEncoder and json.NewDecoder per request are usual and cheap next to
the encoding itself; they fire only when their own allocations pass the same
thresholds.`,
			strings.Join(names, ", "), share(perCallCPU), share(perCallObjects), share(perCallBytes)),
		Fix: Fix{
			Summary: "Build it once (a package-level variable, a field set in the constructor, or sync.OnceValue) and reuse it: these types are safe for concurrent use.",
			Example: `// before: compiled and built on every call
func clean(s string) string {
	valid := regexp.MustCompile(` + "`^[a-z]+$`" + `)
	r := strings.NewReplacer(":", "_", "|", "_")
	...
}

// after
var (
	valid    = regexp.MustCompile(` + "`^[a-z]+$`" + `)
	replacer = strings.NewReplacer(":", "_", "|", "_")
)`,
		},
		check: checkPerCall,
	}
}

func checkPerCall(e *env, r *Rule) []Finding {
	match := func(fn string) bool { _, ok := constructorOf(fn); return ok }
	q := callerQuery{match: match}
	order := []Resource{CPU, AllocObjects, AllocBytes}
	byRes := map[Resource]sites{}
	for _, res := range order {
		ss := e.callers(res, q)
		for k := range ss {
			if isInit(k.fn) {
				delete(ss, k)
			}
		}
		byRes[res] = ss
	}
	ls := lines(byRes, order...)
	gs := e.groups(ls, order, atLeast(map[Resource]float64{CPU: perCallCPU, AllocObjects: perCallObjects, AllocBytes: perCallBytes}))
	var out []Finding
	for _, g := range gs {
		sev, res := g.top(order)
		var evs []Evidence
		var built []string
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			if c, ok := constructorOf(l.matched); ok {
				ev.Detail = sentence("builds {} on every call: {}", c.Name, c.Why)
				if !contains(built, c.Name) {
					built = append(built, c.Name)
				}
			}
			evs = append(evs, ev)
		}
		summary := sentence("{} builds {} on every call: {}.", g.fn, strings.Join(built, " and "), shareText(g, order))
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}

// isInit reports whether fn is a package initializer or runs inside one
// ("main.init", "main.init.0", "main.init.func1"): it runs once.
func isInit(fn string) bool {
	pkg := profiles.PackagePath(fn)
	rest := strings.TrimPrefix(fn, pkg+".")
	return rest == "init" || strings.HasPrefix(rest, "init.")
}
