package profseries

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/pprof/profile"
)

// A Window is the samples of one scrape over its window, or of several
// scrapes merged, decoded.
type Window struct {
	// Start and End bound the window; equal for a snapshot.
	Start, End time.Time
	// Duration is the time the samples cover: End-Start for one scrape,
	// the sum of the scrapes' for a merge (as pprof's Merge adds
	// durations).
	Duration time.Duration
	Shape    Shape
	Samples  []Sample
	// Processes are the targets' processes the samples came from, by
	// target, then generation and build id: one for a scrape (none where the reader did
	// not say), more when a merge spans several targets, or a restart
	// or a deploy of one (see Restarted).
	Processes []TargetProcess
	// Requests are what the target served over a scrape's window, where
	// it counted them (see Scrape.Requests); nil when unknown, and for a
	// merge.
	Requests *Requests
}

// Process is the process of a window read from one scrape: the first of
// Processes, the zero Process where the reader recorded none.
func (w Window) Process() Process {
	if len(w.Processes) == 0 {
		return Process{}
	}
	return w.Processes[0].Process
}

// Merge adds the samples of blocks by stack, as pprof's profile.Merge adds
// profiles: the blocks must have compatible shapes; the result's window
// spans theirs, its period is the largest, its comments the union, and
// samples whose sums are all zero are dropped. Its samples are sorted by
// stack.
func Merge(blocks []Window) (Window, error) {
	var m Merger
	for _, b := range blocks {
		if err := m.Add(b); err != nil {
			return Window{}, err
		}
	}
	return m.Window()
}

// A Merger merges windows as Merge does, one at a time, and blocks as
// they are read, without decoding them into windows first: what a query
// over days of scrapes does, holding only the sums. The zero Merger is
// empty and ready to use.
type Merger struct {
	out     Window
	windows int
	seen    map[string]bool
	// rows maps a stack to its row of sums: dense for the small ids a
	// store gives, a map above.
	dense  []int32
	sparse map[uint64]int32
	stacks []uint64
	sizes  []uint64
	sums   []int64 // row-major, out.Shape.SampleTypes wide
	block  columns
}

// maxDenseStack bounds the stack ids a Merger indexes by a slice.
const maxDenseStack = 1 << 22

// Add adds the samples of w.
func (m *Merger) Add(w Window) error {
	if err := m.header(w); err != nil {
		return err
	}
	k := len(m.out.Shape.SampleTypes)
	for _, s := range w.Samples {
		if len(s.Values) != k {
			return fmt.Errorf("merge: a sample has %d values for %d sample types", len(s.Values), k)
		}
		r := m.row(s.Stack, s.Size) * k
		for i, v := range s.Values {
			m.sums[r+i] += v
		}
	}
	return nil
}

// AddBlock adds the samples of block, a block c encoded, whose window is
// w (without samples).
func (m *Merger) AddBlock(c *Codec, w Window, block []byte) error {
	if err := c.decode(block, &m.block, nil); err != nil {
		return err
	}
	return m.addColumns(w, &m.block)
}

// addColumns adds the samples of d, a decoded block whose window is w.
func (m *Merger) addColumns(w Window, d *columns) error {
	if err := m.header(w); err != nil {
		return err
	}
	k := len(m.out.Shape.SampleTypes)
	if d.columns != k {
		return fmt.Errorf("merge: a block has %d values for %d sample types", d.columns, k)
	}
	for i, id := range d.stacks[:d.n] {
		r := m.row(id, d.sizes[i]) * k
		for j := range k {
			m.sums[r+j] += d.values[j][i]
		}
	}
	return nil
}

// header merges w's window, shape and processes into the result's.
func (m *Merger) header(w Window) error {
	if m.windows == 0 {
		m.out = Window{Start: w.Start, End: w.End, Shape: w.Shape}
		m.out.Shape.Comments = nil
		m.seen = map[string]bool{}
	}
	if !m.out.Shape.Compatible(w.Shape) {
		return fmt.Errorf("merge: incompatible sample types %v and %v", m.out.Shape.SampleTypes, w.Shape.SampleTypes)
	}
	m.windows++
	o := &m.out
	if w.Start.Before(o.Start) {
		o.Start = w.Start
	}
	if w.End.After(o.End) {
		o.End = w.End
	}
	o.Duration += w.Duration
	o.Shape.Period = max(o.Shape.Period, w.Shape.Period)
	if o.Shape.DefaultSampleType == "" {
		o.Shape.DefaultSampleType = w.Shape.DefaultSampleType
	}
	if o.Shape.DocURL == "" {
		o.Shape.DocURL = w.Shape.DocURL
	}
	for _, c := range w.Shape.Comments {
		if !m.seen[c] {
			m.seen[c] = true
			o.Shape.Comments = append(o.Shape.Comments, c)
		}
	}
	for _, p := range w.Processes {
		if !slices.ContainsFunc(o.Processes, func(q TargetProcess) bool { return q.Process == p.Process && slices.Equal(q.Target, p.Target) }) {
			o.Processes = append(o.Processes, p)
		}
	}
	return nil
}

// row returns the row of sums of stack id, adding it (with size, the
// stack's first size met) on first sight.
func (m *Merger) row(id, size uint64) int {
	if id < maxDenseStack {
		if id >= uint64(len(m.dense)) {
			d := make([]int32, max(int(id)+1, min(2*len(m.dense), maxDenseStack)))
			copy(d, m.dense)
			m.dense = d
		}
		if r := m.dense[id]; r > 0 {
			return int(r - 1)
		}
	} else if r, ok := m.sparse[id]; ok {
		return int(r)
	}
	r := len(m.stacks)
	m.stacks = append(m.stacks, id)
	m.sizes = append(m.sizes, size)
	m.sums = append(m.sums, make([]int64, len(m.out.Shape.SampleTypes))...)
	if id < maxDenseStack {
		m.dense[id] = int32(r + 1)
	} else {
		if m.sparse == nil {
			m.sparse = map[uint64]int32{}
		}
		m.sparse[id] = int32(r)
	}
	return r
}

// Windows counts the windows and blocks added.
func (m *Merger) Windows() int { return m.windows }

// Window returns the merge of everything added: samples whose sums are
// all zero dropped, sorted by stack.
func (m *Merger) Window() (Window, error) {
	if m.windows == 0 {
		return Window{}, fmt.Errorf("merge: no scrapes")
	}
	out := m.out
	out.Shape.Comments = slices.Clone(out.Shape.Comments)
	out.Processes = slices.Clone(out.Processes)
	slices.SortFunc(out.Processes, func(a, b TargetProcess) int {
		return cmp.Or(cmp.Compare(a.Target.String(), b.Target.String()), cmp.Compare(a.Process.Generation, b.Process.Generation),
			cmp.Compare(a.Process.BuildID, b.Process.BuildID))
	})
	k := len(out.Shape.SampleTypes)
	out.Samples = make([]Sample, 0, len(m.stacks))
	for r, id := range m.stacks {
		vs := m.sums[r*k : (r+1)*k : (r+1)*k]
		if slices.ContainsFunc(vs, func(v int64) bool { return v != 0 }) {
			out.Samples = append(out.Samples, Sample{Stack: id, Values: slices.Clone(vs), Size: m.sizes[r]})
		}
	}
	slices.SortFunc(out.Samples, func(a, b Sample) int { return cmp.Compare(a.Stack, b.Stack) })
	return out, nil
}

// StackIDs returns the distinct stacks blocks refer to, ascending.
func StackIDs(blocks ...Window) []uint64 {
	seen := map[uint64]bool{}
	var ids []uint64
	for _, b := range blocks {
		for _, s := range b.Samples {
			if !seen[s.Stack] {
				seen[s.Stack] = true
				ids = append(ids, s.Stack)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// Symbols are stacks resolved to pprof's locations, functions and
// mappings: what turns blocks back into profiles.
type Symbols struct {
	stacks    map[uint64]stack
	locations map[uint64]*profile.Location
	functions map[uint64]*profile.Function
	mappings  map[uint64]*profile.Mapping
}

// Resolve reads the stacks ids name, and everything they refer to, from
// src. A missing item is an error: the store lost a symbol a block needs.
func Resolve(src SymbolSource, ids []uint64) (*Symbols, error) {
	sy := &Symbols{stacks: map[uint64]stack{}, locations: map[uint64]*profile.Location{},
		functions: map[uint64]*profile.Function{}, mappings: map[uint64]*profile.Mapping{}}
	if err := resolveStacks(src, ids, sy.stacks); err != nil {
		return nil, err
	}
	var locIDs []uint64
	for _, st := range sy.stacks {
		locIDs = append(locIDs, st.locations...)
	}
	locIDs = distinct(locIDs)
	contents, err := lookup(src, KindLocation, locIDs)
	if err != nil {
		return nil, err
	}
	locs := make(map[uint64]location, len(locIDs))
	var fnIDs, mapIDs []uint64
	for _, id := range locIDs {
		l, err := decodeLocation(contents[id])
		if err != nil {
			return nil, fmt.Errorf("location %d: %w", id, err)
		}
		locs[id] = l
		if l.mapping != 0 {
			mapIDs = append(mapIDs, l.mapping)
		}
		for _, ln := range l.lines {
			if ln.function != 0 {
				fnIDs = append(fnIDs, ln.function)
			}
		}
	}
	fnIDs, mapIDs = distinct(fnIDs), distinct(mapIDs)
	if contents, err = lookup(src, KindFunction, fnIDs); err != nil {
		return nil, err
	}
	for _, id := range fnIDs {
		if sy.functions[id], err = decodeFunction(id, contents[id]); err != nil {
			return nil, fmt.Errorf("function %d: %w", id, err)
		}
	}
	if contents, err = lookup(src, KindMapping, mapIDs); err != nil {
		return nil, err
	}
	for _, id := range mapIDs {
		if sy.mappings[id], err = decodeMapping(id, contents[id]); err != nil {
			return nil, fmt.Errorf("mapping %d: %w", id, err)
		}
	}
	for id, l := range locs {
		pl := &profile.Location{ID: id, Address: l.address, IsFolded: l.folded, Mapping: sy.mappings[l.mapping]}
		for _, ln := range l.lines {
			pl.Line = append(pl.Line, profile.Line{Function: sy.functions[ln.function], Line: ln.line, Column: ln.column})
		}
		sy.locations[id] = pl
	}
	return sy, nil
}

// A StackCache keeps stacks and callers resolved from their nodes (see
// stack), so a query does not follow the same callers again. It holds at
// most about limit locations; past that it starts again empty. A
// SymbolSource offers one by implementing Stacks. A cache is only valid
// while the ids it was filled from name the same items: a store that may
// give a collected item's id to another makes a new one.
type StackCache struct {
	mu      sync.Mutex
	limit   int
	size    int
	stacks  map[uint64]stack
	callers map[uint64][]uint64
}

// NewStackCache returns an empty cache of at most about limit locations.
func NewStackCache(limit int) *StackCache {
	return &StackCache{limit: limit, stacks: map[uint64]stack{}, callers: map[uint64][]uint64{}}
}

func (c *StackCache) stack(id uint64) (stack, bool) {
	if c == nil {
		return stack{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.stacks[id]
	return st, ok
}

func (c *StackCache) caller(id uint64) ([]uint64, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ls, ok := c.callers[id]
	return ls, ok
}

// room makes room for n more locations, emptying the cache if full.
func (c *StackCache) room(n int) {
	if c.size+n > c.limit {
		c.stacks, c.callers, c.size = map[uint64]stack{}, map[uint64][]uint64{}, 0
	}
	c.size += n + 1
}

func (c *StackCache) putStack(id uint64, st stack) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.stacks[id]; !ok {
		c.room(len(st.locations))
		c.stacks[id] = st
	}
}

func (c *StackCache) putCaller(id uint64, ls []uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.callers[id]; !ok {
		c.room(len(ls))
		c.callers[id] = ls
	}
}

// A CachingSource is a SymbolSource with a cache of resolved stacks.
type CachingSource interface {
	SymbolSource
	Stacks() *StackCache
}

// resolveStacks reads the stacks ids name into out, their locations
// whole and their labels: a node's locations are its leaf and its
// callers', its labels its label set's. Callers are read level by level
// (each level one lookup of those still unknown), at most maxStackDepth
// deep, so a stored tree that loops is an error.
func resolveStacks(src SymbolSource, ids []uint64, out map[uint64]stack) error {
	var cache *StackCache
	if cs, ok := src.(CachingSource); ok {
		cache = cs.Stacks()
	}
	var want []uint64
	for _, id := range ids {
		if st, ok := cache.stack(id); ok {
			out[id] = st
		} else {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	read := map[uint64]storedStack{}
	contents, err := lookup(src, KindStack, want)
	if err != nil {
		return err
	}
	sets := map[uint64]stack{}
	var setIDs, callerIDs []uint64
	whole := map[uint64][]uint64{} // callers' locations, where known
	for _, id := range want {
		st, err := decodeStack(contents[id])
		if err != nil {
			return fmt.Errorf("stack %d: %w", id, err)
		}
		read[id] = st
		if st.labelSet != 0 {
			setIDs = append(setIDs, st.labelSet)
		}
		if st.caller != 0 {
			callerIDs = append(callerIDs, st.caller)
		}
	}
	if setIDs = distinct(setIDs); len(setIDs) > 0 {
		if contents, err = lookup(src, KindStack, setIDs); err != nil {
			return err
		}
		for _, id := range setIDs {
			st, err := decodeStack(contents[id])
			if err != nil {
				return fmt.Errorf("stack %d: %w", id, err)
			}
			if st.node || len(st.locations) > 0 {
				return fmt.Errorf("stack %d is a stack's label set but not a label set", id)
			}
			sets[id] = st.stack
		}
	}
	callers := map[uint64][2]uint64{} // caller and leaf, as read
	todo := distinct(callerIDs)
	for level := 0; len(todo) > 0; level++ {
		if level > maxStackDepth {
			return fmt.Errorf("read callers: deeper than %d locations", maxStackDepth)
		}
		var ask []uint64
		for _, id := range todo {
			if ls, ok := cache.caller(id); ok {
				whole[id] = ls
			} else {
				ask = append(ask, id)
			}
		}
		if contents, err = lookup(src, KindCaller, ask); err != nil {
			return err
		}
		var next []uint64
		for _, id := range ask {
			caller, leaf, err := CallerRefs(contents[id])
			if err != nil {
				return fmt.Errorf("caller %d: %w", id, err)
			}
			callers[id] = [2]uint64{caller, leaf}
			if _, ok := callers[caller]; caller != 0 && !ok {
				if _, ok := whole[caller]; !ok {
					callers[caller] = [2]uint64{} // to read at the next level
					next = append(next, caller)
				}
			}
		}
		todo = next
	}
	// A caller's locations: its leaf, then its own caller's, made first
	// (the chain is walked up to a caller known, then down).
	callerLocations := func(id uint64) ([]uint64, error) {
		var chain, base []uint64
		for cur := id; cur != 0; cur = callers[cur][0] {
			if ls, ok := whole[cur]; ok {
				base = ls
				break
			}
			if chain = append(chain, cur); len(chain) > maxStackDepth {
				return nil, fmt.Errorf("caller %d: deeper than %d locations", id, maxStackDepth)
			}
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if len(base)+1 >= maxStackDepth {
				return nil, fmt.Errorf("caller %d: deeper than %d locations", id, maxStackDepth)
			}
			base = append(append(make([]uint64, 0, len(base)+1), callers[chain[i]][1]), base...)
			whole[chain[i]] = base
			cache.putCaller(chain[i], base)
		}
		return base, nil
	}
	for _, id := range want {
		n := read[id]
		st := n.stack
		if n.node {
			base, err := callerLocations(n.caller)
			if err != nil {
				return fmt.Errorf("stack %d: %w", id, err)
			}
			st.locations = append(append(make([]uint64, 0, len(base)+1), n.locations...), base...)
			if n.labelSet != 0 {
				set := sets[n.labelSet]
				st.labels, st.numLabels, st.numUnits = set.labels, set.numLabels, set.numUnits
			}
		}
		out[id] = st
		cache.putStack(id, st)
	}
	return nil
}

func lookup(src SymbolSource, k Kind, ids []uint64) (map[uint64][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	contents, err := src.Lookup(k, ids)
	if err != nil {
		return nil, fmt.Errorf("read %ss: %w", k, err)
	}
	for _, id := range ids {
		if _, ok := contents[id]; !ok {
			return nil, fmt.Errorf("read %ss: %s %d is missing", k, k, id)
		}
	}
	return contents, nil
}

func distinct(ids []uint64) []uint64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Profile builds the pprof profile of b. Every stack of b must be among
// those sy resolved. The profile has only the locations, functions and
// mappings its samples use, numbered by their ids in the store.
func (sy *Symbols) Profile(b Window) (*profile.Profile, error) {
	p := &profile.Profile{
		PeriodType:        &profile.ValueType{Type: b.Shape.PeriodType.Type, Unit: b.Shape.PeriodType.Unit},
		Period:            b.Shape.Period,
		DefaultSampleType: b.Shape.DefaultSampleType,
		DropFrames:        b.Shape.DropFrames,
		KeepFrames:        b.Shape.KeepFrames,
		DocURL:            b.Shape.DocURL,
		Comments:          slices.Clone(b.Shape.Comments),
		TimeNanos:         b.Start.UnixNano(),
		DurationNanos:     int64(b.Duration),
	}
	if b.Start.IsZero() {
		p.TimeNanos = 0
	}
	for _, st := range b.Shape.SampleTypes {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: st.Type, Unit: st.Unit})
	}
	used := map[uint64]bool{}
	p.Sample = make([]*profile.Sample, 0, len(b.Samples))
	for _, s := range b.Samples {
		st, ok := sy.stacks[s.Stack]
		if !ok {
			return nil, fmt.Errorf("build profile: stack %d was not resolved", s.Stack)
		}
		ps := &profile.Sample{Value: slices.Clone(s.Values), Label: st.labels, NumLabel: st.numLabels, NumUnit: st.numUnits,
			Location: make([]*profile.Location, len(st.locations))}
		for i, id := range st.locations {
			ps.Location[i] = sy.locations[id]
			used[id] = true
		}
		p.Sample = append(p.Sample, ps)
	}
	fns, maps := map[*profile.Function]bool{}, map[*profile.Mapping]bool{}
	for _, id := range distinct(mapsKeys(used)) {
		l := sy.locations[id]
		p.Location = append(p.Location, l)
		if l.Mapping != nil && !maps[l.Mapping] {
			maps[l.Mapping] = true
			p.Mapping = append(p.Mapping, l.Mapping)
		}
		for _, ln := range l.Line {
			if ln.Function != nil && !fns[ln.Function] {
				fns[ln.Function] = true
				p.Function = append(p.Function, ln.Function)
			}
		}
	}
	deriveMappingFlags(p)
	// pprof takes the first mapping for the main binary: the one interned
	// first, which is the first mapping of the first profile stored.
	slices.SortFunc(p.Mapping, func(a, b *profile.Mapping) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(p.Function, func(a, b *profile.Function) int { return cmp.Compare(a.ID, b.ID) })
	return p, nil
}

func mapsKeys(m map[uint64]bool) []uint64 {
	ks := make([]uint64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// deriveMappingFlags sets each mapping's Has* flags from the symbols its
// locations have, which is what the flags promise pprof: a mapping whose
// every location has functions is not symbolized again.
func deriveMappingFlags(p *profile.Profile) {
	type flags struct{ functions, filenames, lines bool }
	fs := map[*profile.Mapping]*flags{}
	for _, m := range p.Mapping {
		fs[m] = &flags{true, true, true}
	}
	for _, l := range p.Location {
		f := fs[l.Mapping]
		if f == nil {
			continue
		}
		if len(l.Line) == 0 {
			f.functions, f.filenames, f.lines = false, false, false
		}
		for _, ln := range l.Line {
			if ln.Function == nil {
				f.functions, f.filenames = false, false
			} else if ln.Function.Filename == "" {
				f.filenames = false
			}
			if ln.Line == 0 {
				f.lines = false
			}
		}
	}
	for m, f := range fs {
		m.HasFunctions, m.HasFilenames, m.HasLineNumbers = f.functions, f.filenames, f.lines
		m.HasInlineFrames = f.functions && f.lines
	}
}
