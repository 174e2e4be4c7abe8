package store

import (
	"context"
	"database/sql"
	"reflect"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// runPackSuite stores the committed real scrapes of every default type
// across two hours, reads ranges of them, has retention pack the hours
// that ended, and reads the same ranges again: every answer is the same,
// the blocks are references into one pack an hour, and they take less.
// A scrape stored late into a packed hour is read beside the pack, and
// compaction takes the packs with their hours.
func runPackSuite(t *testing.T, s *DB) {
	ctx := context.Background()
	types := []string{profseries.CPU, profseries.Allocs, profseries.Heap, profseries.Goroutine, profseries.Mutex, profseries.Block}
	start := profEpoch.Add(58 * time.Minute)
	const rounds = 90 // 12 in the first hour, 78 in the second
	scrapes := map[string][]*profseries.Scrape{}
	for _, typ := range types {
		ps := leftpadProfiles(t, typ)
		for i := range rounds {
			sc := scrapeAt(apiTarget, typ, ps[i%len(ps)], start.Add(time.Duration(i)*10*time.Second))
			if err := s.Append(ctx, sc); err != nil {
				t.Fatal(err)
			}
			scrapes[typ] = append(scrapes[typ], sc)
		}
	}
	ranges := [][2]time.Time{
		{start, start.Add(rounds * 10 * time.Second)},                                     // all
		{profEpoch.Add(time.Hour + 7*time.Minute + 30*time.Second), start.Add(time.Hour)}, // from the middle of an hour
		{start.Add(50 * time.Second), start.Add(50*time.Second + time.Nanosecond)},        // one scrape
	}
	read := func() map[string][]map[string][]int64 {
		t.Helper()
		out := map[string][]map[string][]int64{}
		for _, typ := range types {
			for _, r := range ranges {
				p, err := s.MergedProfile(ctx, profseries.Query{Type: typ, From: r[0], To: r[1]})
				if err != nil {
					t.Fatalf("%s: %v", typ, err)
				}
				out[typ] = append(out[typ], stackSums(p))
			}
		}
		return out
	}
	before := read()
	// The merge of every scrape is pprof's.
	for _, typ := range types {
		ps := make([]*profile.Profile, len(scrapes[typ]))
		for i, sc := range scrapes[typ] {
			ps[i] = sc.Profile
		}
		want, err := profile.Merge(ps)
		if err != nil {
			t.Fatal(err)
		}
		if !equalSums(before[typ][0], stackSums(want)) {
			t.Fatalf("%s: the merge of every scrape differs from pprof's before packing", typ)
		}
	}
	bytesBefore, err := s.storedBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Retention = Retention{Raw: 48 * time.Hour, Minute: 96 * time.Hour, TenMinutes: 200 * time.Hour}
	// An hour is packed once it ended packDelay ago: at 2:05 the first
	// hour only, at 2:10 both.
	rep, err := s.ApplyRetention(ctx, profEpoch.Add(2*time.Hour+5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if want := 12 * len(types); rep.Packed != want {
		t.Errorf("%d blocks packed at 2:05, want the first hour's %d", rep.Packed, want)
	}
	if rep, err = s.ApplyRetention(ctx, profEpoch.Add(2*time.Hour+packDelay)); err != nil {
		t.Fatal(err)
	}
	if want := 78 * len(types); rep.Packed != want {
		t.Errorf("%d blocks packed at 2:10, want the second hour's %d", rep.Packed, want)
	}
	var packs, refs, whole int
	if err := s.b.db.QueryRow(`SELECT COUNT(*) FROM prof_packs`).Scan(&packs); err != nil {
		t.Fatal(err)
	}
	if packs != 2*len(types) {
		t.Errorf("%d packs, want one an hour of each type (%d)", packs, 2*len(types))
	}
	err = s.b.each(ctx, `SELECT data FROM prof_blocks WHERE resolution = 0`, nil, func(rows *sql.Rows) error {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return err
		}
		if _, packed, _ := profseries.PackedEntry(data); packed {
			refs++
		} else {
			whole++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if refs != rounds*len(types) || whole != 0 {
		t.Errorf("%d blocks refer to packs and %d are whole, want all %d packed", refs, whole, rounds*len(types))
	}
	bytesAfter, err := s.storedBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bytesAfter >= bytesBefore {
		t.Errorf("the store takes %d bytes packed, %d before", bytesAfter, bytesBefore)
	}
	t.Logf("stored bytes: %d before packing, %d after", bytesBefore, bytesAfter)
	// The series' sizes count their packs.
	var summed, counted int64
	if err := s.b.db.QueryRow(`SELECT SUM(bytes) FROM prof_series`).Scan(&summed); err != nil {
		t.Fatal(err)
	}
	if err := s.b.db.QueryRow(s.lengthFn(`SELECT (SELECT SUM(LENGTH(data)) FROM prof_blocks) + (SELECT SUM(LENGTH(data)) FROM prof_packs)`)).Scan(&counted); err != nil {
		t.Fatal(err)
	}
	if summed != counted {
		t.Errorf("the series' sizes sum to %d bytes, their blocks and packs take %d", summed, counted)
	}
	after := read()
	for _, typ := range types {
		for i := range ranges {
			if !equalSums(before[typ][i], after[typ][i]) {
				t.Errorf("%s, range %d: packed, the merge differs from before", typ, i)
			}
		}
	}
	// The packs read are kept unpacked: the scrapes of both hours read
	// again read the same rows but the two packs.
	all := profseries.Query{Type: profseries.Heap, From: ranges[0][0], To: ranges[0][1]}
	var firstWs, againWs []profseries.Window
	s.packs = newKeptLRU[packKey, [][]byte](packsKept) // as a handle that read none
	first := rowsReadBy(s, func() { firstWs, err = s.Windows(ctx, all) })
	if err != nil {
		t.Fatal(err)
	}
	again := rowsReadBy(s, func() { againWs, err = s.Windows(ctx, all) })
	if err != nil {
		t.Fatal(err)
	}
	if first-again != 2 || !reflect.DeepEqual(firstWs, againWs) {
		t.Errorf("the scrapes of two packed hours read %d rows, then %d: want the same scrapes, the packs read once", first, again)
	}

	// A scrape stored late, into the packed second hour, is kept whole
	// beside the pack and read with it; packing again leaves both.
	late := scrapeAt(apiTarget, profseries.Heap, leftpadProfiles(t, profseries.Heap)[1], profEpoch.Add(time.Hour+5*time.Second))
	if err := s.Append(ctx, late); err != nil {
		t.Fatal(err)
	}
	if rep, err = s.ApplyRetention(ctx, profEpoch.Add(3*time.Hour)); err != nil || rep.Packed != 0 {
		t.Errorf("packing again packed %d blocks (%v), want none", rep.Packed, err)
	}
	// heapIs checks the merge of the heap scrapes from from to the end of
	// the second hour against pprof's merge of want.
	heapIs := func(from time.Time, want []*profile.Profile, when string) {
		t.Helper()
		w, err := profile.Merge(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.MergedProfile(ctx, profseries.Query{Type: profseries.Heap, From: from, To: start.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if !equalSums(stackSums(got), stackSums(w)) {
			t.Errorf("%s, the merge differs from pprof's", when)
		}
	}
	heap := []*profile.Profile{late.Profile}
	for _, sc := range scrapes[profseries.Heap] {
		heap = append(heap, sc.Profile)
	}
	heapIs(start, heap, "with a scrape stored late into a packed hour")

	// Compaction merges the packed hours into minutes and takes their
	// packs; the minutes' windows are packed in turn, an hour a pack; the
	// merge is the same. Then the minutes go into ten minutes, and their
	// packs with them.
	s.Retention = Retention{Raw: time.Hour, Minute: 96 * time.Hour, TenMinutes: 200 * time.Hour}
	if _, err := s.ApplyRetention(ctx, profEpoch.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	countPacks := func(resolution int64) int {
		t.Helper()
		var n int
		if err := s.b.db.QueryRow(s.b.q(`SELECT COUNT(*) FROM prof_packs WHERE resolution = ?`), resolution).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := countPacks(0); n != 0 {
		t.Errorf("%d packs of scrapes left after their hours were compacted", n)
	}
	if n := countPacks(resolutionMinute); n != 2*len(types) {
		t.Errorf("%d packs of one-minute windows, want one an hour of each type (%d)", n, 2*len(types))
	}
	heapIs(start, heap, "after compacting packed hours and packing their windows")
	// A scrape stored late into a compacted hour merges into its packed
	// window.
	later := scrapeAt(apiTarget, profseries.Heap, leftpadProfiles(t, profseries.Heap)[2], profEpoch.Add(time.Hour+15*time.Second))
	if err := s.Append(ctx, later); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyRetention(ctx, profEpoch.Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	heap = append(heap, later.Profile)
	heapIs(start, heap, "a scrape stored late into a packed window")
	s.Retention = Retention{Raw: time.Hour, Minute: 2 * time.Hour, TenMinutes: 200 * time.Hour}
	if _, err := s.ApplyRetention(ctx, profEpoch.Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := countPacks(resolutionMinute); n != 0 {
		t.Errorf("%d packs of one-minute windows left after their windows were compacted", n)
	}
	heapIs(profEpoch, heap, "after compacting packed windows")
}

// TestProfileSeriesPacked: hours of scrapes packed read as before, on
// both engines.
func TestProfileSeriesPacked(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			s, _ := e.open(t)
			runPackSuite(t, s)
		})
	}
}
