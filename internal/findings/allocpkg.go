package findings

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
)

// Thresholds of the alloc-package rule: the share of allocated objects or
// bytes one library package must make on behalf of your code, and the
// share of CPU that allocating and collecting must take.
const (
	allocPackageObjects = 0.25
	allocPackageBytes   = 0.25
	allocPackageGC      = 0.10
)

func allocPackageRule() Rule {
	return Rule{
		ID:        "alloc-package",
		Title:     "A library makes most of the allocations",
		Summary:   "calls from your code into one library package allocate a large share of all objects or bytes, spread over lines none of which stands out alone",
		Resources: []Resource{AllocObjects, AllocBytes},
		residual:  true,
		Explanation: sentence(`
A library whose every operation returns a new value (decimal and big-number
types, immutable collections, builders that copy) allocates a little at each
of its lines and at each of your calls to it. No one line stands out, so
alloc-hot, which judges lines, stays quiet; together they may still make most
of the garbage the collector has to handle.

The rule charges each allocation to the package whose code made it (the
innermost function of the stack outside the runtime) and to the line of your
code that called into that package. It counts only libraries: packages that
are not the standard library (whose allocations the other rules judge by
cause: fmt, encoding/json, concatenation, growth) and not package main, called
directly from a line of another package of your code. It fires when one
library makes at least {} of allocated objects or {} of allocated bytes, with
at least {} sampling periods of bytes, and names the lines that call it most.
Lines another rule's finding names are left to it.

It needs allocating and collecting to take at least {} of CPU, not
gc-pressure's {}: a library that makes a quarter of the allocations then
costs a few percent of CPU by itself, which is worth a finding when the fix is
local (reusing its values, or a representation that does not allocate), while
below {} the allocations are not where the CPU goes.`,
			share(allocPackageObjects), share(allocPackageBytes), count(minAllocSamples), share(allocPackageGC), share(gcShare), share(allocPackageGC)),
		Fix: Fix{
			Summary: "Allocate less through the library: use its API that writes into a value you keep (z.Add(x, y) rather than x.Add(y) returning a new value), keep what it computes when the inputs repeat, or use a representation that does not allocate, such as integer cents instead of a decimal type.",
			Example: `// before: every operation returns a new decimal
amount := price.Mul(decimal.NewFromInt(qty))
total = total.Add(amount.Add(amount.Mul(tax))).Round(2)

// after: integer hundredths of a cent, no allocation
amount := cents * qty
total += amount + (amount*taxRate+5000)/10000`,
		},
		check: checkAllocPackage,
	}
}

// libraryCall finds, in a sample's stack, the library package that made
// the allocation and the frame of the user's code that called into it:
// the innermost frame outside the runtime is the allocating package's,
// and the first frame of another package outward from it must be user
// code. ok is false when the allocating package is the standard library,
// package main or the runtime, or when the package was not called from
// user code (a handler the server calls, a goroutine).
func libraryCall(fs []frame) (pkg string, call int, ok bool) {
	i := 0
	for i < len(fs) && fs[i].class == profiles.Runtime {
		i++
	}
	if i == len(fs) || fs[i].class != profiles.User && fs[i].class != profiles.Dependency {
		return "", 0, false
	}
	pkg = profiles.PackagePath(fs[i].fn)
	if pkg == "" || pkg == "main" {
		return "", 0, false
	}
	for j := i + 1; j < len(fs); j++ {
		if fs[j].class == profiles.Runtime || profiles.PackagePath(fs[j].fn) == pkg {
			continue
		}
		return pkg, j, fs[j].class == profiles.User
	}
	return "", 0, false
}

func checkAllocPackage(e *env, r *Rule) []Finding {
	if e.a.CPU == nil || e.a.CPU.GC == nil || e.a.CPU.GC.CombinedFraction < allocPackageGC {
		return nil
	}
	order := []Resource{AllocObjects, AllocBytes}
	type library struct {
		values map[Resource]int64
		calls  map[Resource]sites // by the user line calling into it
		lines  map[siteKey]bool   // its own lines that allocate
	}
	libs := map[string]*library{}
	for _, res := range order {
		for fs, v := range e.samples(res) {
			pkg, call, ok := libraryCall(fs)
			if !ok {
				continue
			}
			c := fs[call]
			if e.explained[siteKey{file: c.file, line: c.line}] {
				continue
			}
			lib := libs[pkg]
			if lib == nil {
				lib = &library{values: map[Resource]int64{}, calls: map[Resource]sites{}, lines: map[siteKey]bool{}}
				libs[pkg] = lib
			}
			lib.values[res] += abs(v)
			if lib.calls[res] == nil {
				lib.calls[res] = sites{}
			}
			lib.calls[res].add(c, v, fs[call-1].fn, "")
			for _, f := range fs[:call] {
				if f.class != profiles.Runtime {
					lib.lines[siteKey{f.fn, f.file, f.line}] = true
				}
			}
		}
	}
	var out []Finding
	for _, pkg := range slices.Sorted(maps.Keys(libs)) {
		lib := libs[pkg]
		objects, bytes := e.share(AllocObjects, lib.values[AllocObjects]), e.share(AllocBytes, lib.values[AllocBytes])
		if objects < allocPackageObjects && bytes < allocPackageBytes || !e.enoughAllocs(lib.values[AllocBytes]) {
			continue
		}
		ls := slices.Collect(maps.Values(lines(lib.calls, order...)))
		slices.SortFunc(ls, func(a, b *line) int {
			return cmp.Or(cmp.Compare(e.lineWeight(b, order), e.lineWeight(a, order)), strings.Compare(a.file, b.file), cmp.Compare(a.line, b.line))
		})
		var evs []Evidence
		for _, l := range ls {
			ev := e.evidence(l, order)
			ev.Detail = sentence("calls into the library ({})", l.call)
			evs = append(evs, ev)
		}
		sev, res := objects, AllocObjects
		if bytes > objects {
			sev, res = bytes, AllocBytes
		}
		heaviest := ls[0]
		summary := sentence("{} allocates {} of allocated objects and {} of allocated bytes, at {} of its lines, called from {} {} of your code; the heaviest, {} at {}, makes {}. Together they decide much of how often the collector runs.",
			pkg, share(objects), share(bytes), count(len(lib.lines)), count(len(ls)), pluralWord(len(ls), "line", "lines"),
			heaviest.fn, short(heaviest.file, heaviest.line), share(e.lineWeight(heaviest, order)))
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}

// pluralWord is one or many, by n.
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
