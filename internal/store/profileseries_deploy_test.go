package store

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestProcessSpansAndDeploys stores the committed real CPU scrapes of a
// target deployed from v1 (one build) to v2 (another), 90 scrapes each,
// and of a second instance running v1 for 10: the spans of each series'
// processes are read from the blocks' columns, exactly; the deploy is
// found at v2's first scrape and judged on v2's 90 scrapes thinned to 60
// (the bound) and on v1's two targets each read over its own half of the
// time it ran: a's first 45 scrapes, b's last 5; the same when asked
// again.
func TestProcessSpansAndDeploys(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			db, where := e.open(t)
			testProcessSpansAndDeploys(t, db, where)
		})
	}
}

func testProcessSpansAndDeploys(t *testing.T, db *DB, where string) {
	ctx := context.Background()
	cpu := leftpadProfiles(t, profseries.CPU)
	target := func(instance, version string) profseries.Labels {
		return profseries.NewLabels(map[string]string{"job": "leftpad", "instance": instance, "version": version})
	}
	deploy := profEpoch.Add(90 * 10 * time.Second)
	store := func(ls profseries.Labels, build string, from time.Time, n int) {
		for i := range n {
			sc := scrapeAt(ls, profseries.CPU, cpu[i%len(cpu)], from.Add(time.Duration(i)*10*time.Second))
			sc.Process.BuildID = build
			if err := db.Append(ctx, sc); err != nil {
				t.Fatal(err)
			}
		}
	}
	store(target("a", "v1"), "b1", profEpoch, 90)
	store(target("a", "v2"), "b2", deploy, 90)
	store(target("b", "v1"), "b1", profEpoch, 10)

	end := deploy.Add(90 * 10 * time.Second)
	spans, err := db.ProcessSpans(ctx, profseries.Query{Type: profseries.CPU, From: profEpoch, To: end})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]time.Time{
		target("a", "v1").String() + " b1": {profEpoch, deploy},
		target("a", "v2").String() + " b2": {deploy, end},
		target("b", "v1").String() + " b1": {profEpoch, profEpoch.Add(100 * time.Second)},
	}
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d: %+v", len(spans), len(want), spans)
	}
	for _, sp := range spans {
		w, ok := want[sp.Target.String()+" "+sp.Process.BuildID]
		if !ok || !sp.First.Equal(w[0]) || !sp.Last.Equal(w[1]) {
			t.Errorf("%s %s: %s to %s, want %v", sp.Target, sp.Process.BuildID, sp.First, sp.Last, w)
		}
	}
	// A range that ends before the deploy sees v1 alone.
	spans, err = db.ProcessSpans(ctx, profseries.Query{Type: profseries.CPU, From: profEpoch, To: deploy})
	if err != nil || len(spans) != 2 {
		t.Errorf("before the deploy: %d spans (%v), want v1's two", len(spans), err)
	}

	rep, err := profseries.FindDeploys(ctx, db, nil, profEpoch, end, profseries.DeployOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deploys) != 1 {
		t.Fatalf("%d deploys, want 1: %+v", len(rep.Deploys), rep.Deploys)
	}
	d := rep.Deploys[0]
	if !d.At.Equal(deploy) || d.Before.Version != "v1" || d.After.BuildID != "b2" {
		t.Errorf("deploy at %s from %s to %s, want at %s from v1 to v2 (build b2)", d.At, d.Before, d.After, deploy)
	}
	if !d.Judged || d.BeforeScrapes != 50 || d.AfterScrapes != 60 {
		t.Errorf("judged %v on %d and %d scrapes, want 45+5 before and 60 after", d.Judged, d.BeforeScrapes, d.AfterScrapes)
	}
	again, err := profseries.FindDeploys(ctx, db, nil, profEpoch, end, profseries.DeployOptions{Rows: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Deploys) != 1 || len(again.Deploys[0].Changes) > 1 {
		t.Fatalf("asked again with one row: %+v", again.Deploys)
	}
	a := again.Deploys[0]
	if d.Significant > 0 && !reflect.DeepEqual(a.Changes[0], d.Changes[0]) || a.Significant != d.Significant || a.Tested != d.Tested {
		t.Errorf("asked again: %+v, want the first judgement's largest change of %+v", a, d)
	}

	// A deploy whose after side has ended (its span, 30 minutes, is in
	// the range) is kept by the store; another process reads the
	// judgement kept: the same, and no scrape read to make it.
	later := deploy.Add(time.Hour)
	rep, err = profseries.FindDeploys(ctx, db, nil, profEpoch, later, profseries.DeployOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(ctx, where)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	counted := &countingWindows{DB: other}
	kept, err := profseries.FindDeploys(ctx, counted, nil, profEpoch, later, profseries.DeployOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := counted.reads.Load(); n != 0 || !reflect.DeepEqual(kept.Deploys, rep.Deploys) {
		t.Errorf("in another process: %d reads of scrapes, deploys %+v; want none read and the judgement kept, %+v", n, kept.Deploys, rep.Deploys)
	}
	// Retention that deletes the scrapes before the deploy forgets it.
	judgedDeploys := func() (n int) {
		t.Helper()
		if err := db.b.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM prof_deploys`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := judgedDeploys(); n != 1 {
		t.Fatalf("%d judgements kept, want the deploy's", n)
	}
	db.Retention = Retention{Raw: time.Minute, Minute: time.Minute, TenMinutes: time.Minute}
	if _, err := db.ApplyRetention(ctx, deploy.Add(time.Minute+time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := judgedDeploys(); n != 0 {
		t.Errorf("after retention deleted the scrapes before the deploy, %d judgements kept, want none", n)
	}
}

// countingWindows counts the reads of scrapes through Windows.
type countingWindows struct {
	*DB
	reads atomic.Int64
}

func (c *countingWindows) Windows(ctx context.Context, q profseries.Query) ([]profseries.Window, error) {
	c.reads.Add(1)
	return c.DB.Windows(ctx, q)
}
