package store

import (
	"context"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestRequestCountsRetention: request counts are kept per scrape, so
// they go when their scrapes are merged into coarser windows, and the
// windows read back carry none; the scrapes still kept whole keep theirs.
func TestRequestCountsRetention(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestSQLite(t)
	s.Retention = Retention{Raw: time.Hour, Minute: 24 * time.Hour, TenMinutes: 48 * time.Hour}
	p := leftpadProfiles(t, profseries.CPU)[0]
	old, fresh := profEpoch, profEpoch.Add(3*time.Hour)
	for _, at := range []time.Time{old, old.Add(10 * time.Second), fresh, fresh.Add(10 * time.Second)} {
		sc := scrapeAt(apiTarget, profseries.CPU, p, at)
		sc.Requests = requestsOf(0)
		if err := s.Append(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		var n int
		if err := s.b.db.QueryRow(`SELECT COUNT(*) FROM prof_requests`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 4 {
		t.Fatalf("%d request counts stored, want 4", n)
	}
	if _, err := s.ApplyRetention(ctx, fresh.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Errorf("%d request counts kept after the old scrapes were merged, want the fresh scrapes' 2", n)
	}
	ws, err := s.Windows(ctx, profseries.Query{Type: profseries.CPU, Selector: profseries.Exact(apiTarget), From: old, To: fresh.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var with, without int
	for _, w := range ws {
		if w.Requests != nil {
			with++
		} else {
			without++
		}
	}
	if with != 2 || without != 1 {
		t.Errorf("%d windows with request counts and %d without, want the 2 fresh scrapes with, the merged minute without", with, without)
	}
	if _, err := s.ApplyRetention(ctx, fresh.Add(72*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("%d request counts kept after every scrape was deleted", n)
	}
}
