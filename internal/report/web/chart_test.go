package web

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/store"
)

var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

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
	v := history.NewSeries(store.SeriesKey{Package: "p", Name: "X-8", Unit: "sec/op"}, history.Line{Branch: "main", Machine: "ci"}, points, history.Options{})
	var changed []int
	for i, c := range v.Commits {
		if c.Changed {
			changed = append(changed, i)
		}
	}
	if len(changed) != 1 || changed[0] != 20 {
		t.Fatalf("changed commits %v, want [20]", changed)
	}
	svg := string(TrendChart(&v, func(base, head string) string { return "/compare?base=" + base + "&head=" + head }))
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
	link := func(base, head string) string { return CompareLink(base, head, nil) }
	for b.Loop() {
		v := history.NewSeries(store.SeriesKey{Package: "p", Name: "X-8", Unit: "sec/op"}, history.Line{Branch: "main", Machine: "ci"}, points, history.Options{})
		_ = TrendChart(&v, link)
	}
}

// TestAxisLabels checks the labels a trend chart's axes get: dates that
// always include the last commit's without crowding it, and values at round
// steps of the unit as it is printed.
func TestAxisLabels(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []int
	}{
		{1, []int{0}},
		{5, []int{0, 1, 2, 3, 4}},
		{10, []int{0, 2, 4, 6, 9}},
		{13, []int{0, 3, 6, 9, 12}},
		{1000, []int{0, 167, 334, 501, 668, 835, 999}},
	} {
		if got := xLabelIndexes(tc.n); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("xLabelIndexes(%d) = %v; want %v", tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		lo, hi float64
		unit   string
		want   string
	}{
		{860, 3230, "B/op", "[1 KiB 1.5 KiB 2 KiB 2.5 KiB 3 KiB]"},
		{0.9e-6, 1.45e-6, "sec/op", "[1µs 1.2µs 1.4µs]"},
		{0.5, 1.5, "allocs/op", "[0.6 0.8 1 1.2 1.4]"},
	} {
		var got []string
		for _, v := range yTicks(tc.lo, tc.hi, tc.unit) {
			got = append(got, measure.Format(v, tc.unit))
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("yTicks(%g, %g, %s) label %v; want %s", tc.lo, tc.hi, tc.unit, got, tc.want)
		}
	}
}

func TestPointTitleNamesTheCommit(t *testing.T) {
	c := history.Commit{Ref: "0123456789abcdef", Branch: "main", Time: epoch, Median: 1e-6,
		Subject: "parse: <b>skip</b> copies", Author: "Ada Lovelace"}
	got := pointTitle(c, "sec/op")
	want := "0123456789ab  2025-03-01 12:00  main\nparse: <b>skip</b> copies — Ada Lovelace\nmedian "
	if !strings.HasPrefix(got, want) {
		t.Errorf("pointTitle = %q, want it to start %q", got, want)
	}
	c.Subject, c.Author, c.Branch = "", "", ""
	if got := pointTitle(c, "sec/op"); strings.Count(got, "\n") != 1 {
		t.Errorf("a commit recorded without subject, author or branch: %q", got)
	}
	// The chart escapes what the title holds.
	c.Subject = "<script>x</script>"
	series := &history.Series{Unit: "sec/op", Commits: []history.Commit{c, c}}
	if svg := string(TrendChart(series, nil)); strings.Contains(svg, "<script>") || !strings.Contains(svg, "&lt;script&gt;") {
		t.Errorf("the chart writes a subject unescaped")
	}
}

// TestReleaseMarks: a time chart marks each version that began inside
// its range, with what changed, and none that began outside it.
func TestReleaseMarks(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	rs := Releases([]profseries.Version{
		{Value: "1.0", First: t0},
		{Value: "1.1", First: t0.Add(40 * time.Minute)},
		{Value: "1.2", First: t0.Add(3 * time.Hour)},
	})
	if len(rs) != 2 || rs[0].Label != "1.0 → 1.1" || rs[1].Label != "1.1 → 1.2" {
		t.Fatalf("releases %+v", rs)
	}
	g := GaugeLine{Gauge: profseries.Gauges[0], Step: time.Minute, Points: []profseries.GaugePoint{{Start: t0, Value: 1, Scrapes: 1}, {Start: t0.Add(time.Hour), Value: 2, Scrapes: 1}}}
	svg := string(NewTimeChart(g, t0, t0.Add(2*time.Hour), rs).SVG)
	if !strings.Contains(svg, `<g class="release">`) || !strings.Contains(svg, ">1.0 → 1.1</text>") {
		t.Errorf("the chart does not mark 1.1's start: %s", svg)
	}
	if strings.Contains(svg, "1.1 → 1.2") {
		t.Errorf("the chart marks a release after its range")
	}
}
