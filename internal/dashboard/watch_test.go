package dashboard

import (
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestSparkStep checks the services' sparklines' steps: about sparkPoints
// of them, each a bucket the store sums (ten minutes, an hour) or whole
// numbers of them above an hour, and their range whole steps.
func TestSparkStep(t *testing.T) {
	now := time.Date(2026, 11, 27, 20, 7, 40, 0, time.UTC)
	for _, c := range []struct {
		since time.Duration
		want  time.Duration
	}{
		{15 * time.Minute, 20 * time.Second},
		{time.Hour, time.Minute},
		{6 * time.Hour, 10 * time.Minute},
		{12 * time.Hour, time.Hour}, // 15 minutes would be read as ten-minute sums cut in halves
		{24 * time.Hour, time.Hour},
		{7 * 24 * time.Hour, 3 * time.Hour},
	} {
		step := sparkStep(now.Add(-c.since), now)
		if step != c.want {
			t.Errorf("%v: step %v, want %v", c.since, step, c.want)
		}
		from, to := wholeSteps(now.Add(-c.since), step), wholeSteps(now.Add(step-1), step)
		if from.UnixNano()%int64(step) != 0 || to.UnixNano()%int64(step) != 0 || from.After(now.Add(-c.since)) || to.Before(now) || to.Sub(now) > step {
			t.Errorf("%v: whole steps %v to %v do not hold the range %v to %v in steps of %v", c.since, from, to, now.Add(-c.since), now, step)
		}
	}
}

// TestChartStep checks the service page's steps: SeriesStep's for a few
// series, a minute at least for many.
func TestChartStep(t *testing.T) {
	now := time.Date(2026, 11, 27, 20, 7, 40, 0, time.UTC)
	for _, c := range []struct {
		since  time.Duration
		series int
		want   time.Duration
	}{
		{time.Hour, 1, 20 * time.Second},
		{time.Hour, manySeries, 20 * time.Second},
		{time.Hour, manySeries + 1, time.Minute},
		{15 * time.Minute, 100, time.Minute},
		{24 * time.Hour, 100, 10 * time.Minute},
	} {
		if got := chartStep(now.Add(-c.since), now, c.series); got != c.want {
			t.Errorf("%v of %d series: step %v, want %v", c.since, c.series, got, c.want)
		}
	}
}

// TestParseRange checks the service page's ranges: one counted back from
// now starts at a whole step of its grain, holds the range asked and ends
// where it was asked to, and its charts' steps start with it, for few
// series and many; a range of dates is read as written.
func TestParseRange(t *testing.T) {
	now := time.Date(2026, 11, 27, 20, 7, 40, 0, time.UTC)
	for _, c := range []struct {
		from, to string
		grain    time.Duration
	}{
		{"15m", "", 10 * time.Second},
		{"1h", "", time.Minute},
		{"1h", "now", time.Minute},
		{"2h", "", time.Minute},
		{"6h", "", 2 * time.Minute},
		{"24h", "", 10 * time.Minute},
		{"7d", "", time.Hour},
		{"25h", "1h", 10 * time.Minute},
	} {
		f, to, err := parseRange(c.from, c.to, now)
		if err != nil {
			t.Fatalf("%s to %q: %v", c.from, c.to, err)
		}
		wf, wt, _ := profseries.ParseRange("", c.from, c.to, now)
		if f.After(wf) || wf.Sub(f) >= c.grain || !to.Equal(wt) {
			t.Errorf("%s to %q: %v to %v does not start within a grain of %v before %v and end at %v", c.from, c.to, f, to, c.grain, wf, wt)
		}
		if g := rangeGrain(f, to); g != c.grain || f.UnixNano()%int64(g) != 0 {
			t.Errorf("%s to %q: grain %v, want %v, and %v a whole number of it", c.from, c.to, g, c.grain, f)
		}
		// The charts of a few series start with the range; those of
		// many, in steps of a minute at least, in whole grains.
		if step := chartStep(f, to, 1); f.UnixNano()%int64(step) != 0 {
			t.Errorf("%s to %q: %v is not a whole step of its charts' %v", c.from, c.to, f, step)
		}
		if step := chartStep(f, to, 100); step%c.grain != 0 {
			t.Errorf("%s to %q: the step of many series' charts, %v, is not whole grains of %v", c.from, c.to, step, c.grain)
		}
	}
	f, to, err := parseRange("2026-11-27T10:00:05Z", "2026-11-27T11:00:07Z", now)
	if err != nil || !f.Equal(time.Date(2026, 11, 27, 10, 0, 5, 0, time.UTC)) || !to.Equal(time.Date(2026, 11, 27, 11, 0, 7, 0, time.UTC)) {
		t.Errorf("a range of dates: %v to %v, %v; want it as written", f, to, err)
	}
	// A date from, to now: as written too, from a date a user chose.
	if f, _, _ := parseRange("2026-11-27T10:00:05Z", "", now); !f.Equal(time.Date(2026, 11, 27, 10, 0, 5, 0, time.UTC)) {
		t.Errorf("from a date to now: from %v, want it as written", f)
	}
}
