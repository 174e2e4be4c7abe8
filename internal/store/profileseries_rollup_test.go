package store

import (
	"context"
	"database/sql"
	"reflect"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
)

// TestMergeAsRead checks, on both engines, that merging blocks as they
// are read, with hourly rollups standing in for whole hours, gives what
// merging the windows Windows decodes gives, on committed real scrapes:
// over ranges that cut hours and ranges of whole hours, after compaction,
// with a restart in the range (said in the result, for that target only),
// and after a scrape stored late into an hour already rolled up (the
// rollup is passed over until made again).
func TestMergeAsRead(t *testing.T) {
	sq, _ := openTestSQLite(t)
	pg, _ := openTestPostgres(t)
	for _, e := range []struct {
		name string
		s    *DB
	}{{"SQLite", sq}, {"PostgreSQL", pg}} {
		t.Run(e.name, func(t *testing.T) { testMergeAsRead(t, e.s) })
	}
}

func testMergeAsRead(t *testing.T, s *DB) {
	ctx := context.Background()
	types := []string{profseries.CPU, profseries.Heap, profseries.Allocs}
	const rounds = 105 // 3.5 h of scrapes every 2 minutes
	step := 2 * time.Minute
	for _, typ := range types {
		ps := leftpadProfiles(t, typ)
		for i := range rounds {
			for j, target := range []profseries.Labels{apiTarget, webTarget} {
				sc := scrapeAt(target, typ, ps[(i+j)%len(ps)], profEpoch.Add(time.Duration(i)*step+time.Duration(j)*time.Second))
				if target.Get("team") == "web" && i >= rounds/2 {
					sc.Process.Generation = 2 // restarted half way
				}
				if err := s.Append(ctx, sc); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	end := profEpoch.Add(rounds * step)
	// Scrapes older than an hour compacted into minutes, every ended
	// hour rolled up.
	s.Retention = Retention{Raw: time.Hour, Minute: 24 * time.Hour, TenMinutes: 48 * time.Hour}
	rep, err := s.ApplyRetention(ctx, end.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.RolledUp != 2*len(types)*4+len(types) { // 4 hours each, and the restarted hour twice
		t.Errorf("%d rollups made, want one per series, hour and process: %d", rep.RolledUp, 2*len(types)*4+len(types))
	}

	all := profseries.Selector(nil)
	web, err := profseries.ParseSelector(`{team="web"}`)
	if err != nil {
		t.Fatal(err)
	}
	ranges := []struct {
		name     string
		from, to time.Time
		sel      profseries.Selector
	}{
		{"cut hours", profEpoch.Add(17 * time.Minute), profEpoch.Add(3*time.Hour + 5*time.Minute), all},
		{"whole hours", profEpoch, profEpoch.Add(3 * time.Hour), all},
		{"within an hour", profEpoch.Add(65 * time.Minute), profEpoch.Add(100 * time.Minute), all},
		{"one target", profEpoch, end, web},
	}
	check := func(t *testing.T, rangeName string, q profseries.Query) (rowsRead int64) {
		t.Helper()
		want, _ := windowsMerged(t, s, q)
		before := s.b.rowsRead.Load()
		got, err := s.mergeQuery(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		rowsRead = s.b.rowsRead.Load() - before
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: merged as read: %s to %s, %d stacks, processes %v; merged from windows: %s to %s, %d stacks, processes %v",
				q.Type, rangeName, got.Start, got.End, len(got.Samples), got.Processes, want.Start, want.End, len(want.Samples), want.Processes)
		}
		return rowsRead
	}
	for _, typ := range types {
		for _, r := range ranges {
			check(t, r.name, profseries.Query{Type: typ, Selector: r.sel, From: r.from, To: r.to})
		}
	}

	// Three whole hours of two targets are read as rollups: a few
	// rows, not the 90 windows of the blocks.
	q := profseries.Query{Type: profseries.CPU, From: profEpoch, To: profEpoch.Add(3 * time.Hour)}
	if n := check(t, "whole hours", q); n > 30 {
		t.Errorf("merging 3 whole hours of 2 targets read %d rows, want the rollups'", n)
	}
	m, err := s.Merge(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Restarted) != 1 || !reflect.DeepEqual(m.Restarted[0][0].Target, webTarget) || len(m.Restarted[0]) != 2 || len(m.Processes) != 3 {
		t.Errorf("restarts: %+v of processes %+v, want the web target's two processes", m.Restarted, m.Processes)
	}
	if n := len(m.Profile.Comments); n == 0 || m.Profile.Comments[n-1] != profseries.ProcessNote(m.Restarted[0]) {
		t.Errorf("the merged profile's comments %q do not say the web target restarted", m.Profile.Comments)
	}
	if m, err := s.Merge(ctx, profseries.Query{Type: profseries.CPU, Selector: web, From: profEpoch, To: profEpoch.Add(time.Hour)}); err != nil || len(m.Restarted) != 0 {
		t.Errorf("a range before the restart: restarts %+v (%v), want none", m, err)
	}

	// A range that cuts hours reads the ten-minute rollups of its edges
	// where whole ten minutes fit, and their records: 79 rows, where
	// the 47 scrapes of each target's edges made it 109.
	if rep.RolledUpTen != 2*len(types)*21+len(types) { // 21 buckets each, and the restart's twice
		t.Errorf("%d ten-minute rollups made, want one per series, ten minutes and process: %d", rep.RolledUpTen, 2*len(types)*21+len(types))
	}
	cut := profseries.Query{Type: profseries.CPU, From: profEpoch.Add(13 * time.Minute), To: profEpoch.Add(2*time.Hour + 27*time.Minute)}
	if n := check(t, "cut hours, not merged before", cut); n > 90 {
		t.Errorf("merging 2 h 14 min of 2 targets read %d rows, want the rollups' and a few scrapes'", n)
	}

	// One function's series at steps of ten minutes and of an hour
	// merges each step as read, rollups standing in: the same points as
	// from every scrape, counts of scrapes included.
	top, err := s.Top(ctx, profseries.Query{Type: profseries.CPU, From: profEpoch, To: end}, profiles.ByFlat, 1)
	if err != nil {
		t.Fatal(err)
	}
	fn := top.Rows[0].Function
	for _, r := range ranges {
		for _, step := range []time.Duration{10 * time.Minute, time.Hour} {
			fq := profseries.Query{Type: profseries.CPU, Selector: r.sel, From: r.from, To: r.to}
			want, err := s.functionSeriesOfScrapes(ctx, fq, fn, step)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.FunctionSeries(ctx, fq, fn, step)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s of %s per %v: merged as read %+v, from every scrape %+v", fn, r.name, step, got, want)
			}
		}
	}

	// A scrape stored late into the first hour: the hour's rollup is out
	// of date, so the merge reads the hour's blocks, until retention
	// makes the rollup again.
	late := scrapeAt(apiTarget, profseries.CPU, leftpadProfiles(t, profseries.CPU)[0], profEpoch.Add(30*time.Minute+5*time.Second))
	if err := s.Append(ctx, late); err != nil {
		t.Fatal(err)
	}
	if n := check(t, "whole hours, a late scrape", q); n < 30 {
		t.Errorf("after a late scrape, the merge read %d rows: it used the rollup out of date", n)
	}
	// Retention makes the hour's rollup and its ten minutes' again, and
	// no other.
	if rep, err := s.ApplyRetention(ctx, end.Add(time.Hour)); err != nil || rep.RolledUp != 1 || rep.RolledUpTen != 1 {
		t.Errorf("rolled up again: %d hourly and %d ten-minute rollups made (%v), want 1 and 1", rep.RolledUp, rep.RolledUpTen, err)
	}
	if n := check(t, "whole hours, rolled up again", q); n > 30 {
		t.Errorf("after retention, the merge read %d rows, want the rollups'", n)
	}
	// RollUp, what a scraper runs between passes of retention, makes
	// again the rollups of a scrape stored late into the last hour.
	late = scrapeAt(apiTarget, profseries.CPU, leftpadProfiles(t, profseries.CPU)[2], end.Add(-5*time.Minute+3*time.Second))
	if err := s.Append(ctx, late); err != nil {
		t.Fatal(err)
	}
	// Ten minutes after the end, the last hour is not over: its ten
	// minutes are made again.
	if rep, err := s.RollUp(ctx, end.Add(10*time.Minute)); err != nil || rep.RolledUp != 0 || rep.RolledUpTen != 1 {
		t.Errorf("RollUp after a late scrape: %d hourly and %d ten-minute rollups made (%v), want none and 1", rep.RolledUp, rep.RolledUpTen, err)
	}
	check(t, "the last hour, rolled up again", profseries.Query{Type: profseries.CPU, From: end.Add(-time.Hour), To: end})
	checkSummaries(t, s, "after rollups made again")
	// Rollups made before they recorded their hours' scrapes (store
	// migration 14) are checked against the blocks' sums instead: used
	// while up to date, passed over after a late scrape.
	if _, err := s.b.db.ExecContext(ctx, `UPDATE prof_blocks SET scrapes = NULL WHERE resolution < 0`); err != nil {
		t.Fatal(err)
	}
	noCounts := q // a range not merged before (see merges), over the same blocks
	noCounts.From = q.From.Add(-time.Nanosecond)
	if n := check(t, "whole hours, rollups without counts", noCounts); n > 45 {
		t.Errorf("rollups without counts: the merge read %d rows, want the rollups' and the blocks' sums", n)
	}
	late = scrapeAt(apiTarget, profseries.CPU, leftpadProfiles(t, profseries.CPU)[1], profEpoch.Add(30*time.Minute+25*time.Second))
	if err := s.Append(ctx, late); err != nil {
		t.Fatal(err)
	}
	if n := check(t, "whole hours, rollups without counts, a late scrape", noCounts); n < 60 {
		t.Errorf("rollups without counts, after a late scrape: the merge read %d rows: it used the rollup out of date", n)
	}
	// Ten-minute rollups go once their day is past; the hours' stay.
	if _, err := s.ApplyRetention(ctx, end.Add(27*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var tens, hours int
	if err := s.b.db.QueryRowContext(ctx, s.b.q(`SELECT SUM(CASE WHEN resolution = ? THEN 1 ELSE 0 END), SUM(CASE WHEN resolution = ? THEN 1 ELSE 0 END) FROM prof_blocks`),
		-int64(10*time.Minute), -int64(time.Hour)).Scan(&tens, &hours); err != nil {
		t.Fatal(err)
	}
	if tens != 0 || hours == 0 {
		t.Errorf("a day later: %d ten-minute rollups and %d hourly ones, want none and some", tens, hours)
	}
	check(t, "cut hours, a day later", profseries.Query{Type: profseries.CPU, From: profEpoch.Add(11 * time.Minute), To: profEpoch.Add(2*time.Hour + 49*time.Minute)})
	checkSummaries(t, s, "a day later")
	targets, err := s.ProfileTargets(ctx, profseries.CPU, all)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if want := int64(rounds); tg.Labels.Get("team") == "web" && tg.Scrapes > want {
			t.Errorf("%s: %d scrapes counted, rollups among them", tg.Labels, tg.Scrapes)
		}
	}
}

// checkSummaries checks that the summaries of the series (prof_series)
// are those summarize computes from their blocks.
func checkSummaries(t *testing.T, s *DB, when string) {
	t.Helper()
	ctx := context.Background()
	read := func(q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}) [][6]int64 {
		rows, err := q.QueryContext(ctx, `SELECT id, first_time, last_time, scrapes, blocks, bytes FROM prof_series ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out [][6]int64
		for rows.Next() {
			var r [6]int64
			if err := rows.Scan(&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	kept := read(s.b.db)
	tx, err := s.b.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := s.lock(ctx, tx, true); err != nil {
		t.Fatal(err)
	}
	if err := s.summarize(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if want := read(tx); !reflect.DeepEqual(kept, want) {
		t.Errorf("%s: the series' summaries (id, first, last, scrapes, blocks, bytes)\n%v\nare not their blocks'\n%v", when, kept, want)
	}
}

// windowsMerged is the merge of the windows s holds in q's range, decoded
// one by one: what a merge of q must equal; n counts the windows.
func windowsMerged(t *testing.T, s *DB, q profseries.Query) (w profseries.Window, n int) {
	t.Helper()
	ws, err := s.Windows(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if w, err = profseries.Merge(ws); err != nil {
		t.Fatal(err)
	}
	return w, len(ws)
}
