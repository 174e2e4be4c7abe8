package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
)

// leftpadProfiles reads profseries' committed real scrapes of one type.
func leftpadProfiles(t testing.TB, typ string) []*profile.Profile {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "profseries", "testdata", "leftpad", typ+"-*.pb.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed %s profiles (%v)", typ, err)
	}
	sort.Strings(files)
	var ps []*profile.Profile
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.ParseData(b)
		if err != nil {
			t.Fatal(err)
		}
		p.TimeNanos = int64(len(b)) // raw size, for the scrape's RawBytes
		ps = append(ps, p)
	}
	return ps
}

var scrapedTypes = []string{profseries.CPU, profseries.Allocs, profseries.Heap, profseries.Goroutine, profseries.Mutex, profseries.Block}

var profEpoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// scrapeAt is a scrape of p by target at t, over 10 s.
func scrapeAt(target profseries.Labels, typ string, p *profile.Profile, t time.Time) *profseries.Scrape {
	q := p.Copy()
	raw := q.TimeNanos
	q.TimeNanos, q.DurationNanos = t.UnixNano(), int64(10*time.Second)
	return &profseries.Scrape{Target: target, Type: typ, Start: t, End: t.Add(10 * time.Second),
		Process: profseries.Process{BuildID: "f5310c23", Generation: 1}, Profile: q, RawBytes: raw}
}

var (
	apiTarget = profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "127.0.0.1:1", "team": "pay – ops", "zone-id": "eu west"})
	webTarget = profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "127.0.0.1:2", "team": "web"})
)

// runProfileSeriesSuite stores the committed real scrapes of two targets
// and checks the reads; it returns a digest of every answer, which must be
// the same on every engine.
func runProfileSeriesSuite(t *testing.T, s *DB) string {
	ctx := context.Background()
	var digest strings.Builder
	for _, typ := range scrapedTypes {
		for i, p := range leftpadProfiles(t, typ) {
			for j, target := range []profseries.Labels{apiTarget, webTarget} {
				at := profEpoch.Add(time.Duration(i)*10*time.Second + time.Duration(j)*time.Millisecond)
				sc := scrapeAt(target, typ, p, at)
				if typ == profseries.CPU && j == 0 {
					sc.Requests = requestsOf(i)
				}
				if err := s.Append(ctx, sc); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// The same scrape again is stored once.
	again := scrapeAt(apiTarget, profseries.CPU, leftpadProfiles(t, profseries.CPU)[0], profEpoch)
	if err := s.Append(ctx, again); err != nil {
		t.Fatal(err)
	}

	// Request counts come back with their scrapes, and only with those
	// that had them.
	for _, target := range []profseries.Labels{apiTarget, webTarget} {
		ws, err := s.Windows(ctx, profseries.Query{Type: profseries.CPU, Selector: profseries.Exact(target), From: profEpoch, To: profEpoch.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range ws {
			want := requestsOf(i)
			if target.Get("team") == "web" {
				want = nil
			}
			if fmt.Sprint(w.Requests) != fmt.Sprint(want) {
				t.Errorf("%s scrape %d: requests %+v, want %+v", target, i, w.Requests, want)
			}
			fmt.Fprintf(&digest, "requests %s %d %+v\n", target, i, w.Requests)
		}
	}

	sel, err := profseries.ParseSelector(`{team="pay – ops", zone-id=~"eu.*"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range scrapedTypes {
		q := profseries.Query{Type: typ, Selector: sel, From: profEpoch, To: profEpoch.Add(time.Hour)}
		got, err := s.MergedProfile(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.CheckValid(); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		ps := leftpadProfiles(t, typ)
		want, err := profile.Merge(ps)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := stackSums(got), stackSums(want); !equalSums(g, w) {
			t.Errorf("%s: merged from the store differs from pprof's merge of the scrapes (%d and %d stacks)", typ, len(g), len(w))
		}
		fmt.Fprintf(&digest, "%s %d %d\n", typ, got.TimeNanos, got.DurationNanos)
		for _, k := range sortedSumKeys(stackSums(got)) {
			fmt.Fprintf(&digest, "%s %v\n", k, stackSums(got)[k])
		}
	}

	q := profseries.Query{Type: profseries.CPU, From: profEpoch, To: profEpoch.Add(time.Hour)}
	top, err := s.Top(ctx, q, profiles.ByFlat, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Rows) != 5 || top.Rows[0].Flat < top.Rows[4].Flat || top.Total == 0 {
		t.Errorf("top 5: %+v", top.Rows)
	}
	fmt.Fprintf(&digest, "top %+v\n", top.Rows)
	fn := top.Rows[0].Function
	series, err := s.FunctionSeries(ctx, q, fn, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 2 || series[0].Scrapes != 4 || series[0].FlatShare <= 0 {
		t.Errorf("series of %s per 20 s: %+v", fn, series)
	}
	fmt.Fprintf(&digest, "series %+v\n", series)
	// A name no scrape holds is said, not drawn as a share of 0.
	if _, err := s.FunctionSeries(ctx, q, "main.leftpad", 20*time.Second); !errors.Is(err, profseries.ErrNoFunction) {
		t.Errorf("series of a function no scrape holds: %v, want ErrNoFunction", err)
	}
	d, err := s.Diff(ctx, profseries.Query{Type: profseries.CPU, From: profEpoch, To: profEpoch.Add(10 * time.Second)},
		profseries.Query{Type: profseries.CPU, From: profEpoch.Add(10 * time.Second), To: profEpoch.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if d.BaseTotal == 0 || d.HeadTotal <= d.BaseTotal || len(d.Functions) == 0 {
		t.Errorf("diff: totals %d %d, %d functions", d.BaseTotal, d.HeadTotal, len(d.Functions))
	}
	fmt.Fprintf(&digest, "diff %+v\n", d.Functions[:3])

	targets, err := s.ProfileTargets(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 2*len(scrapedTypes) {
		t.Errorf("%d series listed, want %d", len(targets), 2*len(scrapedTypes))
	}
	for _, tg := range targets {
		if tg.Scrapes != 4 || !tg.First.Equal(profEpoch) && !tg.First.Equal(profEpoch.Add(time.Millisecond)) {
			t.Errorf("series %s %s: %d scrapes from %v", tg.Labels, tg.Type, tg.Scrapes, tg.First)
		}
		fmt.Fprintf(&digest, "target %s %s %d %v %v\n", tg.Labels, tg.Type, tg.Scrapes, tg.First, tg.Last)
	}
	if targets[0].Labels.Get("team") != "pay – ops" {
		t.Errorf("labels with spaces, dashes and unicode: %s", targets[0].Labels)
	}
	if _, err := s.MergedProfile(ctx, profseries.Query{Type: profseries.CPU, From: profEpoch.Add(-time.Hour), To: profEpoch}); err == nil {
		t.Error("a range without scrapes merged into a profile")
	}
	return digest.String()
}

// requestsOf is what the i-th scrape of a target that counts requests
// served.
func requestsOf(i int) *profseries.Requests {
	return &profseries.Requests{Total: int64(100 + i + 1), Routes: []profseries.RouteRequests{
		{Route: "", Method: "GET", Count: 1}, {Route: "GET /v1/leftpad/", Method: "GET", Count: int64(100 + i)}}, Span: 10*time.Second + time.Duration(i)*time.Millisecond}
}

func stackSums(p *profile.Profile) map[string][]int64 {
	out := map[string][]int64{}
	for _, s := range p.Sample {
		var b strings.Builder
		for _, l := range s.Location {
			for _, ln := range l.Line {
				fmt.Fprintf(&b, "%s:%d;", ln.Function.Name, ln.Line)
			}
			if len(l.Line) == 0 {
				fmt.Fprintf(&b, "%#x;", l.Address-l.Mapping.Start)
			}
		}
		fmt.Fprint(&b, s.Label, s.NumLabel)
		k := b.String()
		if out[k] == nil {
			out[k] = make([]int64, len(s.Value))
		}
		for i, v := range s.Value {
			out[k][i] += v
		}
	}
	return out
}

func equalSums(a, b map[string][]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func sortedSumKeys(m map[string][]int64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestProfileSeriesEngines: both engines store and answer the same.
func TestProfileSeriesEngines(t *testing.T) {
	sq, _ := openTestSQLite(t)
	pg, _ := openTestPostgres(t)
	var a, b string
	t.Run("SQLite", func(t *testing.T) { a = runProfileSeriesSuite(t, sq) })
	t.Run("PostgreSQL", func(t *testing.T) { b = runProfileSeriesSuite(t, pg) })
	if a != b {
		t.Errorf("the engines answer differently:\nSQLite %d bytes, PostgreSQL %d bytes of answers", len(a), len(b))
	}
}
