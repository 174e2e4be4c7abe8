package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestBucketMergesKept stores the committed real heap scrapes (a type
// coded in chains) of three targets, rolls up what a scraper would have
// by then and stores more, and merges ranges through a second handle, as
// the dashboard beside a scraper does: a range whose whole buckets (ten
// minutes rolled up or not, hours) were merged before reads none of their
// blocks again, whatever the range around them; scrapes stored late into
// a kept bucket, one rolled up and one not, are in the next merge; every
// merge equals that of the scrapes the range holds, and that of a handle
// that kept nothing.
func TestBucketMergesKept(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			db, where := e.open(t)
			testBucketMergesKept(t, db, where)
		})
	}
}

func testBucketMergesKept(t *testing.T, db *DB, where string) {
	ctx := context.Background()
	heap := leftpadProfiles(t, profseries.Heap)
	a := profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "a"})
	b := profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "b"})
	c := profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "c"}) // gone after 30 minutes
	at := func(m time.Duration) time.Time { return profEpoch.Add(m) }
	store := func(target profseries.Labels, t0 time.Time) {
		t.Helper()
		appendReplayed(t, db, target, profseries.Heap, heap, t0)
	}
	// Left out, to be stored late: one scrape in ten minutes rolled up,
	// one in ten minutes that are not.
	late := []time.Time{at(65*time.Minute + 20*time.Second), at(85*time.Minute + 30*time.Second)}
	storeRange := func(from, to time.Duration) {
		for t0 := at(from); t0.Before(at(to)); t0 = t0.Add(10 * time.Second) {
			if t0.Equal(late[0]) || t0.Equal(late[1]) {
				continue
			}
			store(a, t0)
			store(b, t0)
			if t0.Before(at(30 * time.Minute)) {
				store(c, t0)
			}
		}
	}
	storeRange(0, 80*time.Minute)
	// The hour and every ten minutes up to 80 minutes rolled up; ten
	// minutes from 80 on are read as blocks.
	if rep, err := db.RollUp(ctx, at(82*time.Minute)); err != nil || rep.RolledUp == 0 || rep.RolledUpTen == 0 {
		t.Fatalf("roll up: %+v, %v", rep, err)
	}
	storeRange(80*time.Minute, 110*time.Minute)

	reader, err := Open(ctx, where)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	sel, err := profseries.ParseSelector(`{job="leftpad"}`)
	if err != nil {
		t.Fatal(err)
	}
	query := func(from, to time.Duration) profseries.Query {
		return profseries.Query{Type: profseries.Heap, Selector: sel, From: at(from), To: at(to)}
	}
	merged := func(s *DB, when string, q profseries.Query) (profseries.Window, int64) {
		t.Helper()
		return mergedChecked(t, s, when, q)
	}
	fresh := func(when string, q profseries.Query) (profseries.Window, int64) {
		t.Helper()
		return mergedFresh(t, where, when, q)
	}

	// Edges of 5 minutes around whole ten minutes: rolled up (10 to 80
	// minutes), then blocks (80 to 100).
	merged(reader, "first range", query(5*time.Minute, 105*time.Minute))
	// The whole ten minutes of it, alone: kept, no block read.
	inner := query(10*time.Minute, 100*time.Minute)
	w, kept := merged(reader, "its whole buckets", inner)
	want, all := fresh("its whole buckets, nothing kept", inner)
	if !reflect.DeepEqual(w, want) {
		t.Fatal("the merge of kept buckets differs from one of a handle that kept nothing")
	}
	if kept*3 > all {
		t.Errorf("merging buckets kept read %d rows, a handle that kept nothing %d: want the blocks not read again", kept, all)
	}
	// The same range in hours and ten minutes: the hour's rollup is
	// merged once, then kept.
	hours := query(0, 100*time.Minute)
	merged(reader, "a range of whole hours", hours)
	if _, again := merged(reader, "a range of whole hours, shifted", query(0, 100*time.Minute+time.Second)); again*3 > all {
		t.Errorf("merging a range of kept buckets again read %d rows", again)
	}

	// Scrapes stored late, into ten minutes rolled up and into ten
	// minutes read as blocks, both kept: the merges have them.
	for _, t0 := range late {
		store(a, t0)
	}
	w, _ = merged(reader, "after late scrapes", inner)
	if want, _ := fresh("after late scrapes, nothing kept", inner); !reflect.DeepEqual(w, want) {
		t.Fatal("after late scrapes, the merge of kept buckets differs from one of a handle that kept nothing")
	}
	merged(reader, "a range of whole hours after late scrapes", hours)
}

// TestCoversKept: which hours of a series are rolled up and up to date is
// read from the rollups once and then known while the hours' records are
// as they were (no rollup row read again); a scrape stored late into a
// rolled-up hour makes it unknown, read, and found stale.
func TestCoversKept(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			db, where := e.open(t)
			testCoversKept(t, db, where)
		})
	}
}

func testCoversKept(t *testing.T, db *DB, where string) {
	ctx := context.Background()
	targets, cpu := leftpadFleet(t, db, profseries.CPU, 2, 150*time.Minute)
	at := func(m time.Duration) time.Time { return profEpoch.Add(m) }
	late := at(30*time.Minute + 5*time.Second)
	if rep, err := db.RollUp(ctx, at(150*time.Minute)); err != nil || rep.RolledUp == 0 {
		t.Fatalf("roll up: %+v, %v", rep, err)
	}
	reader := openReader(t, where)
	sel, err := profseries.ParseSelector(`{job="leftpad"}`)
	if err != nil {
		t.Fatal(err)
	}
	series, err := reader.matchingSeries(ctx, profseries.Query{Type: profseries.CPU, Selector: sel, From: at(0), To: at(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	ids := sortedIDs(series)
	from, to := nanos(at(0)), nanos(at(2*time.Hour))
	levelCovered := func(when string, level rollupLevel, from, to int64) (map[seriesHour]bool, int64) {
		t.Helper()
		var cov map[seriesHour]bool
		read := rowsReadBy(reader, func() { cov, _, err = reader.covered(ctx, ids, level, from, to) })
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		for _, id := range ids {
			for h := from; h < to; h += level.width {
				if !cov[seriesHour{int64(id), h}] {
					t.Fatalf("%s: series %d's bucket at %s is not covered", when, id, fromNanos(h).Format(time.TimeOnly))
				}
			}
		}
		return cov, read
	}
	covered := func(when string) (map[seriesHour]bool, int64) { return levelCovered(when, rollupHours, from, to) }
	_, first := covered("first")
	if _, again := covered("again"); again+int64(len(ids))*2 > first {
		t.Errorf("covered read %d rows the first time, %d again: want the rollups of the hours known covered not read", first, again)
	}
	// Ten minutes (after the hours rolled up), whose rollups go at their
	// keep: known covered up to coverMargin before it, read again after.
	tens := func(when string) int64 {
		t.Helper()
		_, read := levelCovered(when, rollupTens, nanos(at(2*time.Hour)), nanos(at(140*time.Minute)))
		return read
	}
	reader.now = func() time.Time { return at(150 * time.Minute) }
	first = tens("ten minutes, first")
	again := tens("ten minutes, again")
	if again+int64(len(ids))*2 > first {
		t.Errorf("covered read %d rows of ten minutes the first time, %d again: want the rollups of the buckets known covered not read", first, again)
	}
	// Less than coverMargin before the first bucket's rollups go: they
	// are read again (a row a series), the second's not.
	reader.now = func() time.Time { return at(2*time.Hour + rollupTens.keep - coverMargin + time.Minute) }
	if near := tens("ten minutes, near their keep"); near != again+int64(len(ids)) {
		t.Errorf("covered read %d rows of ten minutes known covered, %d less than %v before the first bucket's rollups go: want its rollups read again, a row a series", again, near, coverMargin)
	}
	// A scrape stored late into the first hour of a: its records change,
	// its rollup is read again and is stale.
	if err := db.Append(ctx, scrapeAt(targets[0], profseries.CPU, cpu[0], late)); err != nil {
		t.Fatal(err)
	}
	cov, _, err := reader.covered(ctx, ids, rollupHours, from, to)
	if err != nil {
		t.Fatal(err)
	}
	var stale int
	for _, id := range ids {
		if !cov[seriesHour{int64(id), from}] {
			stale++
		}
		if !cov[seriesHour{int64(id), from + resolutionHour}] {
			t.Errorf("series %d's second hour is not covered after a late scrape into the first", id)
		}
	}
	if stale != 1 {
		t.Errorf("%d series' first hour not covered after a late scrape into one of them, want 1", stale)
	}
}

// mergedChecked merges q through s, checks it against the merge of the
// scrapes the range holds, and returns it and the rows the merge read.
func mergedChecked(t *testing.T, s *DB, when string, q profseries.Query) (profseries.Window, int64) {
	t.Helper()
	var w profseries.Window
	var err error
	read := rowsReadBy(s, func() { w, err = s.mergeQuery(context.Background(), q) })
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if want, n := windowsMerged(t, s, q); !reflect.DeepEqual(w, want) {
		t.Fatalf("%s: the merge of %s to %s is not that of the %d scrapes it holds", when, q.From.Format(time.TimeOnly), q.To.Format(time.TimeOnly), n)
	}
	return w, read
}

// mergedFresh is mergedChecked through a handle on where that has kept
// nothing.
func mergedFresh(t *testing.T, where, when string, q profseries.Query) (profseries.Window, int64) {
	t.Helper()
	s, err := Open(context.Background(), where)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return mergedChecked(t, s, when, q)
}

// appendReplayed stores target's scrape of typ at t0: the committed real
// scrape of profiles that a scraper every 10 s from profEpoch replays in
// turn at t0.
func appendReplayed(t *testing.T, db *DB, target profseries.Labels, typ string, profiles []*profile.Profile, t0 time.Time) {
	t.Helper()
	i := int(t0.Sub(profEpoch) / (10 * time.Second))
	if err := db.Append(context.Background(), scrapeAt(target, typ, profiles[i%len(profiles)], t0)); err != nil {
		t.Fatal(err)
	}
}

// leftpadFleet stores n targets of the job leftpad (instances a, b, ...),
// each a scrape of typ every 10 s from profEpoch over span, the committed
// real scrapes replayed; it returns the targets and the scrapes.
func leftpadFleet(t *testing.T, db *DB, typ string, n int, span time.Duration) ([]profseries.Labels, []*profile.Profile) {
	t.Helper()
	profiles := leftpadProfiles(t, typ)
	var targets []profseries.Labels
	for i := range n {
		targets = append(targets, profseries.NewLabels(map[string]string{"job": "leftpad", "instance": string(rune('a' + i))}))
	}
	for t0 := profEpoch; t0.Before(profEpoch.Add(span)); t0 = t0.Add(10 * time.Second) {
		for _, target := range targets {
			appendReplayed(t, db, target, typ, profiles, t0)
		}
	}
	return targets, profiles
}

// openReader opens a second handle on where (a server beside the
// scraper), closed when the test ends.
func openReader(t *testing.T, where string) *DB {
	t.Helper()
	r, err := Open(context.Background(), where)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestBucketJoined: a range ending now reads the minutes of its last ten
// minutes as they close, and keeps their merges; once the ten minutes
// are whole (not rolled up yet), the range reads them as those minutes
// kept and the last one, not as their blocks again, and the next read
// joins the minutes' merges into the ten minutes' own. Every merge equals
// that of the scrapes the range holds.
func TestBucketJoined(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			db, where := e.open(t)
			testBucketJoined(t, db, where)
		})
	}
}

func testBucketJoined(t *testing.T, db *DB, where string) {
	heap := leftpadProfiles(t, profseries.Heap)
	targets := []profseries.Labels{
		profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "a"}),
		profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "b"}),
	}
	at := func(m time.Duration) time.Time { return profEpoch.Add(m) }
	storeTo := func(from, to time.Duration) {
		for t0 := at(from); t0.Before(at(to)); t0 = t0.Add(10 * time.Second) {
			for _, target := range targets {
				appendReplayed(t, db, target, profseries.Heap, heap, t0)
			}
		}
	}
	reader := openReader(t, where)
	sel, err := profseries.ParseSelector(`{job="leftpad"}`)
	if err != nil {
		t.Fatal(err)
	}
	query := func(to time.Duration) profseries.Query {
		return profseries.Query{Type: profseries.Heap, Selector: sel, From: at(0), To: at(to)}
	}
	// The range's end passes the minutes of the ten minutes from 10.
	storeTo(0, 19*time.Minute+40*time.Second)
	for _, end := range []time.Duration{12 * time.Minute, 15 * time.Minute, 19*time.Minute + 30*time.Second} {
		mergedChecked(t, reader, "ending in the ten minutes", query(end))
	}
	// The ten minutes whole: their minutes kept and the last read.
	storeTo(19*time.Minute+40*time.Second, 20*time.Minute+30*time.Second)
	_, whole := mergedChecked(t, reader, "the ten minutes whole", query(20*time.Minute+20*time.Second))
	_, all := mergedFresh(t, where, "the ten minutes whole, nothing kept", query(20*time.Minute+20*time.Second))
	if whole*3 > all {
		t.Errorf("the ten minutes whole read %d rows, a handle that kept nothing %d: want their minutes' merges kept used", whole, all)
	}
	_, joined := mergedChecked(t, reader, "the ten minutes joined", query(20*time.Minute+25*time.Second))
	if joined > whole {
		t.Errorf("the ten minutes joined read %d rows, %d before", joined, whole)
	}
}
