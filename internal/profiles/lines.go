package profiles

import (
	"cmp"
	"slices"

	"github.com/google/pprof/profile"
)

// A LineTable holds flat and cum values per source line of some functions,
// the data of `go tool pprof -list`.
type LineTable struct {
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	Total      int64  `json:"total"` // of the whole profile; shares are fractions of it
	// Rows are ordered by function, file and line, not by value: a
	// listing follows the source.
	Rows []Row `json:"rows"`
}

// Lines computes flat and cum per source line of every function whose name
// match accepts, for sampleType ("" for the default). A line's cum counts
// each sample once however often the line recurses on its stack. c may be
// nil.
func Lines(p *profile.Profile, sampleType string, match func(function string) bool, c *Classifier) (*LineTable, error) {
	vi, err := SampleIndex(p, sampleType)
	if err != nil {
		return nil, err
	}
	cs := NewClasses(c, p)
	t := &LineTable{SampleType: p.SampleType[vi].Type, Unit: unitOf(p, vi), Total: SampleTotal(p, vi)}
	type key struct {
		fn   string
		line int64
	}
	rows := map[key]*Row{}
	matched := map[*profile.Function]bool{}
	matches := func(fn *profile.Function) bool {
		if fn == nil {
			return false
		}
		m, ok := matched[fn]
		if !ok {
			m = match(fn.Name)
			matched[fn] = m
		}
		return m
	}
	seen := map[*Row]bool{}
	for _, s := range p.Sample {
		v := s.Value[vi]
		if v == 0 {
			continue
		}
		clear(seen)
		for i, f := range Frames(s) {
			if !matches(f.fn) {
				continue
			}
			k := key{f.fn.Name, f.line}
			r := rows[k]
			if r == nil {
				r = &Row{Function: f.fn.Name, File: f.fn.Filename, Line: f.line, Class: cs.Of(f.fn)}
				rows[k] = r
			}
			if i == 0 {
				r.Flat += v
			}
			if !seen[r] {
				seen[r] = true
				r.Cum += v
			}
		}
	}
	for _, r := range rows {
		r.FlatShare, r.CumShare = Share(r.Flat, t.Total), Share(r.Cum, t.Total)
		t.Rows = append(t.Rows, *r)
	}
	slices.SortFunc(t.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Function, b.Function), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return t, nil
}
