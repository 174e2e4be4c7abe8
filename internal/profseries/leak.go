package profseries

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/perfscope/perfscope/internal/profiles"
)

// LeakOptions set how sure a leak must be before it is named. Zero values
// mean the defaults.
type LeakOptions struct {
	// Alpha is the family-wise chance of naming a stack that does not
	// grow: each stack's one-sided Mann–Kendall p-value must be below
	// Alpha divided by the number of stacks tested (Bonferroni); default
	// 0.01.
	Alpha float64
	// MinPoints is the fewest snapshots of one process a trend is judged
	// on; default 12.
	MinPoints int
	// MinSpan is the shortest time those snapshots must span; default one
	// minute.
	MinSpan time.Duration
	// MinGoroutines is the least growth, over the span, of goroutines
	// named a leak; default 10. MinBytes is the same for heap in use;
	// default 1 MiB (the heap profile samples about one allocation per
	// 512 KiB).
	MinGoroutines float64
	MinBytes      float64
}

func (o LeakOptions) withDefaults() LeakOptions {
	if o.Alpha <= 0 {
		o.Alpha = 0.01
	}
	if o.MinPoints <= 0 {
		o.MinPoints = 12
	}
	if o.MinSpan <= 0 {
		o.MinSpan = time.Minute
	}
	if o.MinGoroutines <= 0 {
		o.MinGoroutines = 10
	}
	if o.MinBytes <= 0 {
		o.MinBytes = 1 << 20
	}
	return o
}

// LeakTypes are the profile types leaks are looked for in, and the sample
// type each is judged on: goroutines by count, the heap by bytes in use,
// and the Go runtime's own goroutineleak profile (goroutines the garbage
// collector proved can never run again) by count.
var LeakTypes = []struct{ Type, SampleType string }{
	{Goroutine, profiles.SampleGoroutine},
	{GoroutineLeak, profiles.SampleGoroutine},
	{Heap, profiles.SampleInuseSpace},
}

// A Leak is one stack of one target whose level kept rising over the
// snapshots of one process.
type Leak struct {
	Target Labels `json:"target"`
	// Type is the profile type (goroutine, heap, goroutineleak) and
	// SampleType/Unit the value judged (goroutine count, inuse_space).
	Type       string `json:"type"`
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	// Process is the process the snapshots came from; From and To the
	// first and last snapshot judged.
	Process   Process   `json:"process"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Snapshots int       `json:"snapshots"`
	// PerHour is the growth rate (Theil–Sen slope) in Unit per hour;
	// Growth the fitted growth from From to To; Start and End the levels
	// seen in the first and last snapshot.
	PerHour float64 `json:"per_hour"`
	Growth  float64 `json:"growth"`
	Start   int64   `json:"start"`
	End     int64   `json:"end"`
	Trend   Trend   `json:"trend"`
	// Levels are the values the trend was judged on, in time order: the
	// stack's level in each snapshot, or, over more snapshots than a
	// trend compares, the median of each span of time (see
	// maxTrendPoints).
	Levels []LeakLevel `json:"levels"`
	// StartedAt is where the goroutines were started — the outermost
	// frame of their stack that is not the runtime's, as "function
	// file:line" (the function's first line) — for goroutine types; for
	// the heap, the line that allocated (the innermost user frame).
	StartedAt string `json:"started_at"`
	// At is the innermost user frame: where the goroutines wait, or what
	// allocated; Wait the call they are parked in, for goroutines.
	At   string `json:"at"`
	Wait string `json:"wait,omitempty"`
	// Stack is the whole stack, innermost first, as "function file:line".
	Stack []string `json:"stack"`
	// For a heap stack with no frame of the program, StartedAt is the
	// function that allocated (the innermost frame but the allocator's).
	// RuntimeOnly says it has no frame outside the runtime either: the
	// runtime allocated for itself, on its own system stack, where the
	// stack ends.
	// NewGoroutines says it allocated starting goroutines
	// (runtime.newproc1): their structures and stacks, which grow with the
	// number of goroutines, not with any one line of the program.
	RuntimeOnly   bool `json:"runtime_only,omitempty"`
	NewGoroutines bool `json:"new_goroutines,omitempty"`
	// WaitRecords says a heap stack with no frame of the program
	// allocated the runtime's records of waiting goroutines (sudogs).
	// The runtime allocates them a batch at a time, on the stack of
	// whichever goroutine first needed one, and keeps one for each
	// goroutine parked on a channel, lock or condition: they grow with
	// the goroutines waiting anywhere, not with that stack's work.
	WaitRecords bool `json:"wait_records,omitempty"`
}

// A LeakLevel is one value of a leaking stack: its level at At.
type LeakLevel struct {
	At    time.Time `json:"at"`
	Value float64   `json:"value"`
}

// A LeakReport is what FindLeaks judged over one range.
type LeakReport struct {
	Selector string    `json:"selector"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Alpha    float64   `json:"alpha"`
	// MinGoroutines and MinBytes are the least growth named, MinPoints
	// and MinSpan the shortest process judged (see LeakOptions).
	MinGoroutines float64       `json:"min_goroutines"`
	MinBytes      float64       `json:"min_bytes"`
	MinPoints     int           `json:"min_snapshots"`
	MinSpan       time.Duration `json:"min_span_ns"`
	// Leaks are the stacks named, fastest growth first within each type.
	Leaks []Leak `json:"leaks"`
	// Judged lists each series judged and what was tested, so "no leak"
	// can be told from "not enough data to say".
	Judged []LeakSeries `json:"judged"`
}

// A LeakSeries is one target and type as FindLeaks judged it.
type LeakSeries struct {
	Target Labels `json:"target"`
	Type   string `json:"type"`
	// Snapshots is the number of snapshots read of the range (see
	// Every); Judged the snapshots of the processes long enough to
	// judge; Stacks the stacks tested.
	Snapshots int `json:"snapshots"`
	Judged    int `json:"judged"`
	Stacks    int `json:"stacks"`
	// Compacted counts the windows left out because retention merged
	// several snapshots into them (a sum, not a level); Short the
	// snapshots of processes too short to judge (see LeakOptions).
	Compacted int `json:"compacted,omitempty"`
	Short     int `json:"short,omitempty"`
	// Every is the spacing of the snapshots read over a long range: the
	// first of each process in each minute, ten minutes or hour (see
	// leakSpacing); 0 where every snapshot was read.
	Every time.Duration `json:"every_ns,omitempty"`
}

// A SeriesReader reads stored profile series: the store's ProfileSeries
// is one.
type SeriesReader interface {
	// SeriesSpans lists the series of type typ that sel chooses, each
	// with the first start and last end of its blocks.
	SeriesSpans(ctx context.Context, typ string, sel Selector) ([]Span, error)
	Windows(ctx context.Context, q Query) ([]Window, error)
	Symbols(ctx context.Context) SymbolSource
	// ProcessSpans lists, per series q chooses and process, the time
	// the series' blocks starting in [q.From, q.To) span, without
	// decoding them.
	ProcessSpans(ctx context.Context, q Query) ([]ProcessSpan, error)
	// Levels reads the snapshots q chooses as Windows does, each
	// reduced to its levels of sampleType (see LevelsOf); where every
	// is not 0, it may read only the first snapshot of each series and
	// process per every (a minute, ten minutes or an hour), and returns
	// the spacing it read (0 for every snapshot). The snapshots are in
	// order of time in each series.
	Levels(ctx context.Context, q Query, sampleType string, every time.Duration) ([]Levels, time.Duration, error)
}

// leakSpacing is the spacing of the snapshots FindLeaks asks for over a
// range of span: every snapshot up to 40 minutes, then one a minute up to
// 4 hours, one per ten minutes up to 40 hours, one an hour beyond — at
// most about maxTrendPoints of them (240 at 10 s scrapes), which a trend
// would bin down to anyway.
func leakSpacing(span time.Duration) time.Duration {
	for _, every := range []time.Duration{10 * time.Second, time.Minute, 10 * time.Minute} {
		if span <= every*maxTrendPoints {
			if every == 10*time.Second {
				return 0
			}
			return every
		}
	}
	return time.Hour
}

// FindLeaks judges every goroutine, goroutineleak and heap series sel
// chooses over [from, to): see Leaks.
func FindLeaks(ctx context.Context, r SeriesReader, sel Selector, from, to time.Time, o LeakOptions) (*LeakReport, error) {
	o = o.withDefaults()
	rep := &LeakReport{Selector: sel.String(), From: from, To: to, Alpha: o.Alpha,
		MinGoroutines: o.MinGoroutines, MinBytes: o.MinBytes, MinPoints: o.MinPoints, MinSpan: o.MinSpan,
		Leaks: []Leak{}, Judged: []LeakSeries{}}
	// The types are read and judged at once.
	type typeLeaks struct {
		leaks  []Leak
		judged []LeakSeries
	}
	byType := make([]typeLeaks, len(LeakTypes))
	g, gctx := errgroup.WithContext(ctx)
	for i, lt := range LeakTypes {
		g.Go(func() (err error) {
			byType[i].leaks, byType[i].judged, err = findTypeLeaks(gctx, r, lt.Type, lt.SampleType, sel, from, to, o)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, t := range byType {
		rep.Leaks = append(rep.Leaks, t.leaks...)
		rep.Judged = append(rep.Judged, t.judged...)
	}
	if len(rep.Judged) == 0 {
		return nil, fmt.Errorf("%w for %s from %s to %s", ErrNoLeakData, sel, from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return rep, nil
}

// findTypeLeaks is FindLeaks for the series of one type: each judged on
// its snapshots over the range, read at the spacing of the range (see
// leakSpacing), every series of the type in one read.
func findTypeLeaks(ctx context.Context, r SeriesReader, typ, sampleType string, sel Selector, from, to time.Time, o LeakOptions) ([]Leak, []LeakSeries, error) {
	spans, err := r.SeriesSpans(ctx, typ, sel)
	if err != nil {
		return nil, nil, err
	}
	// Only the series with blocks starting in the range: one that ended
	// before it (the previous version of a deployed target) has nothing
	// to judge, nor to read again below.
	var targets []Labels
	for _, sp := range spans {
		if !sp.Last.Before(from) && sp.First.Before(to) {
			targets = append(targets, sp.Labels)
		}
	}
	if len(targets) == 0 {
		return nil, nil, nil
	}
	all, spacing, err := r.Levels(ctx, Query{Type: typ, Selector: sel, From: from, To: to}, sampleType, leakSpacing(to.Sub(from)))
	if err != nil {
		return nil, nil, err
	}
	// Grouped by series: each series' snapshots copied once.
	bySeries := map[string][]int{}
	var last Labels
	var k string
	for i, l := range all {
		// A series' snapshots mostly come together: its key is made
		// once for them.
		if t := l.Processes[0].Target; i == 0 || !slices.Equal(t, last) {
			last, k = t, t.String()
		}
		bySeries[k] = append(bySeries[k], i)
	}
	var leaks []Leak
	var judged []LeakSeries
	for _, t := range targets {
		at := bySeries[t.String()]
		snapshots, every := make([]Levels, len(at)), spacing
		for k, i := range at {
			snapshots[k] = all[i]
		}
		if every > 0 && tooFewSnapshots(snapshots, o.MinPoints) {
			// Spaced out, a process of this series would be too short
			// to judge (a new or restarted target): every snapshot of
			// the series is read instead.
			if snapshots, every, err = r.Levels(ctx, Query{Type: typ, Selector: Exact(t), From: from, To: to}, sampleType, 0); err != nil {
				return nil, nil, err
			}
			snapshots = slices.DeleteFunc(snapshots, func(l Levels) bool { return !slices.Equal(l.Processes[0].Target, t) })
		}
		if len(snapshots) == 0 {
			continue
		}
		ls, j, err := leaksOf(t, typ, sampleType, snapshots, r.Symbols(ctx), o)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", typ, t, err)
		}
		j.Every = every
		leaks = append(leaks, ls...)
		judged = append(judged, j)
	}
	return leaks, judged, nil
}

// tooFewSnapshots says snapshots is empty, or holds a process with fewer
// than minPoints snapshots.
func tooFewSnapshots(snapshots []Levels, minPoints int) bool {
	if len(snapshots) == 0 {
		return true
	}
	n := map[Process]int{}
	for _, l := range snapshots {
		n[l.Processes[0].Process]++
	}
	for _, c := range n {
		if c < minPoints {
			return true
		}
	}
	return false
}

// Leaks judges the snapshots of one target's series of type typ
// (goroutine, goroutineleak or heap), ordered by time. Each process is
// judged on its own, for a restart empties every level. A stack is named
// when, over one process's snapshots (at least o.MinPoints over at least
// o.MinSpan):
//
//   - its level rises by the Mann–Kendall test, one-sided, at o.Alpha
//     divided by the stacks tested;
//   - it still rises over the later half of the snapshots (Theil–Sen
//     slope above 0), so a level that stepped up once — connections
//     opened at the start of a load, a cache filled — is not named;
//   - the fitted growth is at least o.MinGoroutines or o.MinBytes.
//
// Windows compacted from several snapshots (retention) hold their sum,
// not a level: they are left out, and the LeakSeries says so.
func Leaks(target Labels, typ string, windows []Window, src SymbolSource, o LeakOptions) ([]Leak, LeakSeries, error) {
	sampleType, ok := LeakSampleType(typ)
	if !ok {
		return nil, LeakSeries{Target: target, Type: typ, Snapshots: len(windows)}, fmt.Errorf("leaks: profile type %q has no level to judge", typ)
	}
	snapshots := make([]Levels, len(windows))
	for i, w := range windows {
		snapshots[i] = LevelsOf(w, sampleType)
	}
	return leaksOf(target, typ, sampleType, snapshots, src, o)
}

// leaksOf is Leaks on the snapshots' levels of sampleType, the type's
// (see LeakSampleType).
func leaksOf(target Labels, typ, sampleType string, snapshots []Levels, src SymbolSource, o LeakOptions) ([]Leak, LeakSeries, error) {
	o = o.withDefaults()
	js := LeakSeries{Target: target, Type: typ, Snapshots: len(snapshots)}
	snaps := make([]Levels, 0, len(snapshots))
	compacted := 0
	for _, w := range snapshots {
		if w.End.Equal(w.Start) {
			snaps = append(snaps, w)
		} else {
			compacted++
		}
	}
	slices.SortStableFunc(snaps, func(a, b Levels) int { return a.Start.Compare(b.Start) })
	js.Compacted = compacted
	type candidate struct {
		stack uint64
		seg   []Levels
		// points are the stack's levels, binned; tr their rank
		// trend, fitted once the rise is found significant.
		points []point
		tr     Trend
		first  int64
		last   int64
		unit   string
	}
	var cands []candidate
	short := 0
	for _, seg := range byProcess(snaps) {
		span := seg[len(seg)-1].Start.Sub(seg[0].Start)
		if len(seg) < o.MinPoints || span < o.MinSpan {
			short += len(seg)
			continue
		}
		col := levelColumn(seg[0].Shape, sampleType)
		if col < 0 {
			return nil, js, fmt.Errorf("leaks: %s snapshots have no %s values", typ, sampleType)
		}
		unit := seg[0].Shape.SampleTypes[col].Unit
		js.Judged += len(seg)
		for _, w := range seg {
			if !w.Shape.Compatible(seg[0].Shape) {
				return nil, js, fmt.Errorf("leaks: %s snapshots of one process have different sample types", typ)
			}
		}
		// Stacks present in the last snapshot: a level that went back to
		// nothing did not leak.
		stacks, levels := stackLevels(seg)
		js.Stacks += len(stacks)
		n := len(seg)
		for k, id := range stacks {
			ps := make([]point, n)
			for i, w := range seg {
				ps[i] = point{t: w.Start, v: float64(levels[i*len(stacks)+k])}
			}
			ps = binMedians(ps, maxTrendPoints)
			cands = append(cands, candidate{stack: id, seg: seg, points: ps, tr: rankTrend(ps), first: levels[k], last: levels[(n-1)*len(stacks)+k], unit: unit})
		}
	}
	js.Short = short
	minGrowth := o.MinGoroutines
	if sampleType == profiles.SampleInuseSpace {
		minGrowth = o.MinBytes
	}
	level := o.Alpha / float64(max(1, js.Stacks))
	var leaks []Leak
	var ids []uint64
	for _, c := range cands {
		if c.tr.S <= 0 || c.tr.P >= level {
			continue
		}
		c.tr.fit(c.points)
		growth := c.tr.Last - c.tr.First
		if c.tr.LaterSlope <= 0 || growth < minGrowth {
			continue
		}
		leaks = append(leaks, Leak{Target: target, Type: typ, SampleType: sampleType, Unit: c.unit,
			Process: c.seg[0].Process(), From: c.seg[0].Start, To: c.seg[len(c.seg)-1].Start, Snapshots: len(c.seg),
			PerHour: c.tr.Slope * 3600, Growth: growth, Start: c.first, End: c.last, Trend: c.tr, Levels: leakLevels(c.points)})
		ids = append(ids, c.stack)
	}
	if len(leaks) == 0 {
		return nil, js, nil
	}
	if err := describeStacks(leaks, ids, typ, src); err != nil {
		return nil, js, err
	}
	slices.SortStableFunc(leaks, func(a, b Leak) int { return cmp.Compare(b.PerHour, a.PerHour) })
	return leaks, js, nil
}

// leakLevels are the points a leak's trend was judged on.
func leakLevels(ps []point) []LeakLevel {
	ls := make([]LeakLevel, len(ps))
	for i, p := range ps {
		ls[i] = LeakLevel{At: p.t, Value: p.v}
	}
	return ls
}

// stackLevels returns the stacks whose level in the last of snapshots is
// above 0, in order, and every snapshot's level of each: the level of
// stacks[k] in snapshots[i] is levels[i*len(stacks)+k] (0 where it has
// none).
func stackLevels(snapshots []Levels) (stacks []uint64, levels []int64) {
	last := snapshots[len(snapshots)-1]
	for k, id := range last.Stacks {
		if last.Values[k] > 0 {
			stacks = append(stacks, id)
		}
	}
	levels = make([]int64, len(snapshots)*len(stacks))
	for i, l := range snapshots {
		row := levels[i*len(stacks) : (i+1)*len(stacks)]
		// Both lists are ascending: walk them together.
		k := 0
		for j, id := range l.Stacks {
			for k < len(stacks) && stacks[k] < id {
				k++
			}
			if k == len(stacks) {
				break
			}
			if stacks[k] == id {
				row[k] = l.Values[j]
			}
		}
	}
	return stacks, levels
}

// byProcess splits snapshots, ordered by time, into runs of one process
// each.
func byProcess(ws []Levels) [][]Levels {
	var out [][]Levels
	for i := 0; i < len(ws); {
		j := i + 1
		for j < len(ws) && ws[j].Process() == ws[i].Process() {
			j++
		}
		out = append(out, ws[i:j])
		i = j
	}
	return out
}

// describeStacks fills each leak's stack, its start and its user frame
// from the symbols of the stack ids (one per leak).
func describeStacks(leaks []Leak, ids []uint64, typ string, src SymbolSource) error {
	sy, err := Resolve(src, distinct(slices.Clone(ids)))
	if err != nil {
		return err
	}
	w := Window{Shape: Shape{SampleTypes: []ValueType{{Type: "count", Unit: "count"}}}}
	for _, id := range ids {
		w.Samples = append(w.Samples, Sample{Stack: id, Values: []int64{1}})
	}
	p, err := sy.Profile(w)
	if err != nil {
		return err
	}
	cs := profiles.NewClasses(nil, p)
	for i, s := range p.Sample {
		l := &leaks[i]
		fs := profiles.Frames(s)
		l.Stack = make([]string, len(fs))
		for k, f := range fs {
			l.Stack[k] = frameText(f.Name(), f.File(), f.Line())
		}
		u := profiles.UserFrame(fs, -1, cs.Frame)
		if u >= 0 {
			l.At = frameText(fs[u].Name(), fs[u].File(), fs[u].Line())
			if u > 0 && typ != Heap {
				l.Wait = fs[u-1].Name()
			}
		}
		switch {
		case typ == Heap && u < 0:
			// No frame of the program: named by the function that asked
			// for the memory, not by the outermost frame, which only says
			// where the goroutine that happened to allocate was running.
			l.RuntimeOnly = runtimeOnly(fs, cs)
			l.NewGoroutines = l.RuntimeOnly && slices.ContainsFunc(fs, func(f profiles.Frame) bool { return f.Name() == "runtime.newproc1" })
			if a := allocatingFrame(fs); a >= 0 {
				l.StartedAt = frameText(fs[a].Name(), fs[a].File(), fs[a].Line())
				l.WaitRecords = matchesAny(fs[a].Name(), waitRecordAllocators)
			}
		case typ == Heap:
			l.StartedAt = l.At
		default:
			l.StartedAt = goroutineStart(fs)
		}
		if l.StartedAt == "" && len(l.Stack) > 0 {
			l.StartedAt = l.Stack[len(l.Stack)-1]
		}
	}
	return nil
}

// runtimeOnly says no frame of fs is outside the runtime.
func runtimeOnly(fs []profiles.Frame, cs *profiles.Classes) bool {
	for _, f := range fs {
		if cs.Frame(f) != profiles.Runtime {
			return false
		}
	}
	return len(fs) > 0
}

// allocationEntries are the runtime functions compiled code calls to
// allocate: a heap stack's frames inside them say how, not what for.
var allocationEntries = []string{"runtime.mallocgc*", "runtime.newobject", "runtime.newarray", "runtime.makeslice*",
	"runtime.growslice", "runtime.makemap*", "runtime.rawstring*", "runtime.rawbyteslice", "runtime.rawruneslice"}

// waitRecordAllocators are the runtime functions that allocate nothing
// but the records of waiting goroutines (sudogs, runtime.acquireSudog,
// often inlined into them): blocking on a channel, a select, a semaphore
// (locks, WaitGroups) or a condition variable. The sync package's names
// are the runtime's functions linked into it.
var waitRecordAllocators = []string{"runtime.acquireSudog", "runtime.chanrecv", "runtime.chansend", "runtime.selectgo",
	"runtime.semacquire*", "runtime.notifyListWait", "sync.runtime_notifyListWait", "sync.runtime_Semacquire*",
	"internal/sync.runtime_Semacquire*"}

// allocatingFrame is the innermost frame of fs outside the allocation
// entries: the function that asked for the memory; -1 when every frame is
// one.
func allocatingFrame(fs []profiles.Frame) int {
	for i, f := range fs {
		if !matchesAny(f.Name(), allocationEntries) {
			return i
		}
	}
	return -1
}

// matchesAny says whether name matches one of the path.Match patterns.
func matchesAny(name string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { ok, _ := path.Match(pat, name); return ok })
}

// goroutineStart is the function a goroutine was started with: its
// outermost frame but runtime.goexit, as "function file:line" with the
// function's first line.
func goroutineStart(fs []profiles.Frame) string {
	for k := len(fs) - 1; k >= 0; k-- {
		f := fs[k]
		if f.Name() == "runtime.goexit" {
			continue
		}
		if fn := f.Function(); fn != nil && fn.StartLine > 0 {
			return frameText(fn.Name, fn.Filename, fn.StartLine)
		}
		return frameText(f.Name(), f.File(), f.Line())
	}
	return ""
}

func frameText(name, file string, line int64) string {
	if file == "" {
		return name
	}
	return fmt.Sprintf("%s %s:%d", name, file, line)
}

// ErrNoLeakData means the range holds no snapshot of any type leaks are
// judged on.
var ErrNoLeakData = errors.New("no goroutine or heap snapshots")
