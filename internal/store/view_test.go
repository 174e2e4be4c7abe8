package store

import (
	"context"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestSQLiteReadView checks that a read view of a SQLite store sees the
// store as it was at its first statement, through the public reads too,
// while scrapes are stored beside it; that a view asked for inside one is
// the same; that a fork sees the store as it is; and that once the view
// ends the reads see everything stored.
func TestSQLiteReadView(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestSQLite(t)
	p := leftpadProfiles(t, profseries.Heap)[0]
	store := func(i int) {
		t.Helper()
		if err := s.Append(ctx, scrapeAt(apiTarget, profseries.Heap, p, profEpoch.Add(time.Duration(i)*10*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	blocks := func(ctx context.Context) int {
		t.Helper()
		var n int
		if err := s.b.reader(ctx).QueryRowContext(ctx, `SELECT COUNT(*) FROM prof_blocks`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	end := func(ctx context.Context) time.Time {
		t.Helper()
		spans, err := s.SeriesSpans(ctx, profseries.Heap, profseries.Selector{})
		if err != nil || len(spans) != 1 {
			t.Fatalf("spans %v (%v), want one", spans, err)
		}
		return spans[0].Last
	}
	store(0)

	vctx, done := s.b.view(ctx)
	defer done()
	n, to := blocks(vctx), end(vctx)
	store(1)
	if got := blocks(vctx); got != n {
		t.Errorf("the view counts %d blocks after a scrape was stored beside it, %d before; want the store as it was", got, n)
	}
	if got := end(vctx); !got.Equal(to) {
		t.Errorf("SeriesSpans in the view ends at %v after a scrape was stored beside it, at %v before", got, to)
	}
	if inner, _ := s.b.view(vctx); s.b.reader(inner) != s.b.reader(vctx) {
		t.Error("a view asked for inside a view is another")
	}
	fctx, fdone := s.b.fork(vctx)
	if got := blocks(fctx); got != n+1 {
		t.Errorf("a fork of the view counts %d blocks, want the %d stored now", got, n+1)
	}
	fdone()
	done()
	if got, want := end(ctx), to.Add(10*time.Second); blocks(ctx) != n+1 || !got.Equal(want) {
		t.Errorf("after the view: %d blocks ending at %v, want %d ending at %v", blocks(ctx), got, n+1, want)
	}
}
