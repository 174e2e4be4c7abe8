package store

import (
	"context"
	"database/sql"
	"math"
	"reflect"
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

// TestChainSpans checks, on both engines, that scrapes of a chained type
// are coded in chains of ten minutes, so that a read from within a span
// reads at most the span's blocks before it; and that a store whose
// scrapes were coded in hour-long chains until chains_from (a store made
// before migration 15) reads them as such, and codes ten-minute chains
// after. Every read is checked against the scrapes as stored.
func TestChainSpans(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			s, _ := e.open(t)
			ctx := context.Background()
			// An hour stored as a store before migration 15 stored it,
			// in an hour-long chain; then the store migrated, with
			// ten-minute chains from the next hour on.
			hour := profEpoch.Add(time.Hour)
			chainsFrom := func(t0 int64) {
				t.Helper()
				if _, err := s.b.db.ExecContext(ctx, s.b.q(`UPDATE prof_meta SET value = ? WHERE name = 'chains_from'`), t0); err != nil {
					t.Fatal(err)
				}
				s.ProfileSeries.chainsFrom = t0
			}
			heap := leftpadProfiles(t, profseries.Heap)
			const rounds = 2 * 360
			want := map[time.Time]map[uint64]int64{}
			chainsFrom(math.MaxInt64)
			for i := range rounds {
				if i == rounds/2 {
					chainsFrom(nanos(hour))
				}
				sc := scrapeAt(apiTarget, profseries.Heap, heap[i%len(heap)], profEpoch.Add(time.Duration(i)*10*time.Second))
				if err := s.Append(ctx, sc); err != nil {
					t.Fatal(err)
				}
			}
			all, err := s.Windows(ctx, profseries.Query{Type: profseries.Heap, From: profEpoch, To: profEpoch.Add(2 * time.Hour)})
			if err != nil || len(all) != rounds {
				t.Fatalf("%d windows read from the start (%v), want %d", len(all), err, rounds)
			}
			for _, w := range all {
				want[w.Start] = sampleSums(w.Samples)
			}
			for _, c := range []struct {
				name     string
				from     time.Time
				readBack time.Duration // the most read before from
			}{
				{"within an hour-long chain", profEpoch.Add(45*time.Minute + 5*time.Second), 45*time.Minute + 5*time.Second},
				{"within a ten-minute chain", hour.Add(25*time.Minute + 5*time.Second), 5*time.Minute + 5*time.Second},
			} {
				q := profseries.Query{Type: profseries.Heap, From: c.from, To: c.from.Add(time.Minute)}
				var ws []profseries.Window
				read := rowsReadBy(s, func() { ws, err = s.Windows(ctx, q) })
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if len(ws) != 6 {
					t.Fatalf("%s: %d windows, want 6", c.name, len(ws))
				}
				for _, w := range ws {
					if !reflect.DeepEqual(sampleSums(w.Samples), want[w.Start]) {
						t.Errorf("%s: the scrape at %s read from within its chain is not the one stored", c.name, w.Start)
					}
				}
				// The blocks before from in its chain, the six, and the
				// series and processes.
				if limit := int64(c.readBack/(10*time.Second)) + 1 + 6 + 5; read > limit {
					t.Errorf("%s: read %d rows, want at most %d (a chain's blocks before the range)", c.name, read, limit)
				}
				if c.readBack < 10*time.Minute && read > 6+40 {
					t.Errorf("%s: read %d rows: the range was read from further back than its ten-minute chain", c.name, read)
				}
			}
		})
	}
}

// sampleSums adds samples' values up by stack.
func sampleSums(samples []profseries.Sample) map[uint64]int64 {
	out := map[uint64]int64{}
	for _, s := range samples {
		for _, v := range s.Values {
			out[s.Stack] += v
		}
	}
	return out
}
