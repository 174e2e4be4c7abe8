package findings

import (
	"cmp"
	"slices"
)

// A line is one user source line with its measured values, the unit most
// rules reason about.
type line struct {
	siteKey
	start int64
	// call is the costly call made at the line; matched the function
	// deeper down that made the samples count.
	call, matched string
	values        map[Resource]int64
}

// lines merges per-resource sites into lines. The call and matched names
// come from the first resource that has them.
func lines(byResource map[Resource]sites, order ...Resource) map[siteKey]*line {
	out := map[siteKey]*line{}
	for _, r := range order {
		for k, s := range byResource[r] {
			l := out[k]
			if l == nil {
				l = &line{siteKey: k, start: s.start, values: map[Resource]int64{}}
				out[k] = l
			}
			l.values[r] += s.value
			if l.call == "" {
				l.call = s.call()
			}
			if l.matched == "" {
				l.matched = s.matches()
			}
		}
	}
	return out
}

// A group is the lines of one function that a rule found, with their
// shares summed per resource.
type group struct {
	fn     string
	lines  []*line
	shares map[Resource]float64
	values map[Resource]int64
}

// top is the group's largest share and its resource, among order.
func (g *group) top(order []Resource) (float64, Resource) {
	best, res := -1.0, order[0]
	for _, r := range order {
		if s := g.shares[r]; s > best {
			best, res = s, r
		}
	}
	return best, res
}

// groups gathers lines by function, sums their shares and keeps the
// groups fires accepts, heaviest first by their top share among order.
// Lines within a group are ordered by the same measure.
func (e *env) groups(ls map[siteKey]*line, order []Resource, fires func(shares map[Resource]float64) bool) []*group {
	byFn := map[string]*group{}
	for _, l := range ls {
		g := byFn[l.fn]
		if g == nil {
			g = &group{fn: l.fn, shares: map[Resource]float64{}, values: map[Resource]int64{}}
			byFn[l.fn] = g
		}
		g.lines = append(g.lines, l)
		for r, v := range l.values {
			g.values[r] += v
		}
	}
	var out []*group
	for _, g := range byFn {
		for r, v := range g.values {
			g.shares[r] = e.share(r, v)
		}
		if !fires(e.firing(g)) {
			continue
		}
		slices.SortFunc(g.lines, func(a, b *line) int {
			if c := cmp.Compare(e.lineWeight(b, order), e.lineWeight(a, order)); c != 0 {
				return c
			}
			return cmp.Compare(a.line, b.line)
		})
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *group) int {
		sa, _ := a.top(order)
		sb, _ := b.top(order)
		return cmp.Or(cmp.Compare(sb, sa), cmp.Compare(a.fn, b.fn))
	})
	return out
}

// firing is the group's shares of the resources it holds enough samples
// of to say anything (see enoughCPU and enoughAllocs): a share resting on a
// sample or two is chance, however large. Now that the profiler's own work
// is left out, a program that hardly allocates has an allocation profile
// of a few samples, each a large share of it.
func (e *env) firing(g *group) map[Resource]float64 {
	fire := map[Resource]float64{}
	for r, v := range g.values {
		switch r {
		case CPU:
			if !e.enoughCPU(v) {
				continue
			}
		case AllocObjects, AllocBytes:
			// Only bytes say how many samples were taken: the runtime
			// samples one allocation per sampling period of bytes.
			if b, ok := g.values[AllocBytes]; ok && !e.enoughAllocs(b) {
				continue
			}
		}
		fire[r] = g.shares[r]
	}
	return fire
}

// lineWeight is a line's largest share among order.
func (e *env) lineWeight(l *line, order []Resource) float64 {
	w := 0.0
	for _, r := range order {
		w = max(w, e.share(r, l.values[r]))
	}
	return w
}

// evidence describes a line with its measures in order, leaving out the
// resources it has no value for.
func (e *env) evidence(l *line, order []Resource) Evidence {
	ev := Evidence{Function: l.fn, File: l.file, Line: l.line, Call: l.call, start: l.start}
	for _, r := range order {
		if v := l.values[r]; v != 0 {
			ev.Measures = append(ev.Measures, e.measure(r, v))
		}
	}
	return ev
}

// shareText lists the group's shares in order as "12.3% of CPU, 40.0% of
// allocated objects", leaving out zeros.
func shareText(g *group, order []Resource) Text {
	var parts []Text
	for _, r := range order {
		if s := g.shares[r]; s > 0 {
			parts = append(parts, sentence("{} of "+r.Noun(), share(s)))
		}
	}
	switch len(parts) {
	case 0:
		return sentence("a small share")
	case 1:
		return parts[0]
	}
	return sentence("{} and {}", join(parts[:len(parts)-1], ", "), parts[len(parts)-1])
}

// atLeast returns a firing test: any listed resource's share reaches its
// threshold.
func atLeast(thresholds map[Resource]float64) func(map[Resource]float64) bool {
	return func(shares map[Resource]float64) bool {
		for r, t := range thresholds {
			if shares[r] >= t {
				return true
			}
		}
		return false
	}
}

// sortEvidence orders evidence by its share of r, largest first.
func sortEvidence(evs []Evidence, r Resource) {
	shareOf := func(ev Evidence) float64 {
		for _, m := range ev.Measures {
			if m.Resource == r {
				return m.Share
			}
		}
		return 0
	}
	slices.SortStableFunc(evs, func(a, b Evidence) int { return cmp.Compare(shareOf(b), shareOf(a)) })
}
