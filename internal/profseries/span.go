package profseries

import (
	"cmp"
	"slices"
	"time"
)

// A Span is the time the stored scrapes of one series cover.
type Span struct {
	Labels      Labels
	First, Last time.Time
}

// NearestRange is the range as long as [from, to) that is nearest to it
// and holds data of spans: ending at the last scrape before from, or
// starting at the first one after to. ok is false when spans are empty.
func NearestRange(spans []Span, from, to time.Time) (nfrom, nto time.Time, ok bool) {
	width := to.Sub(from)
	best := time.Duration(-1)
	consider := func(f, t time.Time, dist time.Duration) {
		if best < 0 || dist < best {
			best, nfrom, nto, ok = dist, f, t, true
		}
	}
	for _, s := range spans {
		end := s.Last.Add(time.Second)
		switch {
		case s.Last.Before(from):
			// Everything is before the range: end just after the last.
			consider(end.Add(-width), end, from.Sub(s.Last))
		case !s.First.Before(to):
			consider(s.First, s.First.Add(width), s.First.Sub(to))
		default:
			// The span overlaps the range, which still holds none of
			// its scrapes (a gap): its latest scrapes surely hold data.
			d := to.Sub(s.Last)
			if d < 0 {
				d = -d
			}
			consider(end.Add(-width), end, d)
		}
	}
	return nfrom, nto, ok
}

// A Version is one value of a version label over the series that carry
// it, and the time they cover.
type Version struct {
	Value       string
	First, Last time.Time
}

// Versions groups spans by the value of the label named label, oldest
// first (by first scrape); spans without the label are left out.
func Versions(spans []Span, label string) []Version {
	byValue := map[string]*Version{}
	for _, s := range spans {
		v := s.Labels.Get(label)
		if v == "" {
			continue
		}
		cur, ok := byValue[v]
		if !ok {
			byValue[v] = &Version{Value: v, First: s.First, Last: s.Last}
			continue
		}
		if s.First.Before(cur.First) {
			cur.First = s.First
		}
		if s.Last.After(cur.Last) {
			cur.Last = s.Last
		}
	}
	out := make([]Version, 0, len(byValue))
	for _, v := range byValue {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b Version) int {
		if c := a.First.Compare(b.First); c != 0 {
			return c
		}
		return cmp.Compare(a.Value, b.Value)
	})
	return out
}

// Without returns s less its matchers on the label named name.
func (s Selector) Without(name string) Selector {
	var out Selector
	for _, m := range s {
		if m.Name != name {
			out = append(out, m)
		}
	}
	return out
}

// With returns s with the matcher name="value" in place of any other on
// that label.
func (s Selector) With(name, value string) Selector {
	return append(s.Without(name), Matcher{Name: name, Op: MatchEqual, Value: value})
}
