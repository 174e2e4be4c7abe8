package scrape

import (
	"context"
	"errors"
	"hash/maphash"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/expose"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/profseries"
)

// How the deltas of a cumulative profile type are made, as Health.Deltas
// says.
const (
	deltaTarget     = "target"
	deltaSubtracted = "subtracted"
)

// A collector is the state a target's scrapes carry from one to the
// next: how deltas are made, the snapshots the next delta subtracts, and
// the process they came from.
type collector struct {
	l     *loop
	types []string

	generation  int
	buildID     string
	deltas      map[string]string         // type → deltaTarget or deltaSubtracted; absent: not yet probed
	unsupported map[string]bool           // types the target does not serve
	last        map[string]fetch.Snapshot // the last cumulative snapshot of each subtracted type
	clock       *counterSet               // the counters of the last snapshot that shows a restart
	requests    *fetch.RequestCounts      // the request counts the next scrape's are subtracted from
	noRequests  bool                      // the target counts no requests (asked again after a restart)
}

func newCollector(l *loop) collector {
	return collector{l: l, types: l.target.Job.Profiles, deltas: map[string]string{},
		unsupported: map[string]bool{}, last: map[string]fetch.Snapshot{}}
}

// cumulative types are counted since the process started; their scrapes
// are deltas.
func cumulative(typ string) bool {
	return typ == profseries.Allocs || typ == profseries.Mutex || typ == profseries.Block
}

// result is one profile type's outcome of a scrape.
type result struct {
	typ        string
	p          *profile.Profile
	start, end time.Time
	err        error
	snap       *fetch.Snapshot // the cumulative snapshot taken, for subtraction
	counters   *counterSet     // a heap snapshot's cumulative counters, for the restart clock
	raw        int64
	requests   *profseries.Requests // served over the window, where counted

	// What the scrape learnt of the target, applied once every request
	// is back: the type is not served; how its deltas are made.
	unsupported bool
	deltas      string
}

// scrape collects every profile type once: first the snapshots (at
// once), then the profiles over window (CPU, deltas the target makes),
// side by side. It returns how many profiles it collected (queued for
// the sink, or dropped when the sink's queue is full) and why others were
// missed or dropped.
func (c *collector) scrape(ctx context.Context, start time.Time, window time.Duration) (int, []TypeError) {
	var snaps []string
	var windowed []string
	for _, t := range c.types {
		switch {
		case c.unsupported[t]:
		case t == profseries.CPU:
			windowed = append(windowed, t)
		case cumulative(t) && c.deltas[t] != deltaSubtracted:
			windowed = append(windowed, t)
		default:
			snaps = append(snaps, t)
		}
	}
	// The restart clock: a snapshot of cumulative counters, taken each
	// scrape. The heap snapshot carries them (alloc_*); else the allocs
	// profile, taken for the purpose when no other snapshot is.
	clockType := ""
	switch {
	case slices.Contains(snaps, profseries.Heap):
		clockType = profseries.Heap
	case slices.Contains(snaps, profseries.Allocs):
		clockType = profseries.Allocs
	case slices.ContainsFunc(c.types, cumulative):
		clockType = "clock"
		snaps = append(snaps, clockType)
	}

	results := c.run(ctx, snaps, func(ctx context.Context, typ string) result { return c.snapshot(ctx, typ) })
	c.learn(results)
	// A restart shows in the clock (counters back) or in any profile's
	// build id; the snapshots after it are baselines of the new process.
	restarted := false
	for _, r := range results {
		if r.typ == clockType && r.counters == nil && r.snap != nil {
			cs := countersOf(r.snap.Profile)
			r.counters = &cs
		}
		if r.typ == clockType && r.counters != nil {
			if c.clock != nil && c.clock.wentBack(*r.counters) {
				restarted = true
			}
			c.clock = r.counters
		}
		if r.p != nil && c.newBuild(r.p) {
			restarted = true
		}
	}
	if restarted {
		c.restarted()
	}
	var out []result
	for _, r := range results {
		switch {
		case r.typ == "clock":
			continue
		case r.err == nil && cumulative(r.typ):
			prev, ok := c.last[r.typ]
			c.last[r.typ] = *r.snap
			if !ok {
				continue // a baseline: the next scrape's delta starts here
			}
			d, err := fetch.DeltaBetween(prev, *r.snap)
			if err == nil {
				d = keepValues(d, deltaValues...)
			}
			if err == nil && hasNegative(d, cumulativeValues(d)) {
				// Counters went back in this type alone: a restart the
				// clock did not see. This snapshot is the new baseline.
				c.restarted()
				c.last[r.typ] = *r.snap
				continue
			}
			r.p, r.err, r.start = d, err, prev.At
		}
		out = append(out, r)
	}
	// The snapshots go to the sink now, not held through the window.
	got, errs := c.deliver(out)

	winResults := c.run(ctx, windowed, func(ctx context.Context, typ string) result { return c.overWindow(ctx, typ, window) })
	c.learn(winResults)
	out = out[:0]
	for _, r := range winResults {
		if r.p != nil && c.newBuild(r.p) {
			c.restarted() // a new binary answered: its profiles start a generation
		}
		if r.snap != nil {
			c.last[r.typ] = *r.snap // the baseline of a target that makes no deltas
			continue
		}
		out = append(out, r)
	}
	if i := slices.IndexFunc(out, func(r result) bool { return r.typ == profseries.CPU && r.err == nil }); i >= 0 {
		out[i].requests = c.countRequests(ctx, out[i].start, out[i].end)
	}
	n, more := c.deliver(out)
	c.publish()
	return got + n, append(errs, more...)
}

// deliver queues the profiles of out for the sink. It returns how many
// were collected (queued, or dropped when the sink's queue is full) and
// why others were missed or dropped.
func (c *collector) deliver(out []result) (int, []TypeError) {
	got := 0
	var errs []TypeError
	for _, r := range out {
		if r.err != nil {
			errs = append(errs, TypeError{Type: r.typ, Reason: oneLine(errors.New(fetch.Reason(r.err)))})
			continue
		}
		if r.p == nil {
			continue
		}
		// Collected: the target is up whether or not the store keeps up.
		got++
		err := c.l.s.writer.enqueue(c.l, &profseries.Scrape{
			Target:   c.l.target.Labels,
			Type:     r.typ,
			Start:    r.start,
			End:      r.end,
			Process:  profseries.Process{BuildID: c.buildID, Generation: c.generation},
			Profile:  r.p,
			RawBytes: r.raw,
			Requests: r.requests,
		})
		if err != nil {
			errs = append(errs, TypeError{Type: r.typ, Reason: err.Error()})
		}
	}
	return got, errs
}

// learn applies what requests found out about the target.
func (c *collector) learn(rs []result) {
	for _, r := range rs {
		if r.unsupported {
			c.unsupported[r.typ] = true
		}
		if r.deltas != "" {
			c.deltas[r.typ] = r.deltas
		}
	}
}

// deltaValues are the sample types a delta keeps: those counted since
// the process started. A delta of in-use values (heap's inuse_*) goes
// down as well as up; heap stores them as snapshots instead.
var deltaValues = []string{"alloc_", "contentions", "delay"}

// run runs fn for each type side by side and returns the results in the
// types' order.
func (c *collector) run(ctx context.Context, types []string, fn func(context.Context, string) result) []result {
	out := make([]result, len(types))
	var wg sync.WaitGroup
	for i, t := range types {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = fn(ctx, t)
		}()
	}
	wg.Wait()
	return out
}

// snapshot takes one snapshot: goroutine and goroutineleak as they are;
// heap as its in-use values; the cumulative types (and the restart
// clock) as they stand, for subtraction.
func (c *collector) snapshot(ctx context.Context, typ string) result {
	r := result{typ: typ}
	if err := acquire(ctx, c.l.s.quick); err != nil {
		r.err = err
		return r
	}
	defer func() { <-c.l.s.quick }()
	name := typ
	if typ == "clock" {
		name = profseries.Allocs
	}
	var n atomic.Int64
	s, err := c.l.ep.Snapshot(withByteCounter(ctx, &n), name)
	r.raw, r.start, r.end = n.Load(), s.At, s.At
	if err != nil {
		if typ == profseries.GoroutineLeak && notServed(err) {
			return result{typ: typ, unsupported: true}
		}
		r.err = err
		return r
	}
	switch {
	case typ == profseries.Heap:
		// The heap profile also carries the allocations since the
		// process started (alloc_*): the clock reads them; the allocs
		// type stores them as deltas. Heap stores what is in use now.
		cs := countersOf(s.Profile)
		r.counters = &cs
		r.p = keepValues(s.Profile, "inuse_")
	case typ == "clock" || cumulative(typ):
		r.snap = &s
	default:
		r.p = s.Profile
	}
	return r
}

// overWindow takes one profile over the window: the CPU profile, or a
// delta made by the target. A target that makes no deltas is asked for a
// snapshot instead, the baseline of subtracting from then on.
func (c *collector) overWindow(ctx context.Context, typ string, window time.Duration) result {
	r := result{typ: typ}
	if err := acquire(ctx, c.l.s.windowed); err != nil {
		r.err = err
		return r
	}
	var n atomic.Int64
	cctx := withByteCounter(ctx, &n)
	r.start = time.Now()
	var p *profile.Profile
	var err error
	if typ == profseries.CPU {
		p, err = c.l.ep.CPU(cctx, window)
	} else {
		p, err = c.l.ep.Delta(cctx, typ, window)
	}
	<-c.l.s.windowed
	r.end, r.raw = time.Now(), n.Load()
	switch {
	case err == nil && typ != profseries.CPU:
		r.deltas = deltaTarget
		p = keepValues(p, deltaValues...)
	case errors.Is(err, fetch.ErrNoDelta):
		// The snapshot is the baseline: nothing to store yet, nothing
		// wrong.
		s := c.snapshot(ctx, typ)
		s.deltas = deltaSubtracted
		return s
	}
	if err == nil && p.DurationNanos > 0 {
		r.start = r.end.Add(-time.Duration(p.DurationNanos))
	}
	r.p, r.err = p, err
	return r
}

// restarted starts a new generation: the snapshots kept belong to the old
// process, and what the target serves is asked again.
func (c *collector) restarted() {
	c.generation++
	clear(c.last)
	clear(c.deltas)
	clear(c.unsupported)
	c.requests, c.noRequests = nil, false
}

// countRequests reads the target's request counts, once a scrape, right
// after its CPU window [start, end], and returns the requests served since
// the last read: those of the window, or nil where they are not known —
// the first read (a baseline), a target that counts none, counts that
// went back (a restart the other clocks did not see; this read is the new
// baseline), or a last read too far from the window's start to stand for
// it (a scrape missed or failed between).
func (c *collector) countRequests(ctx context.Context, start, end time.Time) *profseries.Requests {
	if c.noRequests {
		return nil
	}
	if err := acquire(ctx, c.l.s.quick); err != nil {
		return nil
	}
	cur, err := c.l.ep.RequestCounts(ctx)
	<-c.l.s.quick
	if errors.Is(err, fetch.ErrNoRequestCounts) {
		c.noRequests = true
	}
	if err != nil {
		// Unknown this time; a failed read leaves the last one as it
		// is, too old to stand for the next window's start.
		return nil
	}
	prev := c.requests
	c.requests = &cur
	if prev == nil {
		return nil
	}
	// The counts span [prev.At, cur.At]; the window, [start, end]. Both
	// reads follow a window's end, so they agree but for the moments
	// answers take (Requests.Span says by how much); half a window more
	// and the last read is not of the window before.
	if d := prev.At.Sub(start); d > (end.Sub(start))/2 || d < -end.Sub(start)/2 {
		return nil
	}
	r := requestsBetween(prev.Counts, cur.Counts)
	if r != nil {
		r.Span = cur.At.Sub(prev.At)
	}
	return r
}

// requestsBetween is the requests counted from a to b, by route and
// method; nil when a count went back, as a restart makes them.
func requestsBetween(a, b expose.RequestCounts) *profseries.Requests {
	if b.Total < a.Total {
		return nil
	}
	before := make(map[[2]string]uint64, len(a.Routes))
	for _, r := range a.Routes {
		before[[2]string{r.Route, r.Method}] = r.Count
	}
	out := &profseries.Requests{Routes: []profseries.RouteRequests{}}
	for _, r := range b.Routes {
		k := [2]string{r.Route, r.Method}
		prev := before[k]
		if r.Count < prev {
			return nil
		}
		delete(before, k)
		if n := int64(r.Count - prev); n > 0 {
			out.Routes = append(out.Routes, profseries.RouteRequests{Route: r.Route, Method: r.Method, Count: n})
			out.Total += n
		}
	}
	for _, n := range before {
		if n > 0 {
			return nil // a route counted before is gone: another process
		}
	}
	return out
}

// newBuild records the build id of p's main binary and reports whether
// it changed.
func (c *collector) newBuild(p *profile.Profile) bool {
	if len(p.Mapping) == 0 || p.Mapping[0].BuildID == "" {
		return false
	}
	id := p.Mapping[0].BuildID
	changed := c.buildID != "" && c.buildID != id
	c.buildID = id
	return changed
}

// publish copies what the collector learnt into the target's health.
func (c *collector) publish() {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	l.h.Generation, l.h.BuildID = c.generation, c.buildID
	clear(l.h.Deltas)
	for k, v := range c.deltas {
		l.h.Deltas[k] = v
	}
	l.h.Unsupported = l.h.Unsupported[:0]
	for _, t := range c.types {
		if c.unsupported[t] {
			l.h.Unsupported = append(l.h.Unsupported, t)
		}
	}
}

// notServed reports whether the target does not have the profile: 404,
// as net/http/pprof answers for a profile its Go does not make.
func notServed(err error) bool {
	var fe *fetch.Error
	return errors.As(err, &fe) && fe.Status == http.StatusNotFound
}

// A counterSet is what the restart clock keeps of a snapshot between
// scrapes: each stack's cumulative values, keyed by a hash of the stack,
// and none of the profile's symbols (a parsed heap profile of a busy
// service is a few hundred KB; this, a tenth of it).
type counterSet struct {
	types  string             // the sample types counted, in order
	values map[uint64][]int64 // by stackHash
}

var stackSeed = maphash.MakeSeed()

// countersOf is the counterSet of a snapshot: the values of
// cumulativeValues, summed per stack as pprof's merge sums samples of one
// stack.
func countersOf(p *profile.Profile) counterSet {
	idx := cumulativeValues(p)
	var types strings.Builder
	for _, i := range idx {
		types.WriteString(p.SampleType[i].Type + "/" + p.SampleType[i].Unit + " ")
	}
	cs := counterSet{types: types.String(), values: make(map[uint64][]int64, len(p.Sample))}
	for _, s := range p.Sample {
		k := stackHash(s)
		v := cs.values[k]
		if v == nil {
			v = make([]int64, len(idx))
			cs.values[k] = v
		}
		for j, i := range idx {
			v[j] += s.Value[i]
		}
	}
	return cs
}

// stackHash tells stacks apart as pprof's merge does: by each location's
// place in its binary (its address less the mapping's start, and the
// binary's name), or by its lines where it has no address, and by the
// sample's labels.
func stackHash(s *profile.Sample) uint64 {
	var h maphash.Hash
	h.SetSeed(stackSeed)
	for _, loc := range s.Location {
		if m := loc.Mapping; m != nil && loc.Address != 0 {
			maphash.WriteComparable(&h, loc.Address-m.Start+m.Offset)
			h.WriteString(m.BuildID)
			h.WriteString(m.File)
		} else {
			for _, ln := range loc.Line {
				if ln.Function != nil {
					h.WriteString(ln.Function.Name)
				}
				maphash.WriteComparable(&h, ln.Line)
			}
		}
		h.WriteByte(0)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Label)) {
		h.WriteString(k)
		for _, v := range s.Label[k] {
			h.WriteString(v)
		}
		h.WriteByte(0)
	}
	for _, k := range slices.Sorted(maps.Keys(s.NumLabel)) {
		h.WriteString(k)
		for _, v := range s.NumLabel[k] {
			maphash.WriteComparable(&h, v)
		}
		h.WriteByte(0)
	}
	return h.Sum64()
}

// wentBack reports whether any counter of end is below start's: the
// process restarted between them (a counter of a running process only
// grows; a stack it had is never forgotten). Snapshots of other sample
// types are not one process's.
func (start counterSet) wentBack(end counterSet) bool {
	if start.types != end.types {
		return true
	}
	for k, sv := range start.values {
		ev := end.values[k]
		for i, v := range sv {
			if ev == nil && v > 0 || ev != nil && ev[i] < v {
				return true
			}
		}
	}
	return false
}

// cumulativeValues are the indexes of p's values counted since the
// process started: allocations, contentions and delays (not heap in-use
// values, which go down).
func cumulativeValues(p *profile.Profile) []int {
	var idx []int
	for i, st := range p.SampleType {
		if !strings.HasPrefix(st.Type, "inuse_") {
			idx = append(idx, i)
		}
	}
	return idx
}

func hasNegative(p *profile.Profile, idx []int) bool {
	for _, s := range p.Sample {
		for _, i := range idx {
			if s.Value[i] < 0 {
				return true
			}
		}
	}
	return false
}

// keepValues keeps in p only the sample types whose names start with
// one of prefixes, and drops the samples left with only zeros; it
// changes p, which the caller owns, and returns it. A profile with none
// of them is returned whole.
func keepValues(p *profile.Profile, prefixes ...string) *profile.Profile {
	var idx []int
	for i, st := range p.SampleType {
		for _, pre := range prefixes {
			if strings.HasPrefix(st.Type, pre) {
				idx = append(idx, i)
				break
			}
		}
	}
	if len(idx) == 0 {
		return p
	}
	types := make([]*profile.ValueType, len(idx))
	for k, i := range idx {
		types[k] = p.SampleType[i]
	}
	p.SampleType = types
	samples := p.Sample[:0]
	for _, s := range p.Sample {
		// idx grows, so each value moves left or stays.
		zero := true
		for k, i := range idx {
			s.Value[k] = s.Value[i]
			zero = zero && s.Value[k] == 0
		}
		if !zero {
			s.Value = s.Value[:len(idx)]
			samples = append(samples, s)
		}
	}
	clear(p.Sample[len(samples):])
	p.Sample = samples
	p.DefaultSampleType = p.SampleType[len(p.SampleType)-1].Type
	return p
}
