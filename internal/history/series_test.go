package history

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/store"
)

// TestLoad records six commits of one benchmark in a real store, the sixth
// twice as slow, two of them from another machine, and loads its series.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "perfscope.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for c := range 6 {
		ns := 1000.0
		if c == 5 {
			ns = 2000
		}
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
		host := "ci"
		if c >= 4 {
			host = "laptop"
		}
		run := store.BenchRun{Commit: fmt.Sprintf("%040x", c+1), Branch: "main", CommitTime: start.Add(time.Duration(c) * time.Hour),
			Machine: store.Machine{Hostname: host}, Results: results}
		if _, err := s.SaveBenchRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}

	series, err := Load(ctx, s, store.Filter{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 1 || series[0].Unit != "sec/op" || len(series[0].Commits) != 6 || len(series[0].Machines) != 2 {
		t.Fatalf("series %+v", series)
	}
	last := series[0].Commits[5]
	if !last.Changed || last.Better != -1 || last.Delta == nil || *last.Delta < 0.9 || last.Previous != series[0].Commits[4].Ref {
		t.Errorf("the doubling: %+v", last)
	}
	if first := series[0].Commits[0]; first.Delta != nil || first.P != nil || first.Changed {
		t.Errorf("the first commit has nothing to compare with: %+v", first)
	}

	if _, err := Load(ctx, s, store.Filter{Name: "NoSuch"}, Options{}); !errors.Is(err, ErrNoBenchmarks) {
		t.Errorf("no match: %v, want ErrNoBenchmarks", err)
	}
}
