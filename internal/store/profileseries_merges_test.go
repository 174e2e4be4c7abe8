package store

import (
	"context"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestMergesKeptUntilSeriesChange merges a range of real CPU scrapes
// through one handle of a SQLite file while another stores scrapes into
// it, as a scraper beside the dashboard does: a range merged again with
// its series unchanged reads no block, and every scrape stored in the
// range since (late ones too) is in the next merge, which is each time
// the merge of the windows the range holds.
func TestMergesKeptUntilSeriesChange(t *testing.T) {
	ctx := context.Background()
	writer, path := openTestSQLite(t)
	reader, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close() })
	ps := leftpadProfiles(t, profseries.CPU)
	store := func(target profseries.Labels, i int, at time.Duration) {
		t.Helper()
		if err := writer.Append(ctx, scrapeAt(target, profseries.CPU, ps[i%len(ps)], profEpoch.Add(at))); err != nil {
			t.Fatal(err)
		}
	}
	q := profseries.Query{Type: profseries.CPU, Selector: profseries.Exact(apiTarget), From: profEpoch, To: profEpoch.Add(time.Hour)}
	// merged merges q through the reader and checks it against the
	// windows it holds; it returns the rows the merge read (its symbols,
	// read to build the profile, not counted).
	merged := func(when string, scrapes int) int64 {
		t.Helper()
		read := rowsReadBy(reader, func() { _, err = reader.mergeQuery(ctx, q) })
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		m, err := reader.Merge(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		ws, err := reader.Windows(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != scrapes {
			t.Fatalf("%s: %d scrapes in the range, want %d", when, len(ws), scrapes)
		}
		want, err := profseries.MergedProfile(ws, reader.Symbols(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if !equalSums(stackSums(m.Profile), stackSums(want)) {
			t.Fatalf("%s: the merge is not that of the %d scrapes the range holds", when, scrapes)
		}
		if got := time.Duration(m.Profile.DurationNanos); got != time.Duration(scrapes)*10*time.Second {
			t.Fatalf("%s: merge covers %v, want %d scrapes of 10 s", when, got, scrapes)
		}
		return read
	}

	store(apiTarget, 0, 0)
	store(apiTarget, 1, 20*time.Second)
	store(webTarget, 1, 0)
	first := merged("first merge", 2)
	// Again, unchanged: the series list, the epoch and the one series'
	// summary are read, no block.
	if again := merged("unchanged", 2); again >= first || again > 3 {
		t.Errorf("merging an unchanged range again read %d rows (the first merge %d), want the series' state alone", again, first)
	}
	// Another target's scrape changes nothing of this range.
	store(webTarget, 2, 30*time.Second)
	if again := merged("another target stored", 2); again > 3 {
		t.Errorf("a scrape of another target made the range be read again (%d rows)", again)
	}
	// A new scrape in the range, then a late one between the two first,
	// then one outside the range: each is seen.
	store(apiTarget, 2, 40*time.Second)
	merged("a scrape stored", 3)
	store(apiTarget, 3, 10*time.Second)
	merged("a late scrape stored", 4)
	store(apiTarget, 0, 2*time.Hour)
	merged("a scrape after the range", 4)
	if again := merged("unchanged at last", 4); again > 3 {
		t.Errorf("merging an unchanged range again read %d rows", again)
	}
	// The snapshots of instants, more than are kept, do not push the
	// range out.
	for i := range 2 * mergesKept {
		at := profEpoch.Add(time.Duration(i%3) * 10 * time.Second) // scrapes at 0, 10 and 20 s
		from := at.Add(-time.Duration(i) * time.Nanosecond)        // each a range of its own
		if _, err := reader.mergeQuery(ctx, profseries.Query{Type: profseries.CPU, Selector: profseries.Exact(apiTarget), From: from, To: at.Add(time.Nanosecond)}); err != nil {
			t.Fatal(err)
		}
	}
	if again := merged("after instants merged", 4); again > 3 {
		t.Errorf("merging the range after %d instants read %d rows: the instants pushed it out", 2*mergesKept, again)
	}
}

// TestMergesReadOnce checks that merges of one range asked at once (a
// page's parts read together) read its blocks once, and all get the same
// merge.
func TestMergesReadOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestSQLite(t)
	ps := leftpadProfiles(t, profseries.CPU)
	for i := range 120 {
		if err := s.Append(ctx, scrapeAt(apiTarget, profseries.CPU, ps[i%len(ps)], profEpoch.Add(time.Duration(i)*10*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	q := profseries.Query{Type: profseries.CPU, From: profEpoch, To: profEpoch.Add(20 * time.Minute)}
	other := q
	other.From = q.From.Add(time.Second) // the same blocks, another range: read alone
	var err error
	once := rowsReadBy(s, func() { _, err = s.mergeQuery(ctx, other) })
	if err != nil {
		t.Fatal(err)
	}
	const readers = 8
	ws := make([]profseries.Window, readers)
	errs := make([]error, readers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	read := rowsReadBy(s, func() {
		for i := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ws[i], errs[i] = s.mergeQuery(ctx, q)
			}()
		}
		close(start)
		wg.Wait()
	})
	for i := range readers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !reflect.DeepEqual(ws[i], ws[0]) {
			t.Fatalf("reader %d got another merge", i)
		}
	}
	// Each reader reads the series' state; the blocks are read once.
	if limit := once + readers*4; read > limit {
		t.Errorf("%d merges of one range at once read %d rows; one merge reads %d: want the blocks read once (at most %d)", readers, read, once, limit)
	}
}

// TestMergesJoinedAcrossStates: a merge of a range asked while another
// of it is read waits for that one and gets its merge, though a scrape
// was stored in between (the state each read differs): on a live store,
// the parts of one page would otherwise read the range twice at once.
func TestMergesJoinedAcrossStates(t *testing.T) {
	ctx := context.Background()
	q := profseries.Query{Type: profseries.CPU, From: profEpoch, To: profEpoch.Add(time.Hour)}
	first := profseries.Window{Start: profEpoch, End: profEpoch.Add(10 * time.Second), Duration: 10 * time.Second}
	var m merges
	reading, release := make(chan struct{}), make(chan struct{})
	got := make(chan profseries.Window)
	go func() {
		w, err := m.run(ctx, q, []int64{1}, func() (profseries.Window, error) {
			close(reading)
			<-release
			return first, nil
		})
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	<-reading
	second, readAgain := make(chan profseries.Window), make(chan struct{})
	go func() {
		w, err := m.run(ctx, q, []int64{2}, func() (profseries.Window, error) {
			t.Error("the range was read again while it was read")
			close(readAgain)
			return profseries.Window{}, nil
		})
		if err != nil {
			t.Error(err)
		}
		second <- w
	}()
	// Released once the second waits for the first (or read again).
	for waiting := false; !waiting; {
		select {
		case <-readAgain:
			waiting = true
		default:
			m.mu.Lock()
			waiting = m.running[0].waiting == 1
			m.mu.Unlock()
			runtime.Gosched()
		}
	}
	close(release)
	if w1, w2 := <-got, <-second; !reflect.DeepEqual(w1, first) || !reflect.DeepEqual(w2, first) {
		t.Errorf("the second merge got %+v, want the first's %+v", w2, w1)
	}
}
