package report

import (
	"fmt"
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/units"
)

// siteColumns names the columns of a site table.
type siteColumns struct {
	amount, count, callee string
	byCount               bool // the count column comes first
}

func siteBlock(caption string, t *profiles.SiteTable, cols siteColumns) block {
	if t.Focus {
		caption += "; user code first, the rest folded by kind"
	}
	if t.Omitted > 0 {
		caption += fmt.Sprintf(" (%d more not shown)", t.Omitted)
	}
	tb := &table{
		header: []string{cols.amount, "%", cols.count, "%", "location", "function", cols.callee},
		right:  []bool{true, true, true, true, false, false, false},
		code:   []bool{false, false, false, false, true, true, true},
	}
	if cols.byCount {
		tb.header = []string{cols.count, "%", cols.amount, "%", "location", "function", cols.callee}
	}
	for _, r := range t.Rows {
		amount, amountPct := units.Value(r.Amount, t.AmountUnit), units.Percent(r.AmountShare)
		cnt, cntPct := units.Count(float64(r.Count)), units.Percent(r.CountShare)
		name := foldedName(r.Function, r.Folded, "site")
		if cols.byCount {
			tb.add(cnt, cntPct, amount, amountPct, location(r.File, r.Line), name, r.Callee)
		} else {
			tb.add(amount, amountPct, cnt, cntPct, location(r.File, r.Line), name, r.Callee)
		}
	}
	if len(tb.rows) == 0 {
		return block{caption: caption, lines: []string{"no samples"}}
	}
	return block{caption: caption, table: tb}
}

func allocsSection(al *profiles.Allocs) section {
	s := section{title: "Allocations"}
	if al == nil {
		return s
	}
	line := fmt.Sprintf("%s objects, %s allocated over %s", units.Count(float64(al.Objects)), units.Bytes(float64(al.Bytes)), units.Seconds(al.Seconds))
	s.blocks = append(s.blocks, block{lines: []string{line}})
	where := "by the user line that allocates (directly or through what it calls)"
	if al.ByObjects != nil && al.ByObjects.Attribution == profiles.AttributeLeaf {
		where = "by the line that allocates (innermost frame)"
	}
	if al.ByObjects != nil {
		s.blocks = append(s.blocks, siteBlock("Top allocation sites by objects, "+where, al.ByObjects,
			siteColumns{amount: "bytes", count: "objects", callee: "via", byCount: true}))
	}
	if al.ByBytes != nil {
		s.blocks = append(s.blocks, siteBlock("Top allocation sites by bytes, "+where, al.ByBytes,
			siteColumns{amount: "bytes", count: "objects", callee: "via"}))
	}
	return s
}

func waitSection(title, what, callee string, t *profiles.SiteTable) section {
	s := section{title: title}
	if t == nil {
		return s
	}
	if t.TotalAmount == 0 && t.TotalCount == 0 {
		s.blocks = append(s.blocks, block{lines: []string{"nothing recorded in the window"}})
		return s
	}
	s.blocks = append(s.blocks, block{lines: []string{fmt.Sprintf("%s of delay over %s events",
		units.Value(t.TotalAmount, t.AmountUnit), units.Count(float64(t.TotalCount)))}})
	s.blocks = append(s.blocks, siteBlock("Top sites by delay: "+what, t,
		siteColumns{amount: "delay", count: "events", callee: callee}))
	return s
}

func goroutineSection(g *profiles.Goroutines) section {
	s := section{title: "Goroutines"}
	if g == nil {
		return s
	}
	s.blocks = append(s.blocks, block{lines: []string{fmt.Sprintf("%s at the start, %s at the end (%+d)",
		units.Thousands(g.Start), units.Thousands(g.End), g.End-g.Start)}})
	if len(g.Grew) == 0 {
		return s
	}
	tb := &table{
		header: []string{"growth", "start", "end", "location", "function", "waiting in"},
		right:  []bool{true, true, true, false, false, false},
		code:   []bool{false, false, false, true, true, true},
	}
	for _, sg := range g.Grew {
		tb.add(fmt.Sprintf("%+d", sg.Delta), units.Thousands(sg.Start), units.Thousands(sg.End), location(sg.File, sg.Line), sg.Function, sg.Wait)
	}
	caption := "Stacks that grew most"
	if g.Omitted > 0 {
		caption += fmt.Sprintf(" (%d more not shown)", g.Omitted)
	}
	s.blocks = append(s.blocks, block{caption: caption, table: tb})
	return s
}

func routeSection(routes []profiles.RouteShare) section {
	s := section{title: "CPU by route"}
	if len(routes) == 0 {
		return s
	}
	tb := &table{
		header: []string{"share", "cpu", "route", "user functions charged (share of the route)"},
		right:  []bool{true, true, false, false},
		code:   []bool{false, false, true, false},
	}
	for _, r := range routes {
		route := r.Route
		if route == "" {
			route = "(no route label)"
		}
		var top []string
		for _, f := range r.Top {
			top = append(top, fmt.Sprintf("%s %s", f.Function, units.Percent(f.Share)))
		}
		tb.add(units.Percent(r.Share), units.Value(r.Value, r.Unit), route, strings.Join(top, ", "))
	}
	s.blocks = append(s.blocks, block{caption: "CPU split by the http.route profiler label; each sample is charged to its innermost user function", table: tb})
	if note := UnlabelledRouteNote(routes); note != "" {
		s.blocks = append(s.blocks, block{lines: []string{note}})
	}
	return s
}

// UnlabelledRouteNote explains the "(no route label)" row of a CPU by
// route table, "" when routes have none; the dashboard shows it under its
// own table of routes.
func UnlabelledRouteNote(routes []profiles.RouteShare) string {
	for _, r := range routes {
		if r.Route == "" {
			return "(no route label): CPU not spent inside a request handler wrapped by perfscope's expose middleware " +
				"(expose.Middleware): the runtime's background work (garbage collection, the scheduler), " +
				"the HTTP server's own goroutines outside the handler (accepting connections, reading requests, " +
				"writing responses out after the handler returns), and handlers served without the middleware."
		}
	}
	return ""
}

func problemSection(a *profiles.Analysis) section {
	s := section{title: "Notes"}
	var items [][]string
	for _, n := range a.Notes {
		items = append(items, []string{n})
	}
	if a.Run.Error != "" {
		items = append(items, []string{"load failed: " + a.Run.Error})
	}
	for _, pe := range a.ProfileErrors {
		items = append(items, []string{pe.Kind + " profile: " + pe.Error})
	}
	for _, w := range a.Warnings {
		if !profileErrorRepeats(a, w) {
			items = append(items, []string{"warning: " + w})
		}
	}
	if len(items) > 0 {
		s.blocks = append(s.blocks, block{items: items})
	}
	return s
}

// profileErrorRepeats reports whether warning w only repeats a profile
// error already listed (a profile that could not be opened is both).
func profileErrorRepeats(a *profiles.Analysis, w string) bool {
	for _, pe := range a.ProfileErrors {
		if pe.Error == w {
			return true
		}
	}
	return false
}
