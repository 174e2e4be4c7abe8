package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestChainMarks stores the committed real heap scrapes (a type coded in
// chains of ten minutes) of three targets and merges ranges through a
// second handle, as the dashboard beside a scraper does: a range starting
// minutes into a chain that starts a little after one read before
// resumes each chain from the mark that read left at its minute (far
// fewer rows than from the chains' starts), a read ending on a whole
// minute leaves a mark there, the whole minutes of a range are kept, a scrape stored late into a marked minute
// retires the marks after it, and a mark made of fewer blocks than the
// store holds (a scrape stored between a read's records and its blocks)
// makes the read start again from the chains' starts. Every merge equals
// that of the scrapes the range holds.
func TestChainMarks(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			db, where := e.open(t)
			testChainMarks(t, db, where)
		})
	}
}

func testChainMarks(t *testing.T, db *DB, where string) {
	targets, heap := leftpadFleet(t, db, profseries.Heap, 3, 25*time.Minute)
	at := func(m time.Duration) time.Time { return profEpoch.Add(m) }
	store := func(target profseries.Labels, t0 time.Time) {
		t.Helper()
		appendReplayed(t, db, target, profseries.Heap, heap, t0)
	}
	late := at(15*time.Minute + 5*time.Second) // between two scrapes of a marked minute

	reader := openReader(t, where)
	sel, err := profseries.ParseSelector(`{job="leftpad"}`)
	if err != nil {
		t.Fatal(err)
	}
	query := func(from, to time.Duration) profseries.Query {
		return profseries.Query{Type: profseries.Heap, Selector: sel, From: at(from), To: at(to)}
	}
	merged := func(s *DB, when string, q profseries.Query) int64 {
		t.Helper()
		_, read := mergedChecked(t, s, when, q)
		return read
	}
	fresh := func(when string, q profseries.Query) int64 {
		t.Helper()
		_, read := mergedFresh(t, where, when, q)
		return read
	}

	// A range from 19:05 into the chain of 10:00 marks each chain at
	// 19:00; one from 19:15 resumes there: 6 blocks before it a series,
	// not 55.
	merged(reader, "a range from 19:05", query(19*time.Minute+5*time.Second, 25*time.Minute))
	later := query(19*time.Minute+15*time.Second, 25*time.Minute)
	resumed := merged(reader, "a range from 19:15", later)
	all := fresh("a range from 19:15, nothing kept", later)
	if resumed+int64(len(targets))*40 > all {
		t.Errorf("a range from 19:15 after one from 19:05 read %d rows, a handle that kept nothing %d: want the chains resumed at 19:00", resumed, all)
	}

	// The whole minutes of a range are merged and kept: a range a few
	// seconds later reads its partial minutes only, each chain resumed
	// at the minute it starts in (marked by the read before).
	merged(reader, "a range from 19:25 to 24:40", query(19*time.Minute+25*time.Second, 24*time.Minute+40*time.Second))
	shifted := query(19*time.Minute+35*time.Second, 24*time.Minute+30*time.Second)
	if kept, all := merged(reader, "a range from 19:35 to 24:30", shifted), fresh("a range from 19:35 to 24:30, nothing kept", shifted); kept*3 > all {
		t.Errorf("a range from 19:35 to 24:30 after one from 19:25 to 24:40 read %d rows, a handle that kept nothing %d: want its whole minutes kept", kept, all)
	}

	// A range ending at 24:00 marks the chains there; one from 24:10
	// resumes from that mark: 6 blocks a series, not 30.
	merged(reader, "a range ending at 24:00", query(20*time.Minute+30*time.Second, 24*time.Minute))
	after := query(24*time.Minute+10*time.Second, 25*time.Minute)
	if resumed, all := merged(reader, "a range from 24:10", after), fresh("a range from 24:10, nothing kept", after); resumed+int64(len(targets))*20 > all {
		t.Errorf("a range from 24:10 after one ending at 24:00 read %d rows, a handle that kept nothing %d: want the chains resumed at 24:00", resumed, all)
	}

	// A scrape stored late into 15:00 changes the records every mark of
	// a's chain after it is kept under: a's chain is read from 10:00
	// again, the others' are not.
	store(targets[0], late)
	again := query(19*time.Minute+20*time.Second, 25*time.Minute)
	if n := merged(reader, "after a late scrape", again); n < resumed+50 {
		t.Errorf("after a scrape stored late into a marked minute, a range read %d rows, %d before it: want the chain it is in read from its start", n, resumed)
	}

	// A mark at 23:00 of b's chain holding its block of 20:00 only, under
	// the key of what the store holds: the block of 23:00, coded against
	// that of 22:50 (the committed scrapes repeat every fourth, and a
	// Chain keeps four, so a mark missing only that block could decode
	// it), does not decode from it, and the read starts again from
	// 20:00.
	staleMark(t, reader, targets[1], at(20*time.Minute), at(20*time.Minute+10*time.Second), at(23*time.Minute))
	before := reader.staleMarks.Load()
	merged(reader, "from a stale mark", query(23*time.Minute+5*time.Second, 25*time.Minute))
	if n := reader.staleMarks.Load() - before; n != 1 {
		t.Errorf("a range resumed from a stale mark was read again %d times, want once", n)
	}
}

// staleMark keeps, as the mark of target's heap chain at m, the chain of
// its blocks in [from, to) only, where to < m: what a read would have
// marked had it read its records after a scrape in [to, m) was stored and
// its blocks before.
func staleMark(t *testing.T, s *DB, target profseries.Labels, from, to, m time.Time) {
	t.Helper()
	ctx := context.Background()
	var series int64
	if err := s.b.db.QueryRowContext(ctx, s.b.q(`SELECT id FROM prof_series WHERE labels = ? AND type = ?`), labelsKey(target), profseries.Heap).Scan(&series); err != nil {
		t.Fatal(err)
	}
	var ch profseries.Chain
	err := s.b.each(ctx, `SELECT data FROM prof_blocks WHERE series_id = ? AND resolution = 0 AND start_time >= ? AND start_time < ? ORDER BY start_time`,
		[]any{series, nanos(from), nanos(to)}, func(rows *sql.Rows) error {
			var data []byte
			if err := rows.Scan(&data); err != nil {
				return err
			}
			return ch.Read(s.codec(), data)
		})
	if err != nil {
		t.Fatal(err)
	}
	dec := s.decoder(ctx, profseries.Heap)
	if err := dec.readMarks(map[int64]int64{series: nanos(m)}, nanos(m)); err != nil {
		t.Fatal(err)
	}
	k, ok := dec.marks.key(nanos(from), series, nanos(m))
	if !ok {
		t.Fatal("no key for the mark: its minutes' records are missing")
	}
	s.marks.put(k, &ch, ch.Size())
}
