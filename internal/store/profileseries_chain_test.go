package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// runChainedSuite stores heap snapshots that cross an hour, one stored
// late, so that blocks are coded against the one before; each scrape read
// alone (from the middle of its hour), a range from the middle of an
// hour, and the range after compaction are what was stored.
func runChainedSuite(t *testing.T, s *DB) {
	ctx := context.Background()
	heap := leftpadProfiles(t, profseries.Heap)
	start := profEpoch.Add(time.Hour - 40*time.Second)
	const rounds = 10
	var scrapes []*profseries.Scrape
	for i := range rounds {
		scrapes = append(scrapes, scrapeAt(apiTarget, profseries.Heap, heap[i%len(heap)], start.Add(time.Duration(i)*10*time.Second)))
	}
	// The third is stored late, after the fifth.
	order := []int{0, 1, 3, 4, 2, 5, 6, 7, 8, 9}
	for _, i := range order {
		if err := s.Append(ctx, scrapes[i]); err != nil {
			t.Fatal(err)
		}
	}
	var stored, alone int64
	err := s.b.each(ctx, `SELECT data FROM prof_blocks`, nil, func(rows *sql.Rows) error {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return err
		}
		stored += int64(len(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := s.Windows(ctx, profseries.Query{Type: profseries.Heap, From: start, To: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != rounds {
		t.Fatalf("%d windows read, want %d", len(ws), rounds)
	}
	for _, w := range ws {
		b, err := s.codec().Encode(w.Samples, len(w.Shape.SampleTypes), w.Shape.Period)
		if err != nil {
			t.Fatal(err)
		}
		alone += int64(len(b))
	}
	if stored >= alone {
		t.Errorf("heap snapshots take %d bytes, %d coded alone: none coded against the one before", stored, alone)
	}
	merged := func(from, to time.Time) *profile.Profile {
		t.Helper()
		p, err := s.MergedProfile(ctx, profseries.Query{Type: profseries.Heap, From: from, To: to})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for i, sc := range scrapes {
		got := merged(sc.Start, sc.Start.Add(time.Nanosecond))
		// pprof's merge of one drops its samples of zero values, as the store's does.
		want, err := profile.Merge([]*profile.Profile{sc.Profile})
		if err != nil {
			t.Fatal(err)
		}
		if !equalSums(stackSums(got), stackSums(want)) {
			t.Errorf("scrape %d read alone differs from the one stored", i)
		}
	}
	want, err := profile.Merge([]*profile.Profile{scrapes[2].Profile, scrapes[3].Profile, scrapes[4].Profile, scrapes[5].Profile})
	if err != nil {
		t.Fatal(err)
	}
	if got := merged(scrapes[2].Start, scrapes[6].Start); !equalSums(stackSums(got), stackSums(want)) {
		t.Error("a range from the middle of an hour differs from pprof's merge of its scrapes")
	}
	all := make([]*profile.Profile, len(scrapes))
	for i, sc := range scrapes {
		all[i] = sc.Profile
	}
	if want, err = profile.Merge(all); err != nil {
		t.Fatal(err)
	}
	s.Retention = Retention{Raw: time.Hour, Minute: 24 * time.Hour, TenMinutes: 48 * time.Hour}
	if _, err := s.ApplyRetention(ctx, start.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var raw int
	if err := s.b.db.QueryRow(`SELECT COUNT(*) FROM prof_blocks WHERE resolution = 0`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw != rounds-4 {
		t.Errorf("%d scrapes kept as they came after compacting the first hour, want %d", raw, rounds-4)
	}
	// Compacted windows start at their minute.
	if got := merged(start.Truncate(time.Minute), start.Add(time.Hour)); !equalSums(stackSums(got), stackSums(want)) {
		t.Error("after compaction, the range differs from pprof's merge of its scrapes")
	}
}

// TestProfileSeriesChained: heap snapshots coded against the one before
// read back exact on both engines, stored late or read from the middle
// of an hour, and after compaction.
func TestProfileSeriesChained(t *testing.T) {
	sq, _ := openTestSQLite(t)
	pg, _ := openTestPostgres(t)
	t.Run("SQLite", func(t *testing.T) { runChainedSuite(t, sq) })
	t.Run("PostgreSQL", func(t *testing.T) { runChainedSuite(t, pg) })
}
