package dashboard

import (
	"testing"
	"time"
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
