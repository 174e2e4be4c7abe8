package store

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestRecordedScrapes checks, on both engines and on committed real
// scrapes of CPU, heap and goroutines, that what Append records gives
// what decoding the blocks gives, the same numbers exactly: the gauges
// per step at every bucket width (and at steps no bucket fits), the
// processes' spans with a restart in the range, and the targets' list;
// that they read a row per series and step rather than every block; that
// compaction and rollups leave them as they were (a merged window still
// counts its scrapes) and deletion moves them on; and that a store made
// before the records existed opens, answers the same by decoding, and
// records what is stored after.
func TestRecordedScrapes(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			s, _ := e.open(t)
			testRecordedScrapes(t, s)
		})
		t.Run(e.name+"/stored before the records", func(t *testing.T) {
			s, where := e.open(t)
			testUnrecordedStore(t, s, where)
		})
	}
}

// gaugeTypes are the types with a gauge.
var gaugeTypes = []string{profseries.CPU, profseries.Heap, profseries.Goroutine}

// appendRounds stores rounds scrapes 30 s apart from start of every gauge
// type by both targets, webTarget's from a second process from restart
// on; the scrapes of a round are stored at once, as a scraper does.
func appendRounds(t *testing.T, s *DB, start time.Time, rounds, restart int) time.Time {
	t.Helper()
	ctx := context.Background()
	profiles := map[string][]*profile.Profile{}
	for _, typ := range gaugeTypes {
		profiles[typ] = leftpadProfiles(t, typ)
	}
	for i := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, len(gaugeTypes)*2)
		for _, typ := range gaugeTypes {
			ps := profiles[typ]
			for j, target := range []profseries.Labels{apiTarget, webTarget} {
				sc := scrapeAt(target, typ, ps[(i+j)%len(ps)], start.Add(time.Duration(i)*30*time.Second+time.Duration(j)*time.Second))
				if j == 1 && i >= restart {
					sc.Process.Generation = 2
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- s.Append(ctx, sc)
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return start.Add(time.Duration(rounds) * 30 * time.Second)
}

// decodedGauges is what decoding the blocks gives.
func decodedGauges(t *testing.T, s *DB, g profseries.Gauge, sel profseries.Selector, from, to time.Time, step time.Duration) []profseries.GaugePoint {
	t.Helper()
	ws, err := s.Windows(context.Background(), profseries.Query{Type: g.Type, Selector: sel, From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	return profseries.GaugeSeries(ws, g, step)
}

// checkGaugesByTarget checks GaugeSeriesBy, grouping by target, against
// the windows ws of the range, decoded and grouped the same way.
func checkGaugesByTarget(t *testing.T, s *DB, g profseries.Gauge, sel profseries.Selector, from, to time.Time, step time.Duration, ws []profseries.Window) {
	t.Helper()
	checkGaugesBy(t, s, g, sel, from, to, step, ws, "target", func(ls profseries.Labels) string { return ls.String() })
	if sel == nil {
		checkGaugesBy(t, s, g, sel, from, to, step, ws, "everything", func(profseries.Labels) string { return "" })
	}
}

// checkGaugesBy checks GaugeSeriesBy, grouping by group (named name),
// against the windows ws of the range, decoded and grouped the same way.
func checkGaugesBy(t *testing.T, s *DB, g profseries.Gauge, sel profseries.Selector, from, to time.Time, step time.Duration, ws []profseries.Window, name string, group func(profseries.Labels) string) {
	t.Helper()
	got, err := s.GaugeSeriesBy(context.Background(), g, sel, from, to, step, group)
	if err != nil {
		t.Fatal(err)
	}
	byGroup := map[string][]profseries.Window{}
	for _, w := range ws {
		k := group(w.Processes[0].Target)
		byGroup[k] = append(byGroup[k], w)
	}
	want := map[string][]profseries.GaugePoint{}
	for k, tw := range byGroup {
		if pts := profseries.GaugeSeries(tw, g, step); len(pts) > 0 {
			want[k] = pts
		}
	}
	if len(want) == 0 || (sel == nil && name == "target" && len(want) < 2) || !reflect.DeepEqual(got, want) {
		t.Errorf("%s per %v by %s: got\n%+v\nwant, decoded (%d groups),\n%+v", g.Name, step, name, got, len(want), want)
	}
}

// checkEdges checks BlockEdges against the starts of the first and last
// decoded windows of each series, and that it reads a row per series.
func checkEdges(t *testing.T, s *DB, q profseries.Query) {
	t.Helper()
	ws, err := s.Windows(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]time.Time{}
	for _, w := range ws {
		k := w.Processes[0].Target.String()
		e, ok := want[k]
		if !ok {
			e[0] = w.Start
		}
		e[1] = w.Start
		want[k] = e
	}
	var edges []profseries.SeriesEdges
	read := rowsReadBy(s, func() { edges, err = s.BlockEdges(context.Background(), q) })
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]time.Time{}
	for _, e := range edges {
		got[e.Target.String()] = [2]time.Time{e.First, e.Last}
	}
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("%s from %v to %v: block edges\n%v\nwant, decoded,\n%v", q.Type, q.From, q.To, got, want)
	}
	if limit := int64(len(edges)) + 3; read > limit {
		t.Errorf("block edges read %d rows for %d series, want at most %d", read, len(edges), limit)
	}
	// The first and the last snapshots merged at once are those merged
	// one by one; so are snapshots at different instants, the first,
	// second or third of each series (read at once, the blocks of one
	// series after its instant are those before another's).
	starts := map[string][]time.Time{}
	for _, w := range ws {
		k := w.Processes[0].Target.String()
		if n := len(starts[k]); n == 0 || !starts[k][n-1].Equal(w.Start) {
			starts[k] = append(starts[k], w.Start)
		}
	}
	for i, which := range []string{"first", "last", "staggered"} {
		var points []profseries.SeriesInstant
		var each []*profile.Profile
		for j, e := range edges {
			at := [3]time.Time{e.First, e.Last, e.First}[i]
			if st := starts[e.Target.String()]; i == 2 {
				at = st[min(j%3, len(st)-1)]
			}
			points = append(points, profseries.SeriesInstant{Target: e.Target, At: at})
			p, err := s.MergedProfile(context.Background(), profseries.Query{Type: q.Type, Selector: profseries.Exact(e.Target), From: at, To: at.Add(time.Nanosecond)})
			if err != nil {
				t.Fatal(err)
			}
			each = append(each, p)
		}
		merged, err := s.MergedAt(context.Background(), q.Type, points)
		if err != nil {
			t.Fatal(err)
		}
		oneByOne, err := profile.Merge(each)
		if err != nil {
			t.Fatal(err)
		}
		if !equalSums(stackSums(merged), stackSums(oneByOne)) || merged.DurationNanos != oneByOne.DurationNanos {
			t.Errorf("%s: the %s snapshots of %d series merged at once differ from their merge one by one", q.Type, which, len(points))
		}
	}
}

// decodedSpans is the spans of the processes of the decoded blocks.
func decodedSpans(t *testing.T, s *DB, q profseries.Query) []profseries.ProcessSpan {
	t.Helper()
	ws, err := s.Windows(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*profseries.ProcessSpan{}
	var out []*profseries.ProcessSpan
	for _, w := range ws {
		tp := w.Processes[0]
		k := tp.Target.String() + "\x00" + tp.Process.BuildID + "\x00" + time.Duration(tp.Process.Generation).String()
		sp := byKey[k]
		if sp == nil {
			sp = &profseries.ProcessSpan{Target: tp.Target, Process: tp.Process, First: w.Start, Last: w.End}
			byKey[k] = sp
			out = append(out, sp)
		}
		if w.Start.Before(sp.First) {
			sp.First = w.Start
		}
		if w.End.After(sp.Last) {
			sp.Last = w.End
		}
	}
	var spans []profseries.ProcessSpan
	for _, sp := range out {
		spans = append(spans, *sp)
	}
	sortSpans(spans)
	return spans
}

func sortSpans(spans []profseries.ProcessSpan) {
	slices.SortFunc(spans, func(a, b profseries.ProcessSpan) int {
		if c := strings.Compare(a.Target.String(), b.Target.String()); c != 0 {
			return c
		}
		return int(a.Process.Generation - b.Process.Generation)
	})
}

// aggregatedTargets is ProfileTargets as an aggregate over every block.
func aggregatedTargets(t *testing.T, s *DB) []ProfileTarget {
	t.Helper()
	var out []ProfileTarget
	// A series' bytes are its blocks' and its packs'.
	q := s.lengthFn(`SELECT s.labels, s.type, MIN(b.start_time), MAX(b.end_time), SUM(CASE WHEN b.resolution >= 0 THEN 1 ELSE 0 END),
		SUM(LENGTH(b.data)) + COALESCE((SELECT SUM(LENGTH(p.data)) FROM prof_packs p WHERE p.series_id = s.id), 0)
		FROM prof_series s JOIN prof_blocks b ON b.series_id = s.id GROUP BY s.id, s.labels, s.type ORDER BY s.labels, s.type`)
	err := s.b.each(context.Background(), q, nil, func(rows *sql.Rows) error {
		var key string
		var pt ProfileTarget
		var first, last int64
		if err := rows.Scan(&key, &pt.Type, &first, &last, &pt.Scrapes, &pt.Bytes); err != nil {
			return err
		}
		ls, err := parseLabelsKey(key)
		pt.Labels, pt.First, pt.Last = ls, fromNanos(first), fromNanos(last)
		out = append(out, pt)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkTargets(t *testing.T, s *DB, when string) {
	t.Helper()
	var got []ProfileTarget
	var err error
	read := rowsReadBy(s, func() { got, err = s.ProfileTargets(context.Background(), "", nil) })
	if err != nil {
		t.Fatal(err)
	}
	if want := aggregatedTargets(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ProfileTargets\n%+v\nwant, as the blocks aggregate,\n%+v", when, got, want)
	}
	if read != int64(len(got)) {
		t.Errorf("%s: ProfileTargets read %d rows for %d series", when, read, len(got))
	}
}

var recordedSteps = []time.Duration{10 * time.Second, 40 * time.Second, time.Minute, 2 * time.Minute, 20 * time.Minute, time.Hour}

func testRecordedScrapes(t *testing.T, s *DB) {
	ctx := context.Background()
	const rounds = 280 // 2 h 20 min
	end := appendRounds(t, s, profEpoch, rounds, rounds/2)
	all := profseries.Selector(nil)
	web := profseries.Exact(webTarget)
	ranges := []struct {
		name     string
		from, to time.Time
		sel      profseries.Selector
	}{
		{"cut minutes and hours", profEpoch.Add(17*time.Minute + 25*time.Second), profEpoch.Add(2*time.Hour + 3*time.Minute + 5*time.Second), all},
		{"whole hours", profEpoch, profEpoch.Add(2 * time.Hour), all},
		{"cut hours", profEpoch.Add(17 * time.Minute), profEpoch.Add(2*time.Hour + 3*time.Minute), all},
		{"within a minute", profEpoch.Add(65*time.Minute + 5*time.Second), profEpoch.Add(65*time.Minute + 50*time.Second), all},
		{"one target, every scrape", profEpoch.Add(-time.Hour), end.Add(time.Hour), web},
	}
	type answer struct {
		points []profseries.GaugePoint
		spans  []profseries.ProcessSpan
	}
	before := map[string]answer{}
	for _, r := range ranges {
		for _, g := range profseries.Gauges {
			// The blocks are decoded once per range and gauge; each
			// step's points are then what GaugeSeries makes of them.
			ws, err := s.Windows(ctx, profseries.Query{Type: g.Type, Selector: r.sel, From: r.from, To: r.to})
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range recordedSteps {
				var got []profseries.GaugePoint
				var err error
				read := rowsReadBy(s, func() { got, err = s.GaugeSeries(ctx, g, r.sel, r.from, r.to, step) })
				if err != nil {
					t.Fatal(err)
				}
				want := profseries.GaugeSeries(ws, g, step)
				if len(want) == 0 || !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s per %v: recorded\n%+v\nwant, as decoded (%d points),\n%+v", r.name, g.Name, step, got, len(want), want)
				}
				// The series of the type added up in each read (their
				// processes too): a row per bucket of the width the
				// step fits, and at each edge the narrower buckets up
				// to it (at most five of ten minutes and nine of a
				// minute) and scrapes.
				w := gaugeWidth(step)
				buckets := int64(r.to.Sub(r.from))/max(w, int64(30*time.Second)) + 1
				edges := int64(2 * 4)
				switch {
				case w == gaugeHour:
					edges += 2 * (5 + 9)
				case w == gaugeTenMinutes:
					edges += 2 * 9
				case w == gaugeScrape:
					edges += int64(r.to.Sub(r.from)/time.Minute) + 2
				}
				bound := 2 + 1 + buckets + edges
				if read > bound {
					t.Errorf("%s, %s per %v: read %d rows, want at most %d (series × points)", r.name, g.Name, step, read, bound)
				}
				before[r.name+g.Name+step.String()] = answer{points: got}
				checkGaugesByTarget(t, s, g, r.sel, r.from, r.to, step, ws)
			}
		}
		q := profseries.Query{Type: profseries.CPU, Selector: r.sel, From: r.from, To: r.to}
		var spans []profseries.ProcessSpan
		var err error
		read := rowsReadBy(s, func() { spans, err = s.ProcessSpans(ctx, q) })
		if err != nil {
			t.Fatal(err)
		}
		sortSpans(spans)
		if want := decodedSpans(t, s, q); !reflect.DeepEqual(spans, want) {
			t.Errorf("%s: process spans\n%+v\nwant\n%+v", r.name, spans, want)
		}
		if hours := int64(r.to.Sub(r.from)/time.Hour) + 1; read > 3+3*(hours+2*60+2*4)+10 {
			t.Errorf("%s: process spans read %d rows, want a row per series, process and hour (and edges)", r.name, read)
		}
		before[r.name] = answer{spans: spans}
		checkEdges(t, s, profseries.Query{Type: profseries.Goroutine, Selector: r.sel, From: r.from, To: r.to})
	}
	checkTargets(t, s, "as stored")

	// Whole hours: a row per series, process and hour, where decoding
	// reads every block.
	blocks := rowsReadBy(s, func() {
		decodedGauges(t, s, profseries.HeapInUse, all, profEpoch, profEpoch.Add(2*time.Hour), time.Hour)
	})
	records := rowsReadBy(s, func() {
		if _, err := s.GaugeSeries(ctx, profseries.HeapInUse, all, profEpoch, profEpoch.Add(2*time.Hour), time.Hour); err != nil {
			t.Fatal(err)
		}
	})
	if records*10 > blocks {
		t.Errorf("heap per hour over the whole range: %d rows read from records, %d blocks decoded: want far fewer", records, blocks)
	}

	// Scrapes older than an hour compacted into minutes, the ended hours
	// rolled up: the records are the scrapes as stored, on minute
	// boundaries.
	s.Retention = Retention{Raw: time.Hour, Minute: 24 * time.Hour, TenMinutes: 48 * time.Hour}
	if rep, err := s.ApplyRetention(ctx, end.Add(time.Minute)); err != nil || rep.Compacted == 0 || rep.RolledUp == 0 {
		t.Fatalf("retention: %+v, %v; want scrapes compacted and hours rolled up", rep, err)
	}
	checkTargets(t, s, "after compaction and rollups")
	aligned := []struct {
		name     string
		from, to time.Time
	}{{"whole hours", profEpoch, profEpoch.Add(2 * time.Hour)}, {"cut hours", profEpoch.Add(17 * time.Minute), profEpoch.Add(2*time.Hour + 3*time.Minute)}}
	for _, r := range aligned {
		checkEdges(t, s, profseries.Query{Type: profseries.Goroutine, From: r.from, To: r.to})
		for _, g := range profseries.Gauges {
			for _, step := range []time.Duration{time.Minute, 20 * time.Minute, time.Hour} {
				got, err := s.GaugeSeries(ctx, g, all, r.from, r.to, step)
				if err != nil {
					t.Fatal(err)
				}
				if want := before[r.name+g.Name+step.String()].points; len(want) == 0 || !reflect.DeepEqual(got, want) {
					t.Errorf("after compaction, %s, %s per %v: got\n%+v\nwant, as before,\n%+v", r.name, g.Name, step, got, want)
				}
				if g.Rate {
					// A rate is the same whichever way the scrapes are
					// merged: decoding the merged windows agrees.
					dec := decodedGauges(t, s, g, all, r.from, r.to, step)
					if len(dec) != len(got) {
						t.Fatalf("after compaction, %s per %v: %d points, decoding %d", g.Name, step, len(got), len(dec))
					}
					for i := range dec {
						if dec[i].Value != got[i].Value || !dec[i].Start.Equal(got[i].Start) {
							t.Errorf("after compaction, %s per %v, point %d: %v, decoding %v", g.Name, step, i, got[i], dec[i])
						}
					}
				}
			}
		}
	}
	// Steps under a minute read the compacted minutes as minutes.
	got, err := s.GaugeSeries(ctx, profseries.CPUCores, all, profEpoch, profEpoch.Add(30*time.Minute), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 30 || got[0].Scrapes != 4 || got[0].Start != profEpoch {
		t.Errorf("compacted minutes at a step of 10 s: want 30 points of 4 scrapes, on each minute; got %d: %+v", len(got), got)
	}
	spans, err := s.ProcessSpans(ctx, profseries.Query{Type: profseries.CPU, From: profEpoch, To: profEpoch.Add(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	sortSpans(spans)
	if want := before["whole hours"].spans; !reflect.DeepEqual(spans, want) {
		t.Errorf("after compaction, process spans\n%+v\nwant, as before,\n%+v", spans, want)
	}

	// Deleting the first hour and a half: the records of what is left
	// are as before from the next hour on, and the half hour is decoded.
	s.Retention = Retention{Raw: time.Hour, Minute: 24 * time.Hour, TenMinutes: time.Hour}
	cut := profEpoch.Add(90 * time.Minute)
	if rep, err := s.ApplyRetention(ctx, cut.Add(time.Hour)); err != nil || rep.Deleted == 0 {
		t.Fatalf("retention: %+v, %v; want blocks deleted", rep, err)
	}
	checkTargets(t, s, "after deletion")
	for _, g := range profseries.Gauges {
		got, err := s.GaugeSeries(ctx, g, all, profEpoch.Add(2*time.Hour), end, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		want := decodedGauges(t, s, g, all, profEpoch.Add(2*time.Hour), end, time.Minute)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("after deletion, %s over the last, raw minutes: got\n%+v\nwant\n%+v", g.Name, got, want)
		}
		got, err = s.GaugeSeries(ctx, g, all, cut, profEpoch.Add(2*time.Hour), 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if want := decodedGauges(t, s, g, all, cut, profEpoch.Add(2*time.Hour), 10*time.Minute); len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("after deletion, %s over the half hour left of the hour cut: got\n%+v\nwant, decoded,\n%+v", g.Name, got, want)
		}
	}
}

// testUnrecordedStore makes s, once it holds scrapes, a store as perfscope
// left it before migration10, opens it again, and checks that it answers
// as decoding does: by decoding until the hour after its newest scrape,
// from the records after.
func testUnrecordedStore(t *testing.T, s *DB, where string) {
	ctx := context.Background()
	mid := appendRounds(t, s, profEpoch, 150, 100)
	for _, stmt := range []string{
		`DROP TABLE prof_gauges`,
		`ALTER TABLE prof_series DROP COLUMN first_time`,
		`ALTER TABLE prof_series DROP COLUMN last_time`,
		`ALTER TABLE prof_series DROP COLUMN scrapes`,
		`ALTER TABLE prof_series DROP COLUMN blocks`,
		`ALTER TABLE prof_series DROP COLUMN bytes`,
		`ALTER TABLE prof_series DROP COLUMN recorded_from`,
		// The migrations after 10 go too; the stacks' callers (migration
		// 11), which the scrapes just stored refer to, are set aside and
		// put back once the migrations have run again; the snapshots'
		// levels (migration 12), the packs (13), the rollups' counts
		// (14), where ten-minute chains start (15), where compaction
		// reached (16), the judged deploys (18), the rollups' index
		// (19) and the newest scrape and records' revision (20) are
		// dropped; the buckets' first levels (17) went with prof_gauges.
		`ALTER TABLE prof_callers RENAME TO prof_callers_kept`,
		`ALTER TABLE prof_blocks DROP COLUMN levels`,
		`DROP TABLE prof_packs`,          // migration 13; nothing is packed yet
		`DROP INDEX prof_blocks_rollups`, // migration 19
		`ALTER TABLE prof_blocks DROP COLUMN scrapes`,
		`DELETE FROM prof_meta WHERE name = 'chains_from'`,                    // migration 15
		`DELETE FROM prof_meta WHERE name = 'compacted_to'`,                   // migration 16
		`DROP TABLE prof_deploys`,                                             // migration 18
		`DELETE FROM prof_meta WHERE name IN ('newest_start', 'records_rev')`, // migration 20
		`DELETE FROM schema_version WHERE version >= 10`,
	} {
		if _, err := s.b.db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	old, err := Open(ctx, where)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { old.Close() })
	for _, stmt := range []string{`INSERT INTO prof_callers SELECT * FROM prof_callers_kept`, `DROP TABLE prof_callers_kept`} {
		if _, err := old.b.db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	var recordedFrom int64
	if err := old.b.db.QueryRowContext(ctx, `SELECT MIN(recorded_from) FROM prof_series`).Scan(&recordedFrom); err != nil {
		t.Fatal(err)
	}
	if want := profEpoch.Add(2 * time.Hour); recordedFrom != nanos(want) {
		t.Errorf("the series stored before are recorded from %v, want %v (the hour after their newest scrape)", fromNanos(recordedFrom), want)
	}
	checkTargets(t, old, "after the migration")
	check := func(when string, to time.Time) {
		t.Helper()
		for _, g := range profseries.Gauges {
			ws, err := old.Windows(ctx, profseries.Query{Type: g.Type, From: profEpoch.Add(5 * time.Second), To: to})
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range recordedSteps {
				got, err := old.GaugeSeries(ctx, g, nil, profEpoch.Add(5*time.Second), to, step)
				if err != nil {
					t.Fatal(err)
				}
				if want := profseries.GaugeSeries(ws, g, step); len(want) == 0 || !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s per %v: got\n%+v\nwant, decoded,\n%+v", when, g.Name, step, got, want)
				}
				checkGaugesByTarget(t, old, g, nil, profEpoch.Add(5*time.Second), to, step, ws)
			}
		}
		q := profseries.Query{Type: profseries.CPU, From: profEpoch.Add(5 * time.Second), To: to}
		spans, err := old.ProcessSpans(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sortSpans(spans)
		if want := decodedSpans(t, old, q); !reflect.DeepEqual(spans, want) {
			t.Errorf("%s: process spans\n%+v\nwant\n%+v", when, spans, want)
		}
	}
	check("stored before, decoded", mid)
	// Scrapes stored after, until after the hour recorded from.
	end := appendRounds(t, old, mid, 150, 0)
	checkTargets(t, old, "stored after the migration")
	check("decoded, then recorded", end)
	late := rowsReadBy(old, func() {
		if _, err := old.GaugeSeries(ctx, profseries.HeapInUse, nil, profEpoch.Add(2*time.Hour), end, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
	})
	if blocks := rowsReadBy(old, func() {
		decodedGauges(t, old, profseries.HeapInUse, nil, profEpoch.Add(2*time.Hour), end, 10*time.Minute)
	}); late*4 > blocks {
		t.Errorf("the ten minutes recorded read %d rows, decoding them %d: want the records", late, blocks)
	}
}

// TestCompactedTo checks, on both engines, the time compaction has
// reached (prof_meta's compacted_to): every window compaction made starts
// before it, a store made before has it from its windows (migration 16),
// and no read past it looks for windows.
func TestCompactedTo(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			s, _ := e.open(t)
			ctx := context.Background()
			end := appendRounds(t, s, profEpoch, 240, 240) // 2 hours
			reached := func() int64 {
				t.Helper()
				var v int64
				if err := s.b.db.QueryRowContext(ctx, `SELECT value FROM prof_meta WHERE name = 'compacted_to'`).Scan(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			if v := reached(); v != 0 {
				t.Errorf("nothing compacted yet, compaction reached %v", fromNanos(v))
			}
			s.Retention = Retention{Raw: time.Hour, Minute: 24 * time.Hour, TenMinutes: 48 * time.Hour}
			if _, err := s.ApplyRetention(ctx, end.Add(30*time.Minute)); err != nil {
				t.Fatal(err)
			}
			var newest int64
			if err := s.b.db.QueryRowContext(ctx, s.b.q(`SELECT MAX(start_time) FROM prof_blocks WHERE resolution = ?`), resolutionMinute).Scan(&newest); err != nil {
				t.Fatal(err)
			}
			v := reached()
			if newest >= v || v > nanos(end) {
				t.Errorf("compaction reached %v, its newest window starts at %v", fromNanos(v), fromNanos(newest))
			}
			_, ids, _, err := s.recordedSeries(ctx, profseries.Query{Type: profseries.CPU, From: profEpoch, To: end})
			if err != nil {
				t.Fatal(err)
			}
			before := s.b.rowsRead.Load()
			if c, err := s.compactedIn(ctx, ids, v, nanos(end)); err != nil || c {
				t.Errorf("past where compaction reached: compacted %v (%v)", c, err)
			}
			if n := s.b.rowsRead.Load() - before; n != 1 {
				t.Errorf("past where compaction reached, %d rows read to know nothing is compacted, want 1", n)
			}
			if c, err := s.compactedIn(ctx, ids, newest, nanos(end)); err != nil || !c {
				t.Errorf("from the newest window: compacted %v (%v), want true", c, err)
			}
			// Migration 16 finds the same from the windows.
			for _, stmt := range []string{`DELETE FROM prof_meta WHERE name = 'compacted_to'`, migration16} {
				if _, err := s.b.db.ExecContext(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			if got := reached(); got != newest+1 {
				t.Errorf("migration 16: compaction reached %v, want just after the newest window, %v", fromNanos(got), fromNanos(newest+1))
			}
		})
	}
}

// TestGaugesGrouped checks GaugeSeriesBy's two ways of adding series up
// against decoding: groups of a few series (a target's versions) read a
// row a series and step and added up in Go, a group of many added up by
// the query.
func TestGaugesGrouped(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			db, _ := e.open(t)
			cpu := leftpadProfiles(t, profseries.CPU)
			var targets []profseries.Labels
			for i := range fewSeries + 2 {
				for _, v := range []string{"v1", "v2"} {
					targets = append(targets, profseries.NewLabels(map[string]string{"job": "leftpad", "instance": fmt.Sprint(i), "version": v}))
				}
			}
			at := func(d time.Duration) time.Time { return profEpoch.Add(d) }
			for t0 := at(0); t0.Before(at(30 * time.Minute)); t0 = t0.Add(30 * time.Second) {
				for i, target := range targets {
					// v1 before the deploy at 15 minutes, v2 after, and
					// both for a minute around it.
					v2 := i%2 == 1
					if (v2 && t0.Before(at(14*time.Minute))) || (!v2 && !t0.Before(at(16*time.Minute))) {
						continue
					}
					appendReplayed(t, db, target, profseries.CPU, cpu, t0.Add(time.Duration(i)*time.Second))
				}
			}
			g, _ := profseries.GaugeOf(profseries.CPU)
			from, to := at(0), at(30*time.Minute)
			ws, err := db.Windows(context.Background(), profseries.Query{Type: profseries.CPU, From: from, To: to})
			if err != nil {
				t.Fatal(err)
			}
			for _, by := range []struct {
				name  string
				group func(profseries.Labels) string
			}{
				{"instance", func(ls profseries.Labels) string { return ls.Get("instance") }},
				{"job", func(ls profseries.Labels) string { return ls.Get("job") }},
			} {
				for _, step := range []time.Duration{time.Minute, 10 * time.Minute} {
					checkGaugesBy(t, db, g, nil, from, to, step, ws, by.name, by.group)
				}
			}
		})
	}
}
