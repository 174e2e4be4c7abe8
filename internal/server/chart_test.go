package server

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/store"
)

// syntheticPoints is a metric over n commits: 2% noise around a level that
// rises 30% at commit n/2.
func syntheticPoints(n int) []store.SeriesPoint {
	rng := rand.New(rand.NewPCG(3, 3))
	points := make([]store.SeriesPoint, n)
	for i := range points {
		level := 1000.0
		if i >= n/2 {
			level = 1300
		}
		vals := make([]float64, 10)
		for j := range vals {
			vals[j] = level * (1 + 0.02*rng.NormFloat64()) * 1e-9
		}
		points[i] = store.SeriesPoint{
			Commit: store.Commit{Hash: fmt.Sprintf("%040x", i+1), Time: epoch.Add(time.Duration(i) * time.Hour), Runs: 1, Machines: []string{"m"}},
			Values: vals,
		}
	}
	return points
}

func TestTrendChart(t *testing.T) {
	points := syntheticPoints(40)
	v := newSeriesView(store.SeriesKey{Package: "p", Name: "X-8", Unit: "sec/op"}, points, history.Options{})
	var changed []int
	for i, c := range v.Commits {
		if c.Changed {
			changed = append(changed, i)
		}
	}
	if len(changed) != 1 || changed[0] != 20 {
		t.Fatalf("changed commits %v, want [20]", changed)
	}
	svg := string(trendChart(v, func(base, head string) string { return "/compare?base=" + base + "&head=" + head }))
	if n := strings.Count(svg, "<circle"); n != 40 {
		t.Errorf("%d points drawn, want 40", n)
	}
	want := fmt.Sprintf(`<a href="/compare?base=%040x&amp;head=%040x"><circle class="change worse"`, 20, 21)
	if !strings.Contains(svg, want) {
		t.Errorf("the change point is not a link to its comparison (%s):\n%.2000s", want, svg)
	}
	if !strings.Contains(svg, "+30.") || !strings.Contains(svg, `class="band"`) || !strings.Contains(svg, `class="median"`) {
		t.Errorf("chart lacks the change's tooltip, the band or the median line:\n%.2000s", svg)
	}
}

// BenchmarkTrendPage measures what the server does for a trend page beyond
// reading the store: change detection over 5,000 commits and the chart.
func BenchmarkTrendPage(b *testing.B) {
	points := syntheticPoints(5000)
	link := func(base, head string) string { return compareLink(base, head, nil) }
	for b.Loop() {
		v := newSeriesView(store.SeriesKey{Package: "p", Name: "X-8", Unit: "sec/op"}, points, history.Options{})
		_ = trendChart(v, link)
	}
}

func TestSeriesCacheBudget(t *testing.T) {
	c := newSeriesCache(100)
	view := func(n int) *seriesView { return &seriesView{Series: history.Series{Commits: make([]seriesCommit, n)}} }
	v1 := store.Version{MaxID: 1, Runs: 1}
	c.put("a", v1, view(60))
	c.put("b", v1, view(30))
	if c.get("a", v1) == nil || c.get("b", v1) == nil {
		t.Fatal("entries within the budget were dropped")
	}
	c.put("c", v1, view(30)) // 120 > 100: the least recently used, a, goes
	if c.get("a", v1) != nil || c.get("b", v1) == nil || c.get("c", v1) == nil || c.size != 60 {
		t.Errorf("after exceeding the budget: a %v, b %v, c %v, size %d", c.get("a", v1) != nil, c.get("b", v1) != nil, c.get("c", v1) != nil, c.size)
	}
	if c.get("b", store.Version{MaxID: 2, Runs: 2}) != nil || c.size != 30 {
		t.Errorf("a stale entry was served or kept (size %d)", c.size)
	}
	c.put("huge", v1, view(101))
	if c.get("huge", v1) != nil || c.size != 30 {
		t.Errorf("an entry larger than the budget was kept (size %d)", c.size)
	}
}
