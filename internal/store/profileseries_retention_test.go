package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// renamed is p with every function of package main renamed for day d:
// each simulated day brings symbols and stacks of its own, which
// collection must remove once no block refers to them.
func renamed(p *profile.Profile, d int) *profile.Profile {
	q := p.Copy()
	for _, f := range q.Function {
		if len(f.Name) > 5 && f.Name[:5] == "main." {
			f.Name = fmt.Sprintf("%s_day%d", f.Name, d)
		}
	}
	return q
}

// TestProfileSeriesMonth: a simulated month of scrapes (times injected)
// stays within retention and the budget, and the store's file stops
// growing once retention deletes as much as arrives.
func TestProfileSeriesMonth(t *testing.T) {
	if testing.Short() {
		t.Skip("stores a month of scrapes; skipped in -short mode")
	}
	s, path := openTestSQLite(t)
	month(t, s, func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		wal, _ := os.Stat(path + "-wal")
		n := fi.Size()
		if wal != nil {
			n += wal.Size()
		}
		return n
	}, 30)
	var check string
	if err := s.b.db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
}

// TestProfileSeriesRetentionPostgres: retention drops whole day
// partitions on PostgreSQL.
func TestProfileSeriesRetentionPostgres(t *testing.T) {
	s, _ := openTestPostgres(t)
	month(t, s, func() int64 { return 0 }, 10)
	days, err := s.partitions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 3 days of ten-minute windows, today's and tomorrow's partitions.
	if len(days) > 5 {
		t.Errorf("%d day partitions left, want at most 5: old ones not dropped", len(days))
	}
}

// month stores days of CPU and allocs scrapes every 10 minutes, applying
// retention every 6 hours, and checks what is kept; size returns the
// store's bytes on disk (0 where the engine does not say).
func month(t *testing.T, s *DB, size func() int64, days int) {
	ctx := context.Background()
	s.Retention = Retention{Raw: 2 * time.Hour, Minute: 24 * time.Hour, TenMinutes: 3 * 24 * time.Hour, Budget: 2 << 20}
	cpu, allocs := leftpadProfiles(t, profseries.CPU), leftpadProfiles(t, profseries.Allocs)
	// Scrapes are 10 minutes apart, not a scraper's 10 seconds: retention
	// and compaction work on windows of minutes and hours, so what is kept
	// is the same, and a month costs a fraction of the appends.
	const every = 10 * time.Minute
	const batch = int(6 * time.Hour / every)
	var sizes []int64
	for d := range days {
		var dayCPU, dayAllocs []*profile.Profile
		for i := range cpu {
			dayCPU = append(dayCPU, renamed(cpu[i], d))
			dayAllocs = append(dayAllocs, renamed(allocs[i], d))
		}
		// Each 6 hours' scrapes are appended at once, as many scrapers'
		// targets do: the store commits them together.
		var wg sync.WaitGroup
		errs := make(chan error, 2*batch)
		for i := range int(24 * time.Hour / every) {
			at := profEpoch.Add(time.Duration(d)*24*time.Hour + time.Duration(i)*every)
			for _, sc := range []*profseries.Scrape{
				scrapeAt(apiTarget, profseries.CPU, dayCPU[i%len(dayCPU)], at),
				scrapeAt(apiTarget, profseries.Allocs, dayAllocs[i%len(dayAllocs)], at),
			} {
				wg.Go(func() { errs <- s.Append(ctx, sc) })
			}
			if (i+1)%batch == 0 {
				wg.Wait()
				for range 2 * batch {
					if err := <-errs; err != nil {
						t.Fatal(err)
					}
				}
				rep, err := s.ApplyRetention(ctx, at.Add(every))
				if err != nil {
					t.Fatal(err)
				}
				if rep.Bytes > s.Retention.Budget {
					t.Fatalf("day %d: %d bytes stored after retention, budget %d", d, rep.Bytes, s.Retention.Budget)
				}
			}
		}
		sizes = append(sizes, size())
		now := profEpoch.Add(time.Duration(d+1) * 24 * time.Hour)
		targets, err := s.ProfileTargets(ctx, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range targets {
			if tg.First.Before(now.Add(-s.Retention.TenMinutes - 6*time.Hour)) {
				t.Errorf("day %d: %s kept from %v, beyond retention", d, tg.Type, tg.First)
			}
		}
		if d == days-1 {
			bytes, _ := s.storedBytes(ctx)
			t.Logf("day %d: %d blocks of %s, %d bytes stored, %d on disk", d, targets[0].Scrapes, targets[0].Type, bytes, size())
		}
	}
	// Old windows are compacted: raw scrapes only for the last 2 hours.
	var raw, old int
	if err := s.b.db.QueryRow(s.b.q(`SELECT COUNT(*) FROM prof_blocks WHERE resolution = 0 AND start_time < ?`),
		nanos(profEpoch.Add(time.Duration(days)*24*time.Hour-3*time.Hour))).Scan(&raw); err != nil || raw != 0 {
		t.Errorf("%d raw scrapes older than 3 hours (%v)", raw, err)
	}
	// The functions of days past retention are collected.
	var fns int
	if err := s.b.db.QueryRow(`SELECT COUNT(*) FROM prof_functions`).Scan(&fns); err != nil {
		t.Fatal(err)
	}
	contents, _ := readSymbols{context.Background(), s.ProfileSeries}.Lookup(profseries.KindFunction, ids(fns*4))
	for _, c := range contents {
		for d := range max(days-6, 0) {
			if mentionsDay(c, d) {
				old++
			}
		}
	}
	if old > 0 {
		t.Errorf("%d functions of days past retention are still stored", old)
	}
	// Over a smaller budget, the oldest hours go first.
	end := profEpoch.Add(time.Duration(days) * 24 * time.Hour)
	s.Retention.Budget = 300 << 10
	rep, err := s.ApplyRetention(ctx, end)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Bytes > s.Retention.Budget || rep.Deleted == 0 {
		t.Errorf("budget %d: %d bytes kept, %d blocks deleted", s.Retention.Budget, rep.Bytes, rep.Deleted)
	}
	if w, err := s.Windows(ctx, profseries.Query{Type: profseries.CPU, From: end.Add(-time.Hour), To: end}); err != nil || len(w) == 0 {
		t.Errorf("the budget dropped the newest hour: %d windows, %v", len(w), err)
	}
	if sizes[len(sizes)-1] > 0 {
		// Retention keeps 3 days: by day 10 the file has the size it keeps.
		if last, mid := sizes[len(sizes)-1], sizes[9]; float64(last) > 1.25*float64(mid) {
			t.Errorf("disk grew from %d bytes on day 10 to %d on day %d", mid, last, len(sizes))
		}
		t.Logf("bytes on disk per day: %v", sizes)
	}
}

func ids(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

// mentionsDay says whether interned content names a function renamed for
// day d (and not for a day whose number starts with d's digits).
func mentionsDay(c []byte, d int) bool {
	tag := []byte(fmt.Sprintf("_day%d", d))
	for i := bytes.Index(c, tag); i >= 0; {
		end := i + len(tag)
		if end == len(c) || c[end] < '0' || c[end] > '9' {
			return true
		}
		j := bytes.Index(c[end:], tag)
		if j < 0 {
			return false
		}
		i = end + j
	}
	return false
}
