package fetch

import (
	"bytes"
	"runtime"
	rpprof "runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestDeltaBetween subtracts two real cumulative allocation snapshots of
// this process: what was allocated in between shows, the rest cancels out.
func TestDeltaBetween(t *testing.T) {
	snap := func() Snapshot {
		t.Helper()
		runtime.GC() // the allocation profile is published at the end of a GC cycle
		var buf bytes.Buffer
		if err := rpprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return Snapshot{Profile: p, At: time.Now()}
	}
	start := snap()
	var keep [][]byte
	for range 200 {
		keep = append(keep, allocateForDelta())
	}
	runtime.KeepAlive(keep)
	end := snap()

	d, err := DeltaBetween(start, end)
	if err != nil {
		t.Fatal(err)
	}
	if d.DurationNanos != end.At.Sub(start.At).Nanoseconds() || d.TimeNanos != start.At.UnixNano() {
		t.Errorf("delta timed %d+%d; want the interval between the snapshots", d.TimeNanos, d.DurationNanos)
	}
	if len(d.Sample) >= len(end.Profile.Sample) {
		t.Errorf("delta has %d samples, the cumulative end %d; want fewer", len(d.Sample), len(end.Profile.Sample))
	}
	found := false
	for _, s := range d.Sample {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if strings.HasSuffix(line.Function.Name, "allocateForDelta") && s.Value[1] > 0 {
					found = true
				}
			}
		}
	}
	if !found {
		t.Error("the allocations made between the snapshots are not in the delta")
	}
	if len(start.Profile.Sample) == 0 {
		t.Fatal("empty start snapshot")
	}
}

//go:noinline
func allocateForDelta() []byte { return make([]byte, 64<<10) }
