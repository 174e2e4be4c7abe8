package profiles

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/google/pprof/profile"
)

// A Site is a source line that samples are charged to, with two values of
// the profile: a count and an amount (allocated objects and bytes, or
// contentions and delay).
type Site struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Line     int64  `json:"line,omitempty"`
	Class    Class  `json:"class"`
	// Callee is the function called at this line, toward the leaf, that
	// carries most of the site's amount: runtime.concatstrings for a
	// string concatenation, fmt.Sprintf, sync.(*Mutex).Lock,
	// runtime.chanrecv1. Empty when the line itself is the leaf.
	Callee      string  `json:"callee,omitempty"`
	Count       int64   `json:"count"`
	CountShare  float64 `json:"count_share"`
	Amount      int64   `json:"amount"`
	AmountShare float64 `json:"amount_share"`
	// Folded is set on a row that stands for every site of Class: it is
	// how many there are.
	Folded int `json:"folded,omitempty"`
}

// A SiteOrder says which value ranks a site table.
type SiteOrder string

// Orders of site tables.
const (
	ByCount  SiteOrder = "count"
	ByAmount SiteOrder = "amount"
)

// An Attribution says which frame of a stack a sample is charged to.
type Attribution string

// Attributions of samples to sites.
const (
	// AttributeUser charges a sample to the innermost user-code frame
	// (failing that, the innermost frame outside the runtime; failing
	// that, the leaf): an allocation inside runtime.concatstrings counts
	// at the user's line that concatenates. This answers "which line of
	// mine allocates".
	AttributeUser Attribution = "user"
	// AttributeLeaf charges a sample to its innermost frame, as
	// `go tool pprof -lines` does.
	AttributeLeaf Attribution = "leaf"
)

// A SiteTable ranks the source lines of one profile by a pair of its sample
// types.
type SiteTable struct {
	CountType   string      `json:"count_type"`  // alloc_objects, contentions
	AmountType  string      `json:"amount_type"` // alloc_space, delay
	AmountUnit  string      `json:"amount_unit"` // bytes, nanoseconds
	TotalCount  int64       `json:"total_count"`
	TotalAmount int64       `json:"total_amount"`
	Attribution Attribution `json:"attribution"`
	Order       SiteOrder   `json:"order"`
	// Focus is set when user sites are ranked first and the sites of every
	// other class are folded into one row each after them.
	Focus   bool   `json:"focus"`
	Rows    []Site `json:"rows"`
	Omitted int    `json:"omitted,omitempty"`
	// Classes sums the sites of each class of code present.
	Classes []Site `json:"classes"`
}

// Sites charges every sample of p to a source line, following attr, and
// sums countType and amountType per line; the table is ranked by amount
// and unfolded. Use Top to rank, limit and fold. c may be nil.
func Sites(p *profile.Profile, countType, amountType string, attr Attribution, c *Classifier) (*SiteTable, error) {
	ci, err := SampleIndex(p, countType)
	if err != nil {
		return nil, err
	}
	ai, err := SampleIndex(p, amountType)
	if err != nil {
		return nil, err
	}
	cs := NewClasses(c, p)
	t := &SiteTable{
		CountType:   p.SampleType[ci].Type,
		AmountType:  p.SampleType[ai].Type,
		AmountUnit:  unitOf(p, ai),
		TotalCount:  SampleTotal(p, ci),
		TotalAmount: SampleTotal(p, ai),
		Attribution: attr,
		Order:       ByAmount,
	}
	type key struct {
		fn, file string
		line     int64
	}
	type acc struct {
		Site
		callees map[string]int64
	}
	sites := map[key]*acc{}
	classSites := map[Class]*Site{}
	members := map[Class]int{}
	for _, s := range p.Sample {
		cv, av := s.Value[ci], s.Value[ai]
		if cv == 0 && av == 0 {
			continue
		}
		fs := Frames(s)
		if len(fs) == 0 {
			continue
		}
		at := 0
		if attr != AttributeLeaf {
			at = attribute(fs, cs)
		}
		f := fs[at]
		k := key{f.Name(), f.File(), f.line}
		a := sites[k]
		if a == nil {
			cl := cs.Of(f.fn)
			a = &acc{Site: Site{Function: k.fn, File: k.file, Line: k.line, Class: cl}, callees: map[string]int64{}}
			sites[k] = a
			members[cl]++
		}
		a.Count += cv
		a.Amount += av
		if callee := calleeOf(fs, at); callee != "" {
			// Weigh callees by amount, by count when amounts are absent.
			a.callees[callee] += abs(av) + abs(cv)*boolInt(av == 0)
		}
		cr := classSites[a.Class]
		if cr == nil {
			cr = &Site{Function: "(" + string(a.Class) + ")", Class: a.Class}
			classSites[a.Class] = cr
		}
		cr.Count += cv
		cr.Amount += av
	}
	t.Rows = make([]Site, 0, len(sites))
	for _, a := range sites {
		a.Callee = Heaviest(a.callees)
		a.CountShare, a.AmountShare = Share(a.Count, t.TotalCount), Share(a.Amount, t.TotalAmount)
		t.Rows = append(t.Rows, a.Site)
	}
	sortSites(t.Rows, ByAmount)
	for _, cl := range classOrder() {
		if r := classSites[cl]; r != nil {
			r.Folded = members[cl]
			r.CountShare, r.AmountShare = Share(r.Count, t.TotalCount), Share(r.Amount, t.TotalAmount)
			t.Classes = append(t.Classes, *r)
		}
	}
	return t, nil
}

// Top returns a copy of t ranked by order and limited to n rows (0: all);
// rows whose ranking value is 0 are left out. With focus, the rows are user sites only, followed by one folded row per
// other class present (not counted in n); a table without user sites is
// returned unfocused.
func (t *SiteTable) Top(order SiteOrder, n int, focus bool) *SiteTable {
	out := *t
	out.Order = order
	empty := func(r Site) bool { return r.Count == 0 && order == ByCount || r.Amount == 0 && order == ByAmount }
	out.Rows, out.Omitted, out.Focus = top(t.Rows, t.Classes, func(r Site) Class { return r.Class }, empty,
		func(rows []Site) { sortSites(rows, order) }, n, focus)
	out.Classes = slices.Clone(t.Classes)
	return &out
}

// Find returns the first row of the named function, if t has one.
func (t *SiteTable) Find(function string) (Site, bool) {
	for _, r := range t.Rows {
		if r.Function == function {
			return r, true
		}
	}
	return Site{}, false
}

// Where is the site's location as "file:line", the way compilers and
// editors write it.
func (s Site) Where() string {
	if s.File == "" {
		return ""
	}
	if s.Line == 0 {
		return s.File
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// attribute picks the frame a sample is charged to: the user's line
// (UserFrame); else the innermost frame outside the runtime and the
// kernel's entry (a standard library or dependency caller, such as
// net/http reading a request); else the leaf.
func attribute(fs []Frame, cs *Classes) int {
	if i := UserFrame(fs, -1, cs.Frame); i >= 0 {
		return i
	}
	for i, f := range fs {
		if cl := cs.Of(f.fn); cl != Runtime && cl != Syscall {
			return i
		}
	}
	return 0
}

// calleeOf names the call made from frame at toward the leaf, "" when at
// is the leaf. runtime.asyncPreempt is not a call the code made: the
// runtime injects it into a running loop to preempt it, so it is skipped.
func calleeOf(fs []Frame, at int) string {
	for i := at - 1; i >= 0; i-- {
		if n := fs[i].Name(); n != "runtime.asyncPreempt" {
			return n
		}
	}
	return ""
}

// Heaviest is the key with the largest value, ties broken by name: how
// the call a line makes is chosen among the calls its samples make there.
func Heaviest(m map[string]int64) string {
	best, bv := "", int64(-1)
	for k, v := range m {
		if v > bv || (v == bv && k < best) {
			best, bv = k, v
		}
	}
	return best
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func sortSites(rows []Site, order SiteOrder) {
	slices.SortStableFunc(rows, func(a, b Site) int {
		ka, kb, oa, ob := a.Amount, b.Amount, a.Count, b.Count
		if order == ByCount {
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
		return cmp.Compare(a.Line, b.Line)
	})
}
