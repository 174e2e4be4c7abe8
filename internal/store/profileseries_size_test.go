package store

import (
	"context"
	"testing"
	"time"
)

// storeHour stores an hour of 10 s scrapes of every captured type,
// replaying the committed real scrapes in turn, and returns the sample
// rows and raw pprof bytes stored.
func storeHour(t testing.TB, s *DB) (rows, raw int64) {
	ctx := context.Background()
	for _, typ := range scrapedTypes {
		ps := leftpadProfiles(t, typ)
		for i := range 360 {
			sc := scrapeAt(apiTarget, typ, ps[i%len(ps)], profEpoch.Add(time.Duration(i)*10*time.Second))
			if err := s.Append(ctx, sc); err != nil {
				t.Fatal(err)
			}
			rows += int64(len(sc.Profile.Sample))
			raw += sc.RawBytes
		}
	}
	return rows, raw
}

// TestProfileSeriesSize reports what an hour of scrapes takes: bytes per
// sample row and against the raw pprof bodies. The scrapes replay 4 real
// rounds, so stacks repeat more than in a real hour (where the CPU
// profile's rare stacks keep appearing); symbols are counted in full.
func TestProfileSeriesSize(t *testing.T) {
	s, _ := openTestSQLite(t)
	rows, raw := storeHour(t, s)
	stored, err := s.storedBytes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var blocks int64
	if err := s.b.db.QueryRow(`SELECT SUM(LENGTH(data)) FROM prof_blocks`).Scan(&blocks); err != nil {
		t.Fatal(err)
	}
	perRow, share := float64(stored)/float64(rows), float64(stored)/float64(raw)
	t.Logf("an hour of 10 s scrapes of %d types: %d sample rows, %d raw pprof bytes, %d stored (%d in blocks, %.2f bytes per row; %d in symbols): %.2f bytes per row, %.2f%% of raw",
		len(scrapedTypes), rows, raw, stored, blocks, float64(blocks)/float64(rows), stored-blocks, perRow, 100*share)
	if stored == 0 || share >= 1 {
		t.Errorf("stored %d bytes for %d raw", stored, raw)
	}
}

func BenchmarkProfileSeriesSize(b *testing.B) {
	for b.Loop() {
		s, _ := openTestSQLite(b)
		rows, raw := storeHour(b, s)
		stored, err := s.storedBytes(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(stored)/float64(rows), "bytes/row")
		b.ReportMetric(100*float64(stored)/float64(raw), "%raw")
	}
}
