package store

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestLevelsAsWindows checks, on both engines and on committed real
// goroutine and heap scrapes, that the leaks of a store judged from the
// levels of its snapshots (Levels, what FindLeaks reads) are the leaks
// judged from its decoded windows, report for report; and below them,
// that each snapshot's levels, kept beside its block or decoded from it,
// are the sums by stack of its decoded samples. The scrapes are stored as
// a scraper stores them (each coded against the one before), one target
// restarting halfway; a few stacks grow, so that leaks are named; the
// ranges start within a span of chained blocks and cross into the next.
// It checks again with the levels of the first scrapes missing (as in a
// store made before they were kept), and after compaction merged the
// first half hour into windows of a minute.
func TestLevelsAsWindows(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			s, where := e.open(t)
			testLevelsAsWindows(t, s, where)
		})
	}
}

func testLevelsAsWindows(t *testing.T, s *DB, where string) {
	ctx := context.Background()
	start := profEpoch.Add(45 * time.Minute)
	const snapshots = 180
	for _, typ := range []string{profseries.Goroutine, profseries.Heap} {
		ps := leftpadProfiles(t, typ)
		for i := range snapshots {
			for j, target := range []profseries.Labels{apiTarget, webTarget} {
				p := ps[(i+j)%len(ps)].Copy()
				growLevels(p, typ, i)
				sc := scrapeAt(target, typ, p, start.Add(time.Duration(i)*10*time.Second))
				sc.End = sc.Start // a snapshot
				if j == 1 && i >= snapshots/2 {
					sc.Process.Generation = 2
				}
				if err := s.Append(ctx, sc); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// A target that stopped two hours before: nothing in the ranges.
	gone := profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "127.0.0.1:3"})
	for _, typ := range []string{profseries.Goroutine, profseries.Heap} {
		for i, p := range leftpadProfiles(t, typ)[:3] {
			sc := scrapeAt(gone, typ, p, start.Add(-2*time.Hour+time.Duration(i)*10*time.Second))
			sc.End = sc.Start
			if err := s.Append(ctx, sc); err != nil {
				t.Fatal(err)
			}
		}
	}
	end := start.Add(snapshots * 10 * time.Second)
	ranges := [][2]time.Time{{start, end}, {start.Add(7*time.Minute + 5*time.Second), end}, {start.Add(20 * time.Minute), end.Add(-3 * time.Minute)}}
	found := map[string]int{}
	check := func(when string) {
		t.Helper()
		for _, r := range ranges {
			for _, l := range leaksAsWindows(t, s, r[0], r[1], when) {
				found[when+" "+l.Type]++
			}
		}
	}
	check("kept")
	checkSpacedLevels(t, s, start.Add(65*time.Second), end, time.Minute)
	// Migration 17 gives the buckets recorded before it the same levels,
	// from the blocks of their first scrapes, of every type leaks judge.
	for _, lt := range profseries.LeakTypes {
		if !strings.Contains(migration17, "'"+lt.Type+"'") {
			t.Errorf("migration 17 fills no bucket of %s series", lt.Type)
		}
	}
	stmts := strings.Split(s.b.d.ddl.Replace(migration17), ";")
	for _, stmt := range []string{`UPDATE prof_gauges SET first_shape = NULL, first_levels = NULL`, stmts[len(stmts)-1]} {
		if _, err := s.b.db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	// Records changed outside the store are read by a handle opened
	// after (one that kept nothing of them), as a store migrated is.
	s = openReader(t, where)
	checkSpacedLevels(t, s, start.Add(65*time.Second), end, time.Minute)
	// Over an hour, FindLeaks reads a snapshot a minute, says so, and
	// still names the growing stacks.
	// One read of levels a type: the target that stopped before the
	// range is not read again, snapshot by snapshot.
	counted := &countingLevels{DB: s}
	rep, err := profseries.FindLeaks(ctx, counted, profseries.Selector{}, end.Add(-time.Hour), end, profseries.LeakOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := counted.reads.Load(); n != 2 {
		t.Errorf("over an hour: %d reads of levels, want one for goroutines and one for heap", n)
	}
	types := map[string]bool{}
	for _, l := range rep.Leaks {
		types[l.Type] = true
	}
	for _, j := range rep.Judged {
		if j.Every != time.Minute || j.Snapshots > 31 {
			t.Errorf("%s %s over an hour: %d snapshots read at a spacing of %v, want one a minute", j.Type, j.Target, j.Snapshots, j.Every)
		}
	}
	if !types[profseries.Goroutine] || !types[profseries.Heap] || len(rep.Judged) != 4 {
		t.Errorf("over an hour at a snapshot a minute: leaks of types %v in %d series judged, want goroutine and heap leaks of 4", types, len(rep.Judged))
	}
	// Snapshots stored before their levels were kept (migration 12):
	// neither their blocks nor the buckets they start have any.
	for _, stmt := range []string{`UPDATE prof_blocks SET levels = NULL WHERE start_time < ?`, `UPDATE prof_gauges SET first_levels = NULL WHERE first_start < ?`} {
		if _, err := s.b.db.ExecContext(ctx, s.b.q(stmt), nanos(start.Add(10*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	s = openReader(t, where)
	check("partly kept")
	checkSpacedLevels(t, s, start, end, 0)
	s.Retention = Retention{Raw: 24 * time.Hour, Minute: 48 * time.Hour, TenMinutes: 72 * time.Hour}
	if _, err := s.ApplyRetention(ctx, start.Add(30*time.Minute+24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	check("compacted")
	checkSpacedLevels(t, s, start, end, 0)
	for _, when := range []string{"kept", "partly kept", "compacted"} {
		if found[when+" "+profseries.Goroutine] == 0 || found[when+" "+profseries.Heap] == 0 {
			t.Errorf("leaks named by type: %v, want goroutine and heap leaks in each store", found)
		}
	}
}

// checkSpacedLevels checks the levels Levels reads over [from, to) when
// asked for one snapshot a minute: those of the first snapshot of each
// series and process in each minute, as read with the rest, where the
// store can (want a minute), or every snapshot where it cannot (want 0).
// A minute the range starts within is left out.
func checkSpacedLevels(t *testing.T, s *DB, from, to time.Time, want time.Duration) {
	t.Helper()
	ctx := context.Background()
	for _, lt := range profseries.LeakTypes[:1] {
		q := profseries.Query{Type: lt.Type, From: from, To: to}
		all, _, err := s.Levels(ctx, q, lt.SampleType, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, every, err := s.Levels(ctx, q, lt.SampleType, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if every != want {
			t.Fatalf("%s from %s: levels read at a spacing of %v, want %v", lt.Type, from, every, want)
		}
		firsts := all
		if want > 0 {
			firsts = nil
			seen := map[string]bool{}
			for _, l := range all {
				tp := l.Processes[0]
				k := tp.Target.String() + tp.Process.BuildID + l.Start.Truncate(want).String() + time.Duration(tp.Process.Generation).String()
				if !seen[k] && !l.Start.Truncate(want).Before(from) {
					seen[k] = true
					firsts = append(firsts, l)
				}
			}
		}
		order := func(a, b profseries.Levels) int {
			if c := a.Start.Compare(b.Start); c != 0 {
				return c
			}
			return strings.Compare(a.Processes[0].Target.String(), b.Processes[0].Target.String())
		}
		slices.SortStableFunc(got, order)
		slices.SortStableFunc(firsts, order)
		if len(got) < 2 || !reflect.DeepEqual(got, firsts) {
			t.Errorf("%s from %s at a spacing of %v: %d snapshots read, want %d (the first of each minute starting in the range)", lt.Type, from, want, len(got), len(firsts))
		}
	}
}

// leaksAsWindows checks FindLeaks on s over [from, to) against Leaks of
// the decoded windows, and the levels it reads against the windows'
// samples; it returns the leaks.
func leaksAsWindows(t *testing.T, s *DB, from, to time.Time, when string) []profseries.Leak {
	t.Helper()
	ctx := context.Background()
	got, err := profseries.FindLeaks(ctx, s, profseries.Selector{}, from, to, profseries.LeakOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := &profseries.LeakReport{Selector: got.Selector, From: from, To: to, Alpha: got.Alpha, MinGoroutines: got.MinGoroutines,
		MinBytes: got.MinBytes, MinPoints: got.MinPoints, MinSpan: got.MinSpan, Leaks: []profseries.Leak{}, Judged: []profseries.LeakSeries{}}
	for _, lt := range profseries.LeakTypes {
		targets, err := s.SeriesLabels(ctx, lt.Type, profseries.Selector{})
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range targets {
			q := profseries.Query{Type: lt.Type, Selector: profseries.Exact(target), From: from, To: to}
			ws, err := s.Windows(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			checkLevels(t, s, q, lt.SampleType, ws, when)
			if len(ws) == 0 {
				continue
			}
			leaks, judged, err := profseries.Leaks(target, lt.Type, ws, s.Symbols(ctx), profseries.LeakOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want.Leaks = append(want.Leaks, leaks...)
			want.Judged = append(want.Judged, judged)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s, %s to %s: the leaks of the levels are not those of the windows:\n got %+v\nwant %+v", when, from, to, got, want)
	}
	return got.Leaks
}

// growLevels makes the i-th snapshot of p's growing stacks hold more:
// the first stack of a goroutine profile one more goroutine each time,
// the first and last stack of a heap profile 2 MiB more in use.
func growLevels(p *profile.Profile, typ string, i int) {
	slices.SortStableFunc(p.Sample, func(a, b *profile.Sample) int { return len(a.Location) - len(b.Location) })
	switch typ {
	case profseries.Goroutine:
		p.Sample[0].Value[0] += int64(i)
	case profseries.Heap:
		for _, s := range []*profile.Sample{p.Sample[0], p.Sample[len(p.Sample)-1]} {
			s.Value[2] += int64(i) * 64
			s.Value[3] += int64(i) << 21
		}
	}
}

// checkLevels checks that the levels Levels reads for q, and those
// decoded from the blocks, are the sums by stack of the samples of ws,
// the windows Windows read for it, where a sum is not 0; and that a
// window that is not a snapshot has none.
func checkLevels(t *testing.T, s *DB, q profseries.Query, sampleType string, ws []profseries.Window, when string) {
	t.Helper()
	ls, every, err := s.Levels(context.Background(), q, sampleType, 0)
	if err != nil || every != 0 {
		t.Fatalf("%s, %s: levels read at a spacing of %v (%v), want every snapshot", when, q.Type, every, err)
	}
	decoded, err := s.decodedLevels(context.Background(), q, sampleType)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ls, decoded) {
		t.Fatalf("%s, %s: the levels read are not those decoded", when, q.Type)
	}
	if len(ls) != len(ws) {
		t.Fatalf("%s, %s: %d levels, %d windows", when, q.Type, len(ls), len(ws))
	}
	for i, w := range ws {
		l := ls[i]
		want := map[uint64]int64{}
		if w.End.Equal(w.Start) {
			col := slices.IndexFunc(w.Shape.SampleTypes, func(v profseries.ValueType) bool { return v.Type == sampleType })
			for _, smp := range w.Samples {
				want[smp.Stack] += smp.Values[col]
			}
			for id, v := range want {
				if v == 0 {
					delete(want, id)
				}
			}
		}
		got := map[uint64]int64{}
		for k, id := range l.Stacks {
			got[id] = l.Values[k]
		}
		if !slices.IsSorted(l.Stacks) || len(got) != len(l.Stacks) || len(l.Values) != len(l.Stacks) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s, %s at %s: levels %v %v, want the sums %v", when, q.Type, w.Start, l.Stacks, l.Values, want)
		}
		w.Samples, w.Requests = nil, nil
		if !reflect.DeepEqual(l.Window, w) {
			t.Fatalf("%s, %s: window of the levels %+v, want %+v", when, q.Type, l.Window, w)
		}
	}
}

// countingLevels counts the reads of levels through it.
type countingLevels struct {
	*DB
	reads atomic.Int32
}

func (c *countingLevels) Levels(ctx context.Context, q profseries.Query, sampleType string, every time.Duration) ([]profseries.Levels, time.Duration, error) {
	c.reads.Add(1)
	return c.DB.Levels(ctx, q, sampleType, every)
}

// TestKeptLevels checks the level rows a reader keeps (see levelRows):
// the segments of a range that are closed are read once, and again after
// a late snapshot is stored into one; the open ones are read every time.
// Each answer equals that of a handle that kept nothing.
func TestKeptLevels(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			db, where := e.open(t)
			testKeptLevels(t, db, where)
		})
	}
}

func testKeptLevels(t *testing.T, db *DB, where string) {
	ctx := context.Background()
	ps := leftpadProfiles(t, profseries.Goroutine)
	snapshot := func(target profseries.Labels, i int, at time.Time, generation int) {
		t.Helper()
		p := ps[i%len(ps)].Copy()
		growLevels(p, profseries.Goroutine, i)
		sc := scrapeAt(target, profseries.Goroutine, p, at)
		sc.End, sc.Process.Generation = sc.Start, generation
		if err := db.Append(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	targets := []profseries.Labels{apiTarget, webTarget}
	for i := range 360 {
		for _, target := range targets {
			snapshot(target, i, profEpoch.Add(time.Duration(i)*10*time.Second), 1)
		}
	}
	reader := openReader(t, where)
	lt := profseries.LeakTypes[0]
	q := profseries.Query{Type: lt.Type, From: profEpoch.Add(5 * time.Second), To: profEpoch.Add(time.Hour)}
	levels := func(when string) int64 {
		t.Helper()
		var got []profseries.Levels
		var every time.Duration
		var err error
		read := rowsReadBy(reader, func() { got, every, err = reader.Levels(ctx, q, lt.SampleType, time.Minute) })
		if err != nil || every != time.Minute {
			t.Fatalf("%s: levels at a spacing of %v, %v; want a minute", when, every, err)
		}
		fresh := openReader(t, where)
		want, _, err := fresh.Levels(ctx, q, lt.SampleType, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) < 100 || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %d levels read, those of a handle that kept nothing differ (%d)", when, len(got), len(want))
		}
		return read
	}
	// The first 50 minutes are closed segments, the last ten open (the
	// newest snapshot starts at 59:50).
	first := levels("first")
	if again := levels("again"); again+2*50 > first {
		t.Errorf("levels read %d rows the first time, %d again: want the closed segments' rows kept", first, again)
	}
	// A snapshot of another process stored late into a closed segment,
	// and one in order into the open one, show: each is the first of its
	// process in its minute.
	snapshot(webTarget, 1000, profEpoch.Add(20*time.Minute+5*time.Second), 2)
	levels("after a late snapshot")
	snapshot(apiTarget, 1001, profEpoch.Add(time.Hour-5*time.Second), 2)
	levels("after a snapshot in order")
}
