package findings

import (
	"fmt"
	"go/ast"
	"strings"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
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
		Explanation: sentence(`
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
It reports the lines the source shows inside a for statement; concatenations
outside any loop, or whose source is not found, are concat-hot's.

It fires when the concatenating lines of one function take at least {} of
CPU, {} of allocated objects or {} of allocated bytes.`,
			share(concatCPU), share(concatObjects), share(concatBytes)),
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
		check: func(e *env, r *Rule) []Finding { return checkConcat(e, r, true) },
	}
}

// concatHotRule shares concat-loop's detection: a hot concatenation that
// is not inside a loop copies no string built so far, so it has its own
// title and fix.
func concatHotRule() Rule {
	return Rule{
		ID:        "concat-hot",
		Title:     "String concatenation on a hot path",
		Summary:   "a line outside any loop builds a new string with + on every call",
		Resources: []Resource{CPU, AllocObjects, AllocBytes},
		compiler:  true,
		Explanation: sentence(`
Each a + b + c that the compiler cannot keep on the stack allocates a new
string and copies its operands into it. Outside a loop that is one allocation
per call, not a quadratic copy, but on a path run for every request (a cache
key, a log prefix, a URL built per call) it adds up: the allocation, the copy
and the garbage collector's work to sweep it again.

The rule finds the same lines as concat-loop (CPU samples in the runtime's
concatenation functions called directly from a line of your code, and the
objects and bytes that line allocates, with the compiler's reasons when it has
the source) and reports those that are not inside a for statement. When the
profiled program's source is not found it cannot tell, and reports the lines
here with a note saying so.

It fires when the concatenating lines of one function take at least {} of
CPU, {} of allocated objects or {} of allocated bytes.`,
			share(concatCPU), share(concatObjects), share(concatBytes)),
		Fix: Fix{
			Summary: "Avoid building the string where it is only a key (a struct of the parts as a map key), or build it into a buffer reused across calls (append, strconv.Append* for numbers) and look it up by string(buf), which does not allocate.",
			Example: `// before: a new string per request
key := tenant + ":" + resource
hits[key]++

// after: no string is built
type hitKey struct{ tenant, resource string }
hits[hitKey{tenant, resource}]++

// or: one buffer kept across calls; a lookup by string(buf) allocates nothing
buf = append(buf[:0], tenant...)
buf = append(buf, ':')
buf = append(buf, resource...)
n := hits[string(buf)]`,
		},
		check: func(e *env, r *Rule) []Finding { return checkConcat(e, r, false) },
	}
}

// checkConcat reports the concatenating lines inside loops when looped is
// set, and the others when it is not: one detection, two rules. Lines
// whose source is not found count as not looped, since no loop was seen.
func checkConcat(e *env, r *Rule, looped bool) []Finding {
	order := []Resource{CPU, AllocObjects, AllocBytes}
	byRes := e.runtimeCalls(concatFuncs, isConcatDiag, nil)
	unseen := map[siteKey]bool{}
	for _, ss := range byRes {
		for k, s := range ss {
			l := &line{siteKey: k, start: s.start}
			if !e.sourceMatches(l) {
				unseen[k] = true
			}
			if e.inLoop(l) != looped {
				delete(ss, k)
			}
		}
	}
	ls := lines(byRes, order...)
	gs := e.groups(ls, order, atLeast(map[Resource]float64{CPU: concatCPU, AllocObjects: concatObjects, AllocBytes: concatBytes}))
	var out []Finding
	for _, g := range gs {
		sev, res := g.top(order)
		var evs []Evidence
		unchecked := false
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			if ev.Call == "" || !concatFuncs.match(ev.Call) {
				ev.Call = l.matched
			}
			ev.Compiler = e.reasons(l.file, l.line, isConcatDiag)
			if len(ev.Compiler) == 0 {
				ev.Compiler = e.reasons(l.file, l.line, nil)
			}
			unchecked = unchecked || unseen[l.siteKey]
			evs = append(evs, ev)
		}
		first := g.lines[0]
		var summary Text
		if looped {
			summary = sentence("{} concatenates strings in a loop at {}: {}. Each + copies the whole string built so far into a new allocation.",
				g.fn, short(first.file, first.line), shareText(g, order))
		} else {
			summary = sentence("{} builds a new string with + at {} on every call: {}. Each concatenation allocates the result and copies its parts into it.",
				g.fn, short(first.file, first.line), shareText(g, order))
		}
		f := r.finding(sev, res, summary, evs)
		if unchecked {
			f.Notes = append(f.Notes, "Whether these lines are inside a loop was not checked: the profiled program's source was not found or is another version (pass --source-dir). If they are, see concat-loop.")
		}
		out = append(out, f)
	}
	return out
}

// isConcatDiag accepts escape diagnostics about a concatenation.
func isConcatDiag(d escape.Diagnostic) bool {
	subj, _, _ := strings.Cut(d.Message, " escapes to heap")
	return strings.Contains(subj, " + ")
}

// inLoop reports whether the source shows the line inside a for
// statement's body; never when the source does not match the profile.
func (e *env) inLoop(l *line) bool {
	if !e.sourceMatches(l) {
		return false
	}
	found := false
	e.inspectLoops(l.file, func(sf *profiles.SourceFile, loop ast.Node, body *ast.BlockStmt) bool {
		from, to := int64(sf.Fset.Position(loop.Pos()).Line), int64(sf.Fset.Position(body.End()).Line)
		found = l.line >= from && l.line <= to
		return !found
	})
	return found
}

// hasSource reports whether file's source is found and parses.
func (e *env) hasSource(file string) bool {
	sf := e.src.File(file)
	return sf.Path != "" && sf.Parse() == nil
}

// sourceMatches reports whether the source of l's file is found and
// defines l's function around l: whether what the source says of the line
// is about the program that was profiled.
func (e *env) sourceMatches(l *line) bool {
	return e.hasSource(l.file) && (l.start == 0 || checkFunction(e.src.File(l.file), l.fn, l.start, l.line) == nil)
}

// inspectLoops calls f with each for statement of file's source and its
// body, outermost first, until f returns false. Files whose source is not
// found or does not parse have no loops.
func (e *env) inspectLoops(file string, f func(sf *profiles.SourceFile, loop ast.Node, body *ast.BlockStmt) bool) {
	if !e.hasSource(file) {
		return
	}
	sf := e.src.File(file)
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
