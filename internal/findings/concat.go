package findings

import (
	"fmt"
	"go/ast"
	"strings"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/units"
)

// Thresholds of the concat-loop rule: the share of each resource that the
// concatenations of one function must reach.
const (
	concatCPU     = 0.03
	concatObjects = 0.10
	concatBytes   = 0.10
)

// concatFuncs are the runtime functions a string concatenation compiles
// to: concatstring2..5 for a fixed number of operands, concatstrings for
// more, concatbyte* for []byte(a + b).
var concatFuncs = matcher{"runtime.concatstring*", "runtime.concatbyte*"}

func concatRule() Rule {
	return Rule{
		ID:        "concat-loop",
		Title:     "String concatenation in a loop",
		Summary:   "a line builds a string with + or += over and over, copying it every time",
		Resources: []Resource{CPU, AllocObjects, AllocBytes},
		compiler:  true,
		Explanation: fmt.Sprintf(`
Go strings are immutable: s = s + x (or s = x + s, or s += x) allocates a new
string and copies all of s into it. In a loop that grows s, the work is
quadratic in the final length and every step is one allocation, which the
garbage collector then has to sweep.

The rule finds CPU samples in the runtime's concatenation functions
(runtime.concatstring2..5, runtime.concatstrings, runtime.concatbyte*) called
directly from a line of your code, and the objects and bytes that line
allocates itself. With compiler diagnostics (--source-dir) it also knows the
lines whose concatenation escapes to the heap, and shows the compiler's reason
("`+"`string(c) + s`"+` escapes to heap: stored in `+"`s`"+`, then returned").
When the source is found it checks that the line is inside a loop.

It fires when the concatenating lines of one function take at least %s of
CPU, %s of allocated objects or %s of allocated bytes.`,
			units.Percent(concatCPU), units.Percent(concatObjects), units.Percent(concatBytes)),
		Fix: Fix{
			Summary: "Build the string once with a strings.Builder (or an append to a []byte), sized up front with Grow when the final length is known.",
			Example: `// before: one allocation and a full copy per character
for len(s) < n {
	s = string(c) + s
}

// after: one allocation
var b strings.Builder
b.Grow(n)
for range n - len(s) {
	b.WriteRune(c)
}
b.WriteString(s)
s = b.String()`,
		},
		check: checkConcat,
	}
}

func checkConcat(e *env, r *Rule) []Finding {
	order := []Resource{CPU, AllocObjects, AllocBytes}
	ls := lines(e.runtimeCalls(concatFuncs, isConcatDiag, nil), order...)
	gs := e.groups(ls, order, atLeast(map[Resource]float64{CPU: concatCPU, AllocObjects: concatObjects, AllocBytes: concatBytes}))
	var out []Finding
	for _, g := range gs {
		sev, res := g.top(order)
		var evs []Evidence
		looped := false
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			if ev.Call == "" || !concatFuncs.match(ev.Call) {
				ev.Call = l.matched
			}
			ev.Compiler = e.reasons(l.file, l.line, isConcatDiag)
			if len(ev.Compiler) == 0 {
				ev.Compiler = e.reasons(l.file, l.line, nil)
			}
			looped = looped || e.inLoop(l)
			evs = append(evs, ev)
		}
		where := "on a hot line"
		if looped {
			where = "in a loop"
		}
		first := g.lines[0]
		summary := fmt.Sprintf("%s concatenates strings %s at %s: %s. Each + copies the whole string built so far into a new allocation.",
			g.fn, where, short(first.file, first.line), shareText(g, order))
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}

// isConcatDiag accepts escape diagnostics about a concatenation.
func isConcatDiag(d escape.Diagnostic) bool {
	subj, _, _ := strings.Cut(d.Message, " escapes to heap")
	return strings.Contains(subj, " + ")
}

// inLoop reports whether the source shows the line inside a for
// statement's body.
func (e *env) inLoop(l *line) bool {
	found := false
	e.inspectLoops(l.file, func(sf *profiles.SourceFile, loop ast.Node, body *ast.BlockStmt) bool {
		from, to := int64(sf.Fset.Position(loop.Pos()).Line), int64(sf.Fset.Position(body.End()).Line)
		found = l.line >= from && l.line <= to
		return !found
	})
	return found
}

// inspectLoops calls f with each for statement of file's source and its
// body, outermost first, until f returns false. Files whose source is not
// found or does not parse have no loops.
func (e *env) inspectLoops(file string, f func(sf *profiles.SourceFile, loop ast.Node, body *ast.BlockStmt) bool) {
	sf := e.src.File(file)
	if sf.Path == "" || sf.Parse() != nil {
		return
	}
	more := true
	ast.Inspect(sf.AST, func(n ast.Node) bool {
		if !more || n == nil {
			return false
		}
		switch s := n.(type) {
		case *ast.ForStmt:
			more = f(sf, s, s.Body)
		case *ast.RangeStmt:
			more = f(sf, s, s.Body)
		}
		return more
	})
}

// short is "base.go:12", enough to find a line in a summary.
func short(file string, line int64) string {
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		file = file[i+1:]
	}
	if line == 0 {
		return file
	}
	return fmt.Sprintf("%s:%d", file, line)
}
