package findings

import (
	"go/ast"
	"go/types"
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
)

// Thresholds of the growth rule, for the growing appends and map
// assignments of one function.
const (
	growthCPU     = 0.05
	growthObjects = 0.10
	growthBytes   = 0.10
)

// growthFuncs grow a slice (runtime.growslice, behind append) or a map
// (the Swiss-table maps of Go 1.24 and later, and the older hash maps).
// A map's first insert (maps.(*Map).growToSmall) is not among them: it
// allocates the map's first group, which a size hint would allocate just the
// same, so it is not growth a preallocation avoids.
var growthFuncs = matcher{
	"runtime.growslice",
	"internal/runtime/maps.(*table).rehash", "internal/runtime/maps.(*table).grow",
	"internal/runtime/maps.(*table).split",
	"internal/runtime/maps.(*Map).growToTable",
	"runtime.hashGrow", "runtime.growWork*", "runtime.evacuate*",
}

// growthWrappers are library calls that grow a buffer on the user's
// behalf when it was not sized up front.
var growthWrappers = matcher{"strings.(*Builder).*", "bytes.(*Buffer).*", "bytes.growSlice", "slices.Grow*", "slices.Insert*", "slices.AppendSeq*", "slices.Collect*"}

func growthRule() Rule {
	return Rule{
		ID:        "growth",
		Title:     "Slices and maps grown without preallocation",
		Summary:   "append and map assignment regrow and copy a slice or map that could be sized up front",
		Resources: []Resource{CPU, AllocObjects, AllocBytes},
		Explanation: sentence(`
A slice that starts empty and is appended to n times is reallocated and copied
about log2(n) times, each time to a larger array; a map that starts small is
rehashed into larger tables as it fills. When the final size is known, or can
be estimated, sizing it up front makes that one allocation.

The rule charges CPU samples in runtime.growslice and in map growth (table
rehash and split, growToTable) to the line of your code that appended or
assigned, directly or through strings.Builder, bytes.Buffer or slices.Grow,
together with the objects and bytes that line allocates itself. A line the
source shows appending to its own slice in a loop (s = append(s, x)) counts
even when the window caught no CPU sample in growslice. It fires when
one function's growing lines take at least {} of CPU, {} of allocated objects
or {} of allocated bytes.`,
			share(growthCPU), share(growthObjects), share(growthBytes)),
		Fix: Fix{
			Summary: "Give make a capacity (slices) or a size hint (maps) when the size is known or can be estimated; Grow a strings.Builder or bytes.Buffer first; reuse the slice across calls with s[:0].",
			Example: `// before
var ids []int
index := map[int]int{}

// after
ids := make([]int, 0, n)
index := make(map[int]int, n)`,
		},
		check: checkGrowth,
	}
}

func checkGrowth(e *env, r *Rule) []Finding {
	between := func(f frame) bool { return f.class == profiles.Runtime || growthWrappers.match(f.fn) }
	cpu := e.callers(CPU, callerQuery{match: growthFuncs.match, between: between})
	objects, bytes := e.leafLines(AllocObjects), e.leafLines(AllocBytes)
	// Growth inside a Builder or Buffer allocates below the user's line,
	// in the library's frames.
	wrapped := callerQuery{match: growthWrappers.match, between: func(f frame) bool { return growthWrappers.match(f.fn) }}
	for k, s := range e.callers(AllocObjects, wrapped) {
		objects[k] = s
	}
	for k, s := range e.callers(AllocBytes, wrapped) {
		bytes[k] = s
	}
	// A line's allocations count as growth where the CPU profile saw it
	// grow, or where the source shows it appending to a slice in a loop:
	// growslice is cheap enough that a short window may hold none of its
	// CPU samples while the allocation profile holds its arrays.
	appends := map[siteKey]bool{}
	keep := func(ss sites) sites {
		out := sites{}
		for k, s := range ss {
			if cpu[k] == nil {
				grows, seen := appends[k]
				if !seen {
					grows = e.appendInLoop(k.file, k.line)
					appends[k] = grows
				}
				if !grows {
					continue
				}
			}
			out[k] = s
		}
		return out
	}
	order := []Resource{CPU, AllocObjects, AllocBytes}
	ls := lines(map[Resource]sites{CPU: cpu, AllocObjects: keep(objects), AllocBytes: keep(bytes)}, order...)
	var out []Finding
	for _, g := range e.groups(ls, order, atLeast(map[Resource]float64{CPU: growthCPU, AllocObjects: growthObjects, AllocBytes: growthBytes})) {
		sev, res := g.top(order)
		var evs []Evidence
		var what []string
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			kind := "a slice"
			if strings.Contains(l.matched, "maps.") || strings.Contains(l.matched, "hashGrow") || strings.Contains(l.matched, "evacuate") {
				kind = "a map"
			}
			if l.matched == "" {
				l.matched = "append"
			}
			ev.Call = l.matched
			ev.Detail = sentence("grows {} ({})", kind, l.matched)
			if !contains(what, kind) {
				what = append(what, kind)
			}
			evs = append(evs, ev)
		}
		summary := sentence("{} grows {} element by element: {}.", g.fn, strings.Join(what, " and "), shareText(g, order))
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}

// appendInLoop reports whether the source shows, at line of file, an
// assignment of append to the slice it appends to (s = append(s, ...)),
// inside a for statement's body.
func (e *env) appendInLoop(file string, line int64) bool {
	found := false
	e.inspectLoops(file, func(sf *profiles.SourceFile, _ ast.Node, body *ast.BlockStmt) bool {
		ast.Inspect(body, func(n ast.Node) bool {
			if found || n == nil {
				return false
			}
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 || int64(sf.Fset.Position(as.Pos()).Line) != line {
				return true
			}
			call, ok := as.Rhs[0].(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			if fn, ok := call.Fun.(*ast.Ident); ok && fn.Name == "append" {
				found = types.ExprString(call.Args[0]) == types.ExprString(as.Lhs[0])
			}
			return !found
		})
		return !found
	})
	return found
}
