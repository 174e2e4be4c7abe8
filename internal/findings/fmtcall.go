package findings

import (
	"slices"
	"strings"

	"github.com/perfscope/perfscope/internal/escape"
)

// Thresholds of the fmt-hot rule, for the fmt calls of one function.
const (
	fmtCPU     = 0.03
	fmtObjects = 0.05
	fmtBytes   = 0.05
	// hotFuncCPU is the cum CPU share that makes a function hot: below
	// the thresholds above, its fmt calls count when they run on every
	// call of a hot function.
	hotFuncCPU = 0.05
	// hotFmtShare is what a hot function's fmt calls must still reach,
	// of CPU or of allocated objects or bytes.
	hotFmtShare = 0.005
)

func fmtRule() Rule {
	return Rule{
		ID:        "fmt-hot",
		Title:     "fmt formatting on a hot path",
		Summary:   "fmt.Sprintf, Fprintf and friends run on every request, parsing the format and boxing every argument",
		Resources: []Resource{CPU, AllocObjects, AllocBytes},
		compiler:  true,
		Explanation: sentence(`
fmt.Sprintf and its relatives are general: each call parses the format string,
takes its arguments as interface values (so numbers, strings and structs
passed to it are boxed, usually on the heap), formats them through reflection,
and allocates the result. That is fine for a log line per minute and costly per
request: metric lines, keys, log lines and responses built with fmt show up as
CPU in fmt.(*pp) and as allocations at the call and inside fmt.

The rule charges CPU samples and allocations inside package fmt to the line of
your code that called into it, directly or through a library such as log, and
adds the allocations the compiler says escape at that line as interface
arguments to fmt. It fires when the fmt calls of one function take at least
{} of CPU, {} of allocated objects or {} of allocated bytes; or, below that,
when the function is hot (at least {} of CPU, cum) and its fmt calls, other
than fmt.Errorf (which usually sits on an error path), still take {} of CPU,
allocated objects or bytes. Only sampled calls count: code the compiler sees but that did not
run (another mode, an error branch) does not.

Faster options: strconv.AppendInt, AppendFloat and AppendQuote into a reused
[]byte (or a sync.Pool of them); strings.Builder; for logs, a structured
logger whose typed attributes avoid boxing (log/slog's slog.Int, zap's
zap.Int). They trade fmt's convenience for a few more lines.`,
			share(fmtCPU), share(fmtObjects), share(fmtBytes), share(hotFuncCPU), share(hotFmtShare)),
		Fix: Fix{
			Summary: "Append to a reused []byte with strconv (or a strings.Builder) instead of fmt on the hot path.",
			Example: `// before
line := fmt.Sprintf("%s:%d|c", name, value)

// after: buf is reused (a field, or from a sync.Pool)
buf = append(buf[:0], name...)
buf = append(buf, ':')
buf = strconv.AppendInt(buf, value, 10)
buf = append(buf, "|c"...)`,
		},
		check: checkFmt,
	}
}

func checkFmt(e *env, r *Rule) []Finding {
	q := callerQuery{match: inPackages("fmt")}
	cpu := e.callers(CPU, q)
	objects, bytes := e.callers(AllocObjects, q), e.callers(AllocBytes, q)
	// Arguments boxed for fmt are allocated at the calling line itself.
	if e.ix != nil {
		leafObjects, leafBytes := e.leafLines(AllocObjects), e.leafLines(AllocBytes)
		for k := range unionKeys(cpu, objects) {
			if len(e.reasons(k.file, k.line, isFmtArgDiag)) == 0 {
				continue
			}
			for _, pair := range []struct{ dst, src sites }{{objects, leafObjects}, {bytes, leafBytes}} {
				if s := pair.src[k]; s != nil {
					pair.dst.add(frame{fn: k.fn, file: k.file, line: k.line, start: s.start}, s.value, "", "")
				}
			}
		}
	}
	order := []Resource{CPU, AllocObjects, AllocBytes}
	ls := lines(map[Resource]sites{CPU: cpu, AllocObjects: objects, AllocBytes: bytes}, order...)
	cum := e.cumCPU()
	measured := atLeast(map[Resource]float64{CPU: fmtCPU, AllocObjects: fmtObjects, AllocBytes: fmtBytes})
	fnOf := map[*group]bool{}
	gs := e.groups(ls, order, func(map[Resource]float64) bool { return true })
	var kept []*group
	for _, g := range gs {
		hot := cum[g.fn] != nil && e.share(CPU, cum[g.fn].value) >= hotFuncCPU
		if hot {
			// Errors are formatted on error paths, which a sample or two
			// does not make hot.
			hot = slices.ContainsFunc(g.lines, func(l *line) bool { return !strings.HasPrefix(l.call, "fmt.Errorf") }) &&
				atLeast(map[Resource]float64{CPU: hotFmtShare, AllocObjects: hotFmtShare, AllocBytes: hotFmtShare})(g.shares)
		}
		if measured(e.firing(g)) || hot {
			fnOf[g] = hot
			kept = append(kept, g)
		}
	}
	var out []Finding
	for _, g := range kept {
		sev, res := g.top(order)
		var evs []Evidence
		var calls []string
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			ev.Compiler = e.reasons(l.file, l.line, isFmtArgDiag)
			if ev.Call != "" && !contains(calls, ev.Call) {
				calls = append(calls, ev.Call)
			}
			evs = append(evs, ev)
		}
		summary := sentence("{} formats with {} on a hot path: {}.", g.fn, strings.Join(calls, ", "), shareText(g, order))
		if fnOf[g] {
			summary = sentence("{} is hot ({} of CPU, with what it calls) and formats with {} on every call: {}.",
				g.fn, share(e.share(CPU, cum[g.fn].value)), strings.Join(calls, ", "), shareText(g, order))
		}
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}

// isFmtArgDiag accepts escapes of arguments passed to fmt or log.
func isFmtArgDiag(d escape.Diagnostic) bool {
	return strings.Contains(d.Reason, " fmt.") || strings.Contains(d.Reason, " log.")
}

func unionKeys(ss ...sites) map[siteKey]bool {
	out := map[siteKey]bool{}
	for _, s := range ss {
		for k := range s {
			out[k] = true
		}
	}
	return out
}
