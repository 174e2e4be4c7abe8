package report

import (
	"fmt"
	"strings"

	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/units"
)

// analysisDoc lays out one analysis: the load, CPU, allocations, waits,
// goroutines, routes, and what went wrong. Write puts the findings between
// its title and its sections.
func analysisDoc(a *profiles.Analysis) *doc {
	d := &doc{title: "perfscope report: run " + a.Run.ID}
	if a.Run.ID == "" {
		// Not a saved run: profiles from elsewhere, such as a scraped
		// range, named by their target.
		d.title = "perfscope report: " + a.Run.Target
	}
	d.meta = runMeta(a)
	d.add(loadSection(a.Run.Load, a.PerRequest))
	d.add(cpuSection(a))
	d.add(allocsSection(a.Allocs))
	d.add(waitSection("Blocking", "where goroutines waited (block profile)", "waiting in", a.Block))
	d.add(waitSection("Mutex contention", "where contended locks were released, charged with the waiters' delay (mutex profile)", "releasing", a.Mutex))
	d.add(goroutineSection(a.Goroutines))
	d.add(routeSection(a.Routes))
	d.add(sourceSection(a.Source))
	d.add(problemSection(a))
	return d
}

func runMeta(a *profiles.Analysis) []string {
	r := a.Run
	var meta []string
	if failed := LoadFailure(r.Load); failed != "" {
		meta = append(meta, capitalize(failed))
	}
	if r.PprofUnverified {
		meta = append(meta, "Profiles from "+r.PprofURL+", not proven to be the target's (--pprof-unverified)")
	}
	if r.Target != "" && r.ID != "" {
		meta = append(meta, "target "+r.Target)
	}
	when := []string{}
	if !r.Start.IsZero() {
		when = append(when, "started "+r.Start.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if r.Window > 0 {
		w := "profile window " + units.Seconds(r.Window)
		if r.Warmup > 0 {
			w += " after a " + units.Seconds(r.Warmup) + " warm-up"
		}
		when = append(when, w)
	}
	if len(when) > 0 {
		meta = append(meta, strings.Join(when, ", "))
	}
	var build []string
	if r.Version != "" {
		build = append(build, "perfscope "+r.Version)
	}
	if r.GitCommit != "" {
		c := "commit " + gitstate.Short(r.GitCommit)
		if r.GitDirty {
			c += " (with uncommitted changes)"
		}
		build = append(build, c)
	}
	if len(build) > 0 {
		meta = append(meta, strings.Join(build, ", "))
	}
	if r.Dir != "" {
		meta = append(meta, "saved in "+r.Dir)
	}
	if r.Interrupted {
		meta = append(meta, "interrupted: the run stopped early; what it measured is shown")
	}
	if a.Options.Route != "" {
		meta = append(meta, fmt.Sprintf("route filter %q: CPU and goroutine figures cover the matching samples only", a.Options.Route))
	}
	return meta
}

func loadSection(l *loadgen.Result, pr *profiles.PerRequest) section {
	s := section{title: "Load"}
	if l == nil {
		return s
	}
	pairs := loadPairs(l)
	if pr != nil {
		var per []string
		if pr.AllocObjects != nil {
			per = append(per, units.Count(*pr.AllocObjects)+" allocations")
		}
		if pr.AllocBytes != nil {
			per = append(per, units.Bytes(*pr.AllocBytes)+" allocated")
		}
		if pr.CPUSeconds != nil {
			per = append(per, units.Seconds(*pr.CPUSeconds)+" CPU")
		}
		if len(per) > 0 {
			pairs = append(pairs, [2]string{"per request", strings.Join(per, ", ") + " (profile window)"})
		}
	}
	s.blocks = append(s.blocks, block{pairs: pairs})
	return s
}

func cpuSection(a *profiles.Analysis) section {
	c := a.CPU
	s := section{title: "CPU"}
	if c == nil {
		return s
	}
	summary := fmt.Sprintf("%s of CPU samples over %s", units.Value(c.ProfileTotal, c.Unit), units.Seconds(c.Seconds))
	if c.Cores > 0 {
		summary += fmt.Sprintf(", %s cores busy on average", units.Sig(c.Cores))
	}
	lines := []string{summary}
	if a.Options.Route != "" {
		lines = append(lines, fmt.Sprintf("route %q: %s (%s of the CPU); the tables below are shares of the route",
			a.Options.Route, units.Value(c.Total, c.Unit), units.Percent(profiles.Share(c.Total, c.ProfileTotal))))
	}
	if c.Flat != nil && len(c.Flat.Classes) > 0 {
		var kinds []string
		for _, r := range c.Flat.Classes {
			kinds = append(kinds, kindName(r.Class)+" "+units.Percent(r.FlatShare))
		}
		lines = append(lines, "own CPU by kind of code: "+strings.Join(kinds, ", "))
	}
	if l := syscallLine(c.Syscalls); l != "" {
		lines = append(lines, l)
	}
	if g := c.GC; g != nil && g.Total > 0 {
		lines = append(lines, fmt.Sprintf("garbage collector %s, allocator %s, together %s of CPU",
			units.Percent(g.GCFraction), units.Percent(g.AllocatorFraction), units.Percent(g.CombinedFraction)))
	}
	s.blocks = append(s.blocks, block{lines: lines})
	if c.Flat != nil {
		s.blocks = append(s.blocks, funcBlock("Top functions by flat (own) CPU", c.Flat))
	}
	if c.Cum != nil {
		s.blocks = append(s.blocks, funcBlock("Top functions by cumulative CPU (with callees)", c.Cum))
	}
	if b, ok := syscallBlock(c.Syscalls); ok {
		s.blocks = append(s.blocks, b)
	}
	if c.Lines != nil && len(c.Lines.Rows) > 0 {
		caption := "Hot lines: CPU charged to the user line that spends it, with the call made there"
		if c.Lines.Attribution == profiles.AttributeLeaf {
			caption = "Hot lines: CPU by source line of the innermost frame"
		}
		s.blocks = append(s.blocks, siteBlock(caption, c.Lines, siteColumns{
			amount: "cpu", count: "samples", callee: "calls", byCount: false,
		}))
	}
	return s
}

func funcBlock(caption string, t *profiles.FuncTable) block {
	if t.Focus {
		caption += "; user code first, the rest folded by kind"
	}
	tb := &table{
		header: []string{"flat", "flat%", "cum", "cum%", "location", "function"},
		right:  []bool{true, true, true, true, false, false},
		code:   []bool{false, false, false, false, true, true},
	}
	for _, r := range t.Rows {
		tb.add(units.Value(r.Flat, t.Unit), units.Percent(r.FlatShare), units.Value(r.Cum, t.Unit), units.Percent(r.CumShare),
			location(r.File, r.Line), funcName(r.Function, r.Folded))
	}
	if t.Omitted > 0 {
		caption += fmt.Sprintf(" (%d more not shown)", t.Omitted)
	}
	if len(tb.rows) == 0 {
		return block{caption: caption, lines: []string{"no samples"}}
	}
	return block{caption: caption, table: tb}
}

// funcName names a row; a folded row says how many functions it holds.
func funcName(name string, folded int) string { return foldedName(name, folded, "function") }

// foldedName names a folded row after its kind of code and what it holds:
// "(runtime: 143 functions)".
func foldedName(name string, folded int, noun string) string {
	if folded == 0 {
		return name
	}
	kind := kindName(profiles.Class(strings.Trim(name, "()")))
	if folded != 1 {
		noun += "s"
	}
	return fmt.Sprintf("(%s: %d %s)", kind, folded, noun)
}

// kindName names a class of code for people.
func kindName(c profiles.Class) string {
	switch c {
	case profiles.User:
		return "user code"
	case profiles.Stdlib:
		return "standard library"
	case profiles.Dependency:
		return "dependencies"
	case profiles.Syscall:
		return "system calls"
	}
	return string(c)
}
