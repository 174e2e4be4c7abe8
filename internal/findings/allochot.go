package findings

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
)

// Thresholds of the alloc-hot rule: the share of allocated objects or
// bytes that one line must reach.
const (
	allocHotObjects = 0.20
	allocHotBytes   = 0.20
)

func allocHotRule() Rule {
	return Rule{
		ID:        "alloc-hot",
		Title:     "Hot allocation site",
		Summary:   "one line of your code accounts for a large share of the allocations, and no other rule explains why",
		Resources: []Resource{AllocObjects, AllocBytes},
		residual:  true,
		Explanation: sentence(`
Every allocation costs the allocator's work now and the garbage collector's
later, in proportion to how many objects and bytes a program allocates. When
one line of your code accounts for a large share of them, that line decides
how much the collector runs.

The other rules recognise known causes (string concatenation, fmt, growth,
encoders, interface conversions, ...). This rule catches the rest: it charges
each allocation to the innermost line of your code on its stack, and names
the package the allocations happen in — the library called there (math/big,
encoding/json, a decimal package) or your own package when the line
allocates itself (new, composite literals). It fires when one line takes at
least {} of allocated objects or {} of allocated bytes, with at least {}
sampling periods of bytes (a share of one or two samples is chance), while
allocating and collecting take at least {} of CPU (gc-pressure's threshold:
below it, allocations are not where the CPU goes), and no other rule's
finding names the line. Lines that allocate mostly through what other rules
judge (concatenation, make and append, growing builders and buffers,
interface conversions) are left to them, fixed or not.`,
			share(allocHotObjects), share(allocHotBytes), count(minAllocSamples), share(gcShare)),
		Fix: Fix{
			Summary: "Allocate less per call: keep and reuse values and buffers across calls (a receiver kept in a struct, a slice reset with s[:0], sync.Pool for values shared between goroutines), preallocate what grows, and use a library's in-place API where it has one — math/big's z.Add(x, y) writes into z instead of a new Int.",
			Example: `// before: two new big.Int values (and their digits) per operation
func interest(amount, rate, scale *big.Int) *big.Int {
	return new(big.Int).Quo(new(big.Int).Mul(amount, rate), scale)
}

// after: the receivers are kept and reused; their digits are too
type calc struct{ prod, quo big.Int }

func (c *calc) interest(amount, rate, scale *big.Int) *big.Int {
	c.prod.Mul(amount, rate)
	return c.quo.Quo(&c.prod, scale)
}`,
		},
		check: checkAllocHot,
	}
}

// othersAllocations are the calls whose allocations other rules judge:
// concatenation, growing and sizing slices, maps and buffers, interface
// conversions. A line that allocates through them is theirs, fixed or not.
func othersAllocations() matcher {
	return slices.Concat(concatFuncs, growthFuncs, growthWrappers, convFuncs, matcher{"runtime.makeslice*", "runtime.makemap*"})
}

func checkAllocHot(e *env, r *Rule) []Finding {
	if e.a.CPU == nil || e.a.CPU.GC == nil || e.a.CPU.GC.CombinedFraction < gcShare {
		return nil
	}
	order := []Resource{AllocObjects, AllocBytes}
	byRes := map[Resource]sites{}
	for _, res := range order {
		byRes[res] = e.userLines(res)
	}
	others := othersAllocations()
	pkgs := map[siteKey]map[string]int64{} // objects by the package that allocated them
	theirs := map[siteKey]int64{}          // objects allocated through othersAllocations
	for fs, v := range e.samples(AllocObjects) {
		k := profiles.UserFrame(fs, -1, frameClass)
		if k < 0 {
			continue
		}
		key := siteKey{fs[k].fn, fs[k].file, fs[k].line}
		if pkgs[key] == nil {
			pkgs[key] = map[string]int64{}
		}
		pkgs[key][allocatingPackage(fs, k)] += abs(v)
		if anyFrame(fs[:k], others.match) {
			theirs[key] += abs(v)
		}
	}
	cpuCalls := e.userLines(CPU)
	var out []Finding
	for _, l := range lines(byRes, order...) {
		if e.explained[siteKey{file: l.file, line: l.line}] || isInit(l.fn) || !e.enoughAllocs(l.values[AllocBytes]) {
			continue
		}
		// The allocation profile leaves the runtime's frames out (a
		// make at the line is the line's own allocation); the CPU
		// profile shows the call that allocates.
		if 2*theirs[l.siteKey] >= l.values[AllocObjects] || cpuCalls[l.siteKey] != nil && others.match(cpuCalls[l.siteKey].call()) {
			continue
		}
		objects, bytes := e.share(AllocObjects, l.values[AllocObjects]), e.share(AllocBytes, l.values[AllocBytes])
		if objects < allocHotObjects && bytes < allocHotBytes {
			continue
		}
		sev, res := objects, AllocObjects
		if bytes > objects {
			sev, res = bytes, AllocBytes
		}
		own := profiles.PackagePath(l.fn)
		where, advice := allocWhere(pkgs[l.siteKey], own)
		ev := e.evidence(l, order)
		summary := sentence("{} allocates at {}, {}: {} of allocated objects and {} of allocated bytes. {}",
			l.fn, short(l.file, l.line), where, share(objects), share(bytes), advice)
		out = append(out, r.finding(sev, res, summary, []Evidence{ev}))
	}
	return out
}

// allocatingPackage is the package an allocation charged to user frame k
// of fs happens in: the package of the function called at the line, or
// the line's own when the line allocates itself (the allocation profile's
// innermost frame, or a call into the runtime such as makeslice or
// growslice, which only carries out what the line asked for).
func allocatingPackage(fs []frame, k int) string {
	if k == 0 || fs[k-1].class == profiles.Runtime {
		return profiles.PackagePath(fs[k].fn)
	}
	return profiles.PackagePath(fs[k-1].fn)
}

// allocWhere says where a line's objects are allocated, by package, most
// first ("in math/big (83.0%) and in the line itself (17.0%)"), and what
// to do about the packages that carry at least a third of them: use a
// library's in-place API, or reuse what the line allocates itself.
func allocWhere(pkgs map[string]int64, own string) (where Text, advice string) {
	var total int64
	for _, v := range pkgs {
		total += v
	}
	names := slices.SortedFunc(maps.Keys(pkgs), func(a, b string) int {
		return cmp.Or(cmp.Compare(pkgs[b], pkgs[a]), strings.Compare(a, b))
	})
	var parts []Text
	var libs, tips []string
	for _, n := range names {
		frac := profiles.Share(pkgs[n], total)
		name := "in " + n
		if n == own {
			name = "in the line itself"
		}
		parts = append(parts, sentence("{} ({})", name, share(frac)))
		switch {
		case frac < 1.0/3:
		case n == own:
			tips = append(tips, "Reuse what the line allocates itself (new, make, literals) across calls, or preallocate it.")
		default:
			libs = append(libs, n)
		}
	}
	if len(libs) > 0 {
		tips = append([]string{"Reuse what " + strings.Join(libs, " and ") + " allocates: call its API that writes into a receiver or buffer you keep across calls."}, tips...)
	}
	if len(tips) == 0 {
		tips = append(tips, "Reuse what it allocates across calls.")
	}
	return join(parts, ", "), strings.Join(tips, " ")
}
