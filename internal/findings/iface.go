package findings

import (
	"strings"

	"github.com/perfscope/perfscope/internal/escape"
)

// Thresholds of the iface-escape rule, for the boxing lines of one
// function.
const (
	ifaceCPU     = 0.03
	ifaceObjects = 0.10
)

// convFuncs box a value into an interface on the heap.
var convFuncs = matcher{"runtime.convT*", "runtime.convI2I"}

func ifaceRule() Rule {
	return Rule{
		ID:        "iface-escape",
		Title:     "Values escape through interface arguments",
		Summary:   "arguments passed as any (logging with ...any, callbacks) are boxed on the heap on a hot line",
		Resources: []Resource{CPU, AllocObjects, AllocBytes},
		compiler:  true,
		Explanation: sentence(`
Passing a value as an interface (any, error, a ...any parameter) stores it in an
interface box. When the compiler cannot prove that the callee does not keep the
box, it allocates it on the heap, at the call, on every call. A debug logger
with a func(msg string, args ...any) signature does this for every argument
even while debug logging is off, because the arguments are built before the
call decides to do nothing.

The rule finds lines of your code whose CPU samples are in the runtime's
boxing functions (runtime.convT64, convTstring, convTslice, convT, ...), and,
with compiler diagnostics (--source-dir), the lines where the compiler says a
value "escapes to heap" being "passed as interface argument" or in a
"... argument". Calls into fmt and log are left to the fmt-hot rule. It fires
when one function's boxing lines take at least {} of CPU or {} of allocated
objects.`,
			share(ifaceCPU), share(ifaceObjects)),
		Fix: Fix{
			Summary: "Check the level before calling (if logger.Enabled(...)), pass typed attributes (slog.Int, zap.Int) instead of ...any, or give the callee a concrete parameter type.",
			Example: `// before: id, size and user are boxed on the heap even when debug is off
log.Debug("event", "id", e.id, "size", e.size, "user", e.user)

// after
if log.Enabled(ctx, slog.LevelDebug) {
	log.Debug("event", "id", e.id, "size", e.size, "user", e.user)
}
// or, with typed attributes that do not box:
log.LogAttrs(ctx, slog.LevelDebug, "event", slog.Int("id", e.id), slog.String("user", e.user))`,
		},
		check: checkIface,
	}
}

// isIfaceArgDiag accepts escapes through an interface or variadic
// argument of something other than fmt and log.
func isIfaceArgDiag(d escape.Diagnostic) bool {
	if !strings.Contains(d.Reason, "passed as interface argument") && !strings.Contains(d.Reason, "... argument") {
		return false
	}
	return !isFmtArgDiag(d)
}

func checkIface(e *env, r *Rule) []Finding {
	// Lines that call fmt or log box for them: fmt-hot reports those.
	fmtLines := unionKeys(
		e.callers(CPU, callerQuery{match: inPackages("fmt", "log", "log/slog")}),
		e.callers(AllocObjects, callerQuery{match: inPackages("fmt", "log", "log/slog")}))
	order := []Resource{CPU, AllocObjects, AllocBytes}
	ls := lines(e.runtimeCalls(convFuncs, isIfaceArgDiag, fmtLines), order...)
	var out []Finding
	for _, g := range e.groups(ls, order, atLeast(map[Resource]float64{CPU: ifaceCPU, AllocObjects: ifaceObjects})) {
		sev, res := g.top(order[:2])
		var evs []Evidence
		var callees []string
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			ev.Compiler = e.reasons(l.file, l.line, isIfaceArgDiag)
			if l.matched != "" {
				ev.Detail = sentence("boxes values in {}", l.matched)
			}
			for _, c := range ev.Compiler {
				if _, callee, ok := strings.Cut(c, "argument to "); ok {
					callee, _, _ = strings.Cut(callee, ",")
					if !contains(callees, callee) {
						callees = append(callees, callee)
					}
				}
			}
			evs = append(evs, ev)
		}
		to := "interface arguments"
		if len(callees) > 0 {
			to = "interface arguments of " + strings.Join(callees, ", ")
		}
		summary := sentence("{} boxes values into {} on the heap: {}.", g.fn, to, shareText(g, order))
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}
