package history

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/store"
)

// TestChanges records eight commits of one benchmark in a real store: six
// on main from machine "ci", the sixth twice as slow, and between them in
// time two on branch "feature" from machine "laptop", three times as fast.
// Each line is its own series: no change is measured against the other.
func TestChanges(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "perfscope.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	save := func(c int, branch, host string, ns float64) {
		var text strings.Builder
		text.WriteString("pkg: example.com/svc\n")
		for i := range 8 {
			fmt.Fprintf(&text, "BenchmarkHandle-8 1000 %.0f ns/op\n", ns+float64(i+c%2))
		}
		var results []*benchfmt.Result
		r := benchfmt.NewReader(strings.NewReader(text.String()), "test")
		for r.Scan() {
			if res, ok := r.Result().(*benchfmt.Result); ok {
				results = append(results, res.Clone())
			}
		}
		run := store.BenchRun{Commit: fmt.Sprintf("%040x", c+1), Branch: branch, CommitTime: start.Add(time.Duration(c) * time.Hour),
			Machine: store.Machine{Hostname: host}, Results: results}
		if _, err := s.SaveBenchRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	for c := range 8 {
		switch {
		case c == 2 || c == 4:
			save(c, "feature", "laptop", 333)
		case c == 7:
			save(c, "main", "ci", 2000)
		default:
			save(c, "main", "ci", 1000)
		}
	}

	res, err := Changes(ctx, s, Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) != 2 || res.Window != DefaultWindow || len(res.Filters) != 0 {
		t.Fatalf("result %+v", res)
	}
	feature, main := res.Series[0], res.Series[1]
	if feature.Branch != "feature" || feature.Machine != "laptop" || len(feature.Commits) != 2 ||
		main.Branch != "main" || main.Machine != "ci" || len(main.Commits) != 6 || len(main.Machines) != 1 {
		t.Fatalf("series %+v\n%+v", feature, main)
	}
	for i, c := range main.Commits {
		if i < 5 && c.Changed {
			t.Errorf("main commit %d marked against %s: %+v", i, c.Previous, c)
		}
	}
	last := main.Commits[5]
	if !last.Changed || last.Better != -1 || last.Delta == nil || *last.Delta < 0.9 || last.Previous != main.Commits[4].Ref {
		t.Errorf("the doubling: %+v", last)
	}
	if first := feature.Commits[0]; first.Delta != nil || first.P != nil || first.Changed || first.Previous != "" {
		t.Errorf("the first commit of a branch has nothing to compare with: %+v", first)
	}
	byCommit := ByCommit(res.Series, 3)
	if len(byCommit) != 3 || byCommit[0].Ref != last.Ref || len(byCommit[0].Changes) != 1 || byCommit[0].Regressions() != 1 ||
		byCommit[0].Changes[0].Previous != main.Commits[4].Ref {
		t.Errorf("by commit: %+v", byCommit)
	}

	res, err = Changes(ctx, s, Query{Filter: store.Filter{Machine: "laptop"}, Window: AllCommits})
	if err != nil || len(res.Series) != 1 || res.Series[0].Branch != "feature" || res.Window != 0 ||
		!slices.Equal(res.Filters, []string{"machine laptop"}) {
		t.Errorf("machine laptop: %+v, %v", res, err)
	}
	if _, err := Changes(ctx, s, Query{Filter: store.Filter{Name: "NoSuch"}}); !errors.Is(err, ErrNoBenchmarks) {
		t.Errorf("no match: %v, want ErrNoBenchmarks", err)
	}
}
