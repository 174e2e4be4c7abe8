package profiles

import (
	"cmp"
	"slices"

	"github.com/google/pprof/profile"
)

// A Row is one entry of a ranked table: a function, or one source line of
// a function, with its flat and cum values.
type Row struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	// Line is, in a function table, the line where the function starts;
	// in a line table, the line itself.
	Line      int64   `json:"line,omitempty"`
	Class     Class   `json:"class"`
	Flat      int64   `json:"flat"`
	FlatShare float64 `json:"flat_share"`
	Cum       int64   `json:"cum"`
	CumShare  float64 `json:"cum_share"`
	// Folded is set on a row that stands for all the functions of Class:
	// it is how many there are. Such a row's Function is "(runtime)",
	// "(stdlib)" or "(dependency)".
	Folded int `json:"folded,omitempty"`
}

// An Order says which value ranks a table.
type Order string

// Orders of function and line tables.
const (
	ByFlat Order = "flat"
	ByCum  Order = "cum"
)

// A FuncTable ranks the functions of one profile by one sample type.
type FuncTable struct {
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	// Total is the sum of the sample type over all samples; shares are
	// fractions of it.
	Total int64 `json:"total"`
	Order Order `json:"order"`
	// Focus is set when user code is ranked first and every other class
	// is folded into one row after it.
	Focus bool  `json:"focus"`
	Rows  []Row `json:"rows"`
	// Omitted counts the ranked rows left out by the row limit.
	Omitted int `json:"omitted,omitempty"`
	// Classes has one row per class of code present. Its flat is the sum
	// of its functions' flat values. Its cum counts a sample once if the
	// class runs below (leaf-ward of) the sample's innermost user frame,
	// or anywhere on a stack with no user code at all: the cost of the
	// runtime, the standard library or dependencies when user code calls
	// them or works without it. Frames above user code (runtime.main,
	// net/http.(*conn).serve) do not count, or every class would be 100%.
	Classes []Row `json:"classes"`
}

// Functions computes flat and cum values of every function of p for one
// sample type ("" for the profile's default), ranked by flat, unfolded.
// Use Top to rank, limit and fold. c may be nil: it is then learnt from p.
func Functions(p *profile.Profile, sampleType string, c *Classifier) (*FuncTable, error) {
	vi, err := SampleIndex(p, sampleType)
	if err != nil {
		return nil, err
	}
	cs := NewClasses(c, p)
	t := &FuncTable{
		SampleType: p.SampleType[vi].Type,
		Unit:       unitOf(p, vi),
		Total:      SampleTotal(p, vi),
		Order:      ByFlat,
	}
	rows := map[string]*Row{}
	classRows := map[Class]*Row{}
	members := map[Class]int{}
	row := func(f Frame) *Row {
		r := rows[f.Name()]
		if r == nil {
			cl := cs.Of(f.fn)
			r = &Row{Function: f.Name(), File: f.File(), Class: cl}
			if f.fn != nil {
				r.Line = f.fn.StartLine
			}
			rows[r.Function] = r
			members[cl]++
		}
		return r
	}
	classRow := func(cl Class) *Row {
		r := classRows[cl]
		if r == nil {
			r = &Row{Function: "(" + string(cl) + ")", Class: cl}
			classRows[cl] = r
		}
		return r
	}
	seen := map[*Row]bool{}
	seenClass := map[Class]bool{}
	for _, s := range p.Sample {
		v := s.Value[vi]
		if v == 0 {
			continue
		}
		fs := Frames(s)
		if len(fs) == 0 {
			continue
		}
		clear(seen)
		for _, f := range fs {
			r := row(f)
			if !seen[r] {
				// Counted once per stack, however deep the recursion.
				seen[r] = true
				r.Cum += v
			}
		}
		leaf := row(fs[0])
		leaf.Flat += v
		classRow(leaf.Class).Flat += v

		clear(seenClass)
		for _, f := range fs {
			cl := rows[f.Name()].Class
			if !seenClass[cl] {
				seenClass[cl] = true
				classRow(cl).Cum += v
			}
			if cl == User {
				break // frames above the innermost user frame are its callers
			}
		}
	}
	t.Rows = make([]Row, 0, len(rows))
	for _, r := range rows {
		r.FlatShare, r.CumShare = Share(r.Flat, t.Total), Share(r.Cum, t.Total)
		t.Rows = append(t.Rows, *r)
	}
	sortRows(t.Rows, ByFlat)
	for _, cl := range classOrder() {
		if r := classRows[cl]; r != nil {
			r.Folded = members[cl]
			r.FlatShare, r.CumShare = Share(r.Flat, t.Total), Share(r.Cum, t.Total)
			t.Classes = append(t.Classes, *r)
		}
	}
	return t, nil
}

// Top returns a copy of t ranked by order and limited to n rows (0: all);
// rows whose ranking value is 0 are left out. With focus, the rows are user functions only, followed by one folded row
// per other class of code present (those rows are not counted in n); when
// the profile has no user code at all, focus is dropped, as there would be
// nothing to focus on.
func (t *FuncTable) Top(order Order, n int, focus bool) *FuncTable {
	out := *t
	out.Order = order
	// A row with nothing by the chosen value is not "top" of anything.
	empty := func(r Row) bool { return r.Flat == 0 && order == ByFlat || r.Cum == 0 && order == ByCum }
	out.Rows, out.Omitted, out.Focus = top(t.Rows, t.Classes, func(r Row) Class { return r.Class }, empty,
		func(rows []Row) { sortRows(rows, order) }, n, focus)
	out.Classes = slices.Clone(t.Classes)
	return &out
}

// top ranks, limits and folds the rows of a table for its Top method:
// rows that empty accepts are left out, the rest sorted with sort and
// limited to n (0: all), with omitted counting those cut. With focus, the
// rows are user code only, followed by the rows of classes (one per other
// class of code present, not counted in n); when there is no user code at
// all focus is dropped, as there would be nothing to focus on.
func top[R any](rows, classes []R, class func(R) Class, empty func(R) bool, sort func([]R), n int, focus bool) (out []R, omitted int, focused bool) {
	out = slices.Clone(rows)
	if focus {
		out = slices.DeleteFunc(out, func(r R) bool { return class(r) != User })
		if len(out) == 0 {
			out = slices.Clone(rows)
			focus = false
		}
	}
	out = slices.DeleteFunc(out, empty)
	sort(out)
	out, omitted = limit(out, n)
	if focus {
		var folded []R
		for _, r := range classes {
			if class(r) != User {
				folded = append(folded, r)
			}
		}
		sort(folded)
		out = append(out, folded...)
	}
	return out, omitted, focus
}

// Find returns the row of the named function, if t has one.
func (t *FuncTable) Find(function string) (Row, bool) {
	for _, r := range t.Rows {
		if r.Function == function {
			return r, true
		}
	}
	return Row{}, false
}

// Class returns the totals row of a class of code, if present.
func (t *FuncTable) Class(cl Class) (Row, bool) {
	for _, r := range t.Classes {
		if r.Class == cl {
			return r, true
		}
	}
	return Row{}, false
}

func limit[T any](rows []T, n int) ([]T, int) {
	if n <= 0 || len(rows) <= n {
		return rows, 0
	}
	return rows[:n], len(rows) - n
}

// sortRows ranks by the chosen value (by magnitude, so diff profiles rank
// too), then by the other one, then by name so equal rows keep a stable order.
func sortRows(rows []Row, order Order) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		ka, kb, oa, ob := a.Flat, b.Flat, a.Cum, b.Cum
		if order == ByCum {
			ka, kb, oa, ob = oa, ob, ka, kb
		}
		if c := cmp.Compare(abs(kb), abs(ka)); c != 0 {
			return c
		}
		if c := cmp.Compare(abs(ob), abs(oa)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Function, b.Function); c != 0 {
			return c
		}
		return cmp.Compare(a.File, b.File)
	})
}
