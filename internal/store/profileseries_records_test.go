package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestKeptRecords checks that a reader keeps the records of a closed
// range, and reads them again after a late scrape or a deletion changes
// them, while a range still open is read every time: each read through a
// second handle (a server beside the scraper) equals decoding the blocks.
func TestKeptRecords(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			db, where := e.open(t)
			testKeptRecords(t, db, where)
		})
	}
}

func testKeptRecords(t *testing.T, db *DB, where string) {
	ctx := context.Background()
	targets, cpu := leftpadFleet(t, db, profseries.CPU, 2, 3*time.Hour)
	at := func(m time.Duration) time.Time { return profEpoch.Add(m) }
	reader := openReader(t, where)
	sel, err := profseries.ParseSelector(`{job="leftpad"}`)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := profseries.GaugeOf(profseries.CPU)
	if !ok {
		t.Fatal("no CPU gauge")
	}
	stepped := func(when string, from, to time.Time, step time.Duration) ([]profseries.GaugePoint, int64) {
		t.Helper()
		var pts []profseries.GaugePoint
		read := rowsReadBy(reader, func() { pts, err = reader.GaugeSeries(ctx, g, sel, from, to, step) })
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if want := decodedGauges(t, db, g, sel, from, to, step); !reflect.DeepEqual(pts, want) {
			t.Fatalf("%s: the gauges of %s to %s are\n%+v\nwant those of the blocks\n%+v", when, from.Format(time.TimeOnly), to.Format(time.TimeOnly), pts, want)
		}
		return pts, read
	}
	gauges := func(when string, from, to time.Time) ([]profseries.GaugePoint, int64) {
		t.Helper()
		return stepped(when, from, to, time.Hour)
	}

	// Two hours closed: read again, their records are kept (the row of
	// each hour, summed over the series, is not read again). A read of
	// another range first has the reader know the series.
	gauges("known series", at(2*time.Hour), at(3*time.Hour))
	_, first := gauges("first", at(0), at(2*time.Hour))
	if _, again := gauges("again", at(0), at(2*time.Hour)); again+2 > first {
		t.Errorf("a closed range's gauges read %d rows the first time, %d again: want its records kept", first, again)
	}

	// A scrape stored late into the first hour, through the writer: the
	// reader reads the records again.
	if err := db.Append(ctx, scrapeAt(targets[0], profseries.CPU, cpu[0], at(30*time.Minute+5*time.Second))); err != nil {
		t.Fatal(err)
	}
	gauges("after a late scrape", at(0), at(2*time.Hour))

	// The last hour is open (its end is less than lateSlack before the
	// newest scrape): a scrape in order into it shows at once.
	gauges("open", at(2*time.Hour), at(3*time.Hour))
	for _, target := range targets {
		if err := db.Append(ctx, scrapeAt(target, profseries.CPU, cpu[1], at(3*time.Hour-time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	gauges("open, after a scrape in order", at(2*time.Hour), at(3*time.Hour))

	// Steps of ten minutes up to the newest scrape: the range is read in
	// two, the part closed kept. A scrape in order into the open part
	// and a late one into the closed part both show.
	whole := func(when string) int64 {
		t.Helper()
		_, read := stepped(when, at(0), at(3*time.Hour), 10*time.Minute)
		return read
	}
	if first, again := whole("ten minutes, first"), whole("ten minutes, again"); again+17 > first {
		t.Errorf("steps of ten minutes up to the newest scrape read %d rows, %d again: want the closed part's records kept", first, again)
	}
	for _, target := range targets {
		if err := db.Append(ctx, scrapeAt(target, profseries.CPU, cpu[2], at(3*time.Hour-time.Second/2))); err != nil {
			t.Fatal(err)
		}
	}
	whole("ten minutes, after a scrape in order")
	if err := db.Append(ctx, scrapeAt(targets[1], profseries.CPU, cpu[0], at(time.Hour+5*time.Second))); err != nil {
		t.Fatal(err)
	}
	whole("ten minutes, after a late scrape")

	// A range ending less than lateSlack before the newest scrape is not
	// closed: a scrape that far behind is still in order, and shows.
	stepped("within the slack", at(0), at(3*time.Hour-time.Minute), time.Minute)
	if err := db.Append(ctx, scrapeAt(targets[0], profseries.CPU, cpu[1], at(3*time.Hour-95*time.Second))); err != nil {
		t.Fatal(err)
	}
	stepped("within the slack, after a scrape in order", at(0), at(3*time.Hour-time.Minute), time.Minute)

	// A scrape stamped ahead of the clock moves the newest start no
	// later than the clock.
	before := time.Now()
	if err := db.Append(ctx, scrapeAt(targets[1], profseries.CPU, cpu[2], before.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	st, err := reader.recordsState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.newest < nanos(before) || st.newest > time.Now().UnixNano() {
		t.Errorf("newest start %s after a scrape stamped an hour ahead of %s: want the clock's time", fromNanos(st.newest).Format(time.RFC3339Nano), before.Format(time.RFC3339Nano))
	}
}

// TestKeptSnapshots checks the snapshots MergedAt keeps (see keptAt):
// those at closed instants are read once, and read again after a late
// scrape stored at one of them; those at open instants are read every
// time. Every answer equals the snapshots merged one by one.
func TestKeptSnapshots(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			db, where := e.open(t)
			testKeptSnapshots(t, db, where)
		})
	}
}

func testKeptSnapshots(t *testing.T, db *DB, where string) {
	ctx := context.Background()
	targets, cpu := leftpadFleet(t, db, profseries.CPU, 2, time.Hour)
	at := func(m time.Duration) time.Time { return profEpoch.Add(m) }
	reader := openReader(t, where)
	snapshots := func(when string, instants ...time.Time) int64 {
		t.Helper()
		var points []profseries.SeriesInstant
		var each []*profile.Profile
		for i, target := range targets {
			points = append(points, profseries.SeriesInstant{Target: target, At: instants[i]})
			p, err := db.MergedProfile(ctx, profseries.Query{Type: profseries.CPU, Selector: profseries.Exact(target), From: instants[i], To: instants[i].Add(time.Nanosecond)})
			if errors.Is(err, ErrNoProfiles) {
				continue // no block starts at its instant
			}
			if err != nil {
				t.Fatal(err)
			}
			each = append(each, p)
		}
		var merged *profile.Profile
		var err error
		read := rowsReadBy(reader, func() { merged, err = reader.MergedAt(ctx, profseries.CPU, points) })
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		want, err := profile.Merge(each)
		if err != nil {
			t.Fatal(err)
		}
		if !equalSums(stackSums(merged), stackSums(want)) || merged.DurationNanos != want.DurationNanos {
			t.Fatalf("%s: %d snapshots merged at once differ from their merge one by one", when, len(each))
		}
		return read
	}

	// Closed instants, the second series' a little after its last
	// scrape before them: read once, kept. A read of other instants
	// first has the reader know the series and processes.
	snapshots("known series", at(10*time.Minute), at(10*time.Minute))
	closed := []time.Time{at(20 * time.Minute), at(20*time.Minute + 5*time.Second)}
	first := snapshots("closed", closed...)
	if again := snapshots("closed, again", closed...); again+2 > first {
		t.Errorf("snapshots at closed instants read %d rows the first time, %d again: want them kept", first, again)
	}
	// A scrape stored late at the second series' instant shows.
	if err := db.Append(ctx, scrapeAt(targets[1], profseries.CPU, cpu[1], closed[1])); err != nil {
		t.Fatal(err)
	}
	snapshots("closed, after a late scrape", closed...)

	// Open instants (the newest scrape's): the first series has a block
	// at its instant, the second not yet; its scrape in order shows.
	open := []time.Time{at(time.Hour), at(time.Hour)}
	if err := db.Append(ctx, scrapeAt(targets[0], profseries.CPU, cpu[0], open[0])); err != nil {
		t.Fatal(err)
	}
	snapshots("open", open...)
	if err := db.Append(ctx, scrapeAt(targets[1], profseries.CPU, cpu[2], open[1])); err != nil {
		t.Fatal(err)
	}
	snapshots("open, after a scrape in order", open...)
}
