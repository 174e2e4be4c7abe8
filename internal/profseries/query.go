package profseries

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
)

// A Query names what to read: one profile type of the series Selector
// chooses, over the scrapes that start in [From, To).
type Query struct {
	Type       string
	Selector   Selector
	From, To   time.Time
	SampleType string // for tables and series: "" is the profile's default
}

// Check reports a query that cannot be answered, in one line.
func (q Query) Check() error {
	if !slices.Contains(Types, q.Type) {
		return fmt.Errorf("unknown profile type %q (want one of %v)", q.Type, Types)
	}
	if !q.To.After(q.From) {
		return fmt.Errorf("empty time range: from %s to %s", q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	return nil
}

// MergedProfile merges windows (see Merge) into one pprof profile, its
// symbols read from src.
func MergedProfile(windows []Window, src SymbolSource) (*profile.Profile, error) {
	w, err := Merge(windows)
	if err != nil {
		return nil, err
	}
	return BuildProfile(w, src)
}

// BuildProfile is the pprof profile of the merged window w, its symbols
// read from src. Where w spans a restart or a deploy of a target, a
// comment of the profile says so (go tool pprof -comments shows it).
func BuildProfile(w Window, src SymbolSource) (*profile.Profile, error) {
	sy, err := Resolve(src, StackIDs(w))
	if err != nil {
		return nil, err
	}
	p, err := sy.Profile(w)
	if err != nil {
		return nil, err
	}
	for _, ps := range Restarted(w.Processes) {
		p.Comments = append(p.Comments, ProcessNote(ps))
	}
	return p, nil
}

// ProcessNote is the one line that says a merged range holds several
// processes of one target, ps (as Restarted returns them).
func ProcessNote(ps []TargetProcess) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d processes merged (a restart or a deploy in the range):", ps[0].Target, len(ps))
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " generation %d", p.Process.Generation)
		if p.Process.BuildID != "" {
			fmt.Fprintf(&b, " (build id %s)", p.Process.BuildID)
		}
	}
	return b.String()
}

// Top ranks the functions of the merged window w by flat or cum value of
// one sample type, n rows at most (0: all), with the profiles package's
// function table: the numbers agree with every other table perfscope shows.
func Top(w Window, src SymbolSource, sampleType string, order profiles.Order, n int) (*profiles.FuncTable, error) {
	p, err := BuildProfile(w, src)
	if err != nil {
		return nil, err
	}
	t, err := profiles.Functions(p, sampleType, nil)
	if err != nil {
		return nil, err
	}
	return t.Top(order, n, false), nil
}

// A FunctionPoint is one function's share of one time step.
type FunctionPoint struct {
	// Start is the step's start; the step covers [Start, Start+step).
	Start time.Time `json:"start"`
	// Flat and Cum are the function's own and inclusive values in the
	// step; FlatShare and CumShare their fractions of Total, the step's
	// total of the sample type.
	Flat      int64   `json:"flat"`
	Cum       int64   `json:"cum"`
	Total     int64   `json:"total"`
	FlatShare float64 `json:"flat_share"`
	CumShare  float64 `json:"cum_share"`
	// Scrapes counts the scrapes the step merges; a step without any is
	// left out of the series rather than shown as a zero share.
	Scrapes int `json:"scrapes"`
}

// FunctionSeries is the share of one function (by its name as pprof shows
// it) of one sample type in every step of the windows, each step's
// windows merged: steps are aligned to multiples of step since the Unix
// epoch. A step where the function does not appear has shares of 0.
//
// Each stack is placed once (does it end in the function, does it hold
// it), from a profile of one sample per stack read the way
// profiles.Functions reads every profile; each step then only adds up its
// samples' values by stack, so a day of steps costs a pass over its
// samples, not a profile built and ranked per step.
func FunctionSeries(windows []Window, src SymbolSource, function, sampleType string, step time.Duration) ([]FunctionPoint, error) {
	if step <= 0 {
		return nil, fmt.Errorf("function series: step %v must be positive", step)
	}
	if len(windows) == 0 {
		return []FunctionPoint{}, nil
	}
	ids := StackIDs(windows...)
	sy, err := Resolve(src, ids)
	if err != nil {
		return nil, err
	}
	shape := windows[0].Shape
	col, err := shape.sampleIndex(sampleType)
	if err != nil {
		return nil, err
	}
	pl, err := place(sy, ids)
	if err != nil {
		return nil, err
	}
	fn := pl.index(function)
	flat, cum := map[uint64]bool{}, map[uint64]bool{}
	for id, fs := range pl.holds {
		cum[id] = slices.Contains(fs, fn)
		flat[id] = len(fs) > 0 && fs[0] == fn
	}
	byStep := map[int64][]Window{}
	for _, w := range windows {
		if !w.Shape.Compatible(shape) {
			return nil, fmt.Errorf("function series: scrapes of different sample types in one range (%v and %v)", shape.SampleTypes, w.Shape.SampleTypes)
		}
		k := w.Start.UnixNano() / int64(step)
		byStep[k] = append(byStep[k], w)
	}
	keys := make([]int64, 0, len(byStep))
	for k := range byStep {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	points := make([]FunctionPoint, 0, len(keys))
	found := false
	sums := map[uint64]int64{}
	for _, k := range keys {
		// Merged by stack, as Merge does, before the total takes each
		// stack's magnitude.
		clear(sums)
		for _, w := range byStep[k] {
			for _, s := range w.Samples {
				sums[s.Stack] += s.Values[col]
			}
		}
		pt := FunctionPoint{Start: time.Unix(0, k*int64(step)).UTC(), Scrapes: len(byStep[k])}
		for id, v := range sums {
			pt.Total += max(v, -v)
			if cum[id] && v != 0 {
				found = true
				pt.Cum += v
				if flat[id] {
					pt.Flat += v
				}
			}
		}
		pt.FlatShare, pt.CumShare = profiles.Share(pt.Flat, pt.Total), profiles.Share(pt.Cum, pt.Total)
		points = append(points, pt)
	}
	if !found {
		// Shares of 0 would read as "never ran": say the name matched
		// nothing instead.
		return nil, fmt.Errorf("%w: %q appears in none of the scrapes of the range; give the full name as top shows it (package path and all)", ErrNoFunction, function)
	}
	return points, nil
}

// ErrNoFunction means a function series was asked of a name that no
// scrape of the range holds.
var ErrNoFunction = errors.New("no such function")

// A ShareDiff is one function's change between two time ranges, in shares
// of each range's total: ranges of different lengths, or of different
// load, compare.
type ShareDiff struct {
	Function string `json:"function"`
	// BaseFlat, HeadFlat, BaseCum and HeadCum are the function's shares
	// in each range.
	BaseFlat float64 `json:"base_flat_share"`
	HeadFlat float64 `json:"head_flat_share"`
	BaseCum  float64 `json:"base_cum_share"`
	HeadCum  float64 `json:"head_cum_share"`
	// Flat and Cum are head minus base, in shares (0.05 is 5 points).
	Flat float64 `json:"flat_delta"`
	Cum  float64 `json:"cum_delta"`
}

// A RangeDiff is how the profile of one range differs from another's,
// normalized.
type RangeDiff struct {
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	// BaseTotal and HeadTotal are each range's total, for saying how much
	// the load itself changed; the shares are fractions of them.
	BaseTotal int64 `json:"base_total"`
	HeadTotal int64 `json:"head_total"`
	// Functions lists every function of either range, largest change of
	// flat share first (ties by cum, then name).
	Functions []ShareDiff `json:"functions"`
}

// Diff compares the merged windows base and head function by function, in
// shares of each side's total.
func Diff(base, head Window, src SymbolSource, sampleType string) (*RangeDiff, error) {
	tables := make([]*profiles.FuncTable, 2)
	for i, w := range []Window{base, head} {
		p, err := BuildProfile(w, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", [...]string{"base", "head"}[i], err)
		}
		if tables[i], err = profiles.Functions(p, sampleType, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", [...]string{"base", "head"}[i], err)
		}
		sampleType = tables[i].SampleType
	}
	d := &RangeDiff{SampleType: tables[1].SampleType, Unit: tables[1].Unit, BaseTotal: tables[0].Total, HeadTotal: tables[1].Total}
	byName := map[string]*ShareDiff{}
	get := func(name string) *ShareDiff {
		s, ok := byName[name]
		if !ok {
			s = &ShareDiff{Function: name}
			byName[name] = s
		}
		return s
	}
	for _, r := range tables[0].Rows {
		s := get(r.Function)
		s.BaseFlat, s.BaseCum = r.FlatShare, r.CumShare
	}
	for _, r := range tables[1].Rows {
		s := get(r.Function)
		s.HeadFlat, s.HeadCum = r.FlatShare, r.CumShare
	}
	for _, s := range byName {
		s.Flat, s.Cum = s.HeadFlat-s.BaseFlat, s.HeadCum-s.BaseCum
		d.Functions = append(d.Functions, *s)
	}
	slices.SortFunc(d.Functions, func(a, b ShareDiff) int {
		if c := cmp.Compare(math.Abs(b.Flat), math.Abs(a.Flat)); c != 0 {
			return c
		}
		if c := cmp.Compare(math.Abs(b.Cum), math.Abs(a.Cum)); c != 0 {
			return c
		}
		return cmp.Compare(a.Function, b.Function)
	})
	return d, nil
}
