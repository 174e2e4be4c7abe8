package profiles

import (
	"testing"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/run"
)

// TestSubtract subtracts the goroutine profile taken at the start of a
// real run from the one taken at its end: the difference sums to end −
// start, its base samples to −start, and the inputs are left as they were.
func TestSubtract(t *testing.T) {
	_, ps := leftpad(t, run.KindGoroutineStart, run.KindGoroutineEnd)
	start, end := ps[0], ps[1]
	sum := func(p *profile.Profile) (all, base int64) {
		for _, s := range p.Sample {
			all += s.Value[0]
			if FromBase(s) {
				base += s.Value[0]
			}
		}
		return all, base
	}
	startTotal, _ := sum(start)
	endTotal, _ := sum(end)
	if startTotal == 0 || endTotal == 0 {
		t.Fatalf("goroutines %d -> %d: the committed profiles are empty", startTotal, endTotal)
	}
	diff, err := Subtract(end, start)
	if err != nil {
		t.Fatal(err)
	}
	all, base := sum(diff)
	if all != endTotal-startTotal || base != -startTotal {
		t.Errorf("difference sums to %d with %d from the base; want %d and %d", all, base, endTotal-startTotal, -startTotal)
	}
	if again, _ := sum(start); again != startTotal {
		t.Errorf("the base changed: %d goroutines, was %d", again, startTotal)
	}
	if _, err := Subtract(end, nil); err == nil {
		t.Error("no error without a base")
	}
}
