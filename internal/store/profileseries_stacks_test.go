package store

import (
	"compress/gzip"
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// stackForms counts the stored stacks listed whole (of more than one
// location) and those stored as a node that refers to a caller or a label
// set; others may be either.
func stackForms(t *testing.T, s *DB) (lists, nodes int) {
	t.Helper()
	err := s.b.each(context.Background(), `SELECT data FROM prof_stacks`, nil, func(rows *sql.Rows) error {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return err
		}
		set, caller, locs, err := profseries.StackRefs(data)
		if err != nil {
			return err
		}
		if set == 0 && caller == 0 && len(locs) > 1 {
			lists++
		} else if set != 0 || caller != 0 {
			nodes++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lists, nodes
}

// checkMerged checks that the merge of typ over [from, to) is pprof's
// merge of want.
func checkMerged(t *testing.T, s *DB, typ string, from, to time.Time, want []*profile.Profile, what string) {
	t.Helper()
	got, err := s.MergedProfile(context.Background(), profseries.Query{Type: typ, From: from, To: to})
	if err != nil {
		t.Fatalf("%s %s: %v", typ, what, err)
	}
	w, err := profile.Merge(want)
	if err != nil {
		t.Fatal(err)
	}
	if !equalSums(stackSums(got), stackSums(w)) {
		t.Errorf("%s %s: the merge differs from pprof's merge of the scrapes", typ, what)
	}
}

// TestProfileSeriesListStacks: a store written when stacks were stored
// as their whole list of locations (testdata: heap and goroutine scrapes
// 1 and 2 of the committed leftpad rounds, one target, at profEpoch and
// 10 s after) reads as before, takes new scrapes beside them, and
// collects its old stacks once no block refers to them.
func TestProfileSeriesListStacks(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "list-stacks.db")
	gunzipFile(t, filepath.Join("testdata", "profseries-list-stacks.db.gz"), path)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if lists, nodes := stackForms(t, s); lists == 0 || nodes > 0 {
		t.Fatalf("the committed store has %d stacks listed whole and %d nodes: not the old form", lists, nodes)
	}
	target := profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "127.0.0.1:1"})
	later := profEpoch.Add(5 * time.Hour)
	for _, typ := range []string{profseries.Heap, profseries.Goroutine} {
		ps := leftpadProfiles(t, typ)
		checkMerged(t, s, typ, profEpoch, profEpoch.Add(20*time.Second), ps[:2], "stored in the old form")
		for _, sc := range []*profseries.Scrape{
			scrapeAt(target, typ, ps[2], profEpoch.Add(20*time.Second)), scrapeAt(target, typ, ps[3], profEpoch.Add(30*time.Second)),
			scrapeAt(target, typ, ps[0], later), scrapeAt(target, typ, ps[1], later.Add(10*time.Second)),
		} {
			if err := s.Append(ctx, sc); err != nil {
				t.Fatal(err)
			}
		}
		checkMerged(t, s, typ, profEpoch, profEpoch.Add(time.Minute), ps, "old and new forms together")
	}
	if _, nodes := stackForms(t, s); nodes == 0 {
		t.Fatal("new scrapes stored no stack as a node")
	}
	s.Retention = Retention{Raw: time.Hour, Minute: 2 * time.Hour, TenMinutes: 3 * time.Hour, Budget: DefaultRetention.Budget}
	if _, err := s.ApplyRetention(ctx, later.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if lists, _ := stackForms(t, s); lists > 0 {
		t.Errorf("%d stacks of the old form left after their blocks were deleted", lists)
	}
	for _, typ := range []string{profseries.Heap, profseries.Goroutine} {
		checkMerged(t, s, typ, later, later.Add(20*time.Second), leftpadProfiles(t, typ)[:2], "after collection")
	}
}

func gunzipFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// runCallersKept: collection keeps the callers and the label set of a
// stack kept, however old the label set's own last_seen, and still
// removes the stacks, callers and symbols of scrapes past retention.
func runCallersKept(t *testing.T, s *DB) {
	ctx := context.Background()
	cpu := leftpadProfiles(t, profseries.CPU)
	s.Retention = Retention{Raw: time.Hour, Minute: 2 * time.Hour, TenMinutes: 3 * time.Hour, Budget: DefaultRetention.Budget}
	old, at := profEpoch, profEpoch.Add(10*time.Hour)
	for _, sc := range []*profseries.Scrape{
		scrapeAt(apiTarget, profseries.CPU, renamed(cpu[2], 99), old),
		scrapeAt(apiTarget, profseries.CPU, cpu[0], at),
		scrapeAt(apiTarget, profseries.CPU, cpu[1], at.Add(10*time.Second)),
	} {
		if err := s.Append(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := s.Windows(ctx, profseries.Query{Type: profseries.CPU, From: at, To: at.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	// Only the stacks of samples look seen since: their label sets look
	// unused since the old scrape.
	q, args := inList(`UPDATE prof_stacks SET last_seen = ? WHERE id NOT IN `, profseries.StackIDs(ws...), nanos(old))
	res, err := s.b.db.ExecContext(ctx, s.b.q(q), args...)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("no label sets stored")
	}
	count := func() (stacks, callers int) {
		if err := s.b.db.QueryRow(`SELECT COUNT(*) FROM prof_stacks`).Scan(&stacks); err != nil {
			t.Fatal(err)
		}
		if err := s.b.db.QueryRow(`SELECT COUNT(*) FROM prof_callers`).Scan(&callers); err != nil {
			t.Fatal(err)
		}
		return stacks, callers
	}
	stacks, callers := count()
	if _, err := s.ApplyRetention(ctx, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if stacksAfter, callersAfter := count(); stacksAfter >= stacks || callersAfter >= callers {
		t.Errorf("%d stacks and %d callers before collection, %d and %d after: the old scrape's were kept", stacks, callers, stacksAfter, callersAfter)
	}
	checkMerged(t, s, profseries.CPU, at, at.Add(time.Minute), cpu[:2], "after collection")
	var fns int
	if err := s.b.db.QueryRow(`SELECT MAX(id) FROM prof_functions`).Scan(&fns); err != nil {
		t.Fatal(err)
	}
	contents, err := readSymbols{ctx, s.ProfileSeries}.Lookup(profseries.KindFunction, ids(fns))
	if err != nil {
		t.Fatal(err)
	}
	for id, c := range contents {
		if mentionsDay(c, 99) {
			t.Errorf("function %d of the scrape past retention is still stored", id)
		}
	}
}

// TestProfileSeriesCallersKept runs runCallersKept on both engines.
func TestProfileSeriesCallersKept(t *testing.T) {
	sq, _ := openTestSQLite(t)
	pg, _ := openTestPostgres(t)
	t.Run("SQLite", func(t *testing.T) { runCallersKept(t, sq) })
	t.Run("PostgreSQL", func(t *testing.T) { runCallersKept(t, pg) })
}
