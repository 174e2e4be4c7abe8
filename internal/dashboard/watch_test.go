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
