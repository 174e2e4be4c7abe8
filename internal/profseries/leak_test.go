package profseries

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestHeapLeakOfNewGoroutines: heap that grows on a stack with no frame
// of the program — the runtime allocating new goroutines' structures and
// stacks on its own system stack — is named by the runtime function that
// allocated and said to be goroutines', not "allocated at
// runtime.systemstack"; a growing stack with a frame of the program is
// named by that frame as before.
//
// testdata/leaky-heap.pb.gz is the heap profile (/debug/pprof/heap?gc=1)
// of the leftpad example run with --mode leaky after 15 s of load: its
// parked goroutines' runtime.malg stack and its handlers' stacks. The
// snapshots grow both stacks' levels by a few percent each, as they grew
// in that run.
func TestHeapLeakOfNewGoroutines(t *testing.T) {
	p := profileFile(t, "testdata/leaky-heap.pb.gz")
	grows := func(s *profile.Sample) (runtime, user bool) {
		for _, l := range s.Location {
			for _, ln := range l.Line {
				switch ln.Function.Name {
				case "runtime.malg":
					runtime = true
				case "github.com/perfscope/perfscope/examples/leftpad.(*accessLog).request":
					user = true
				}
			}
		}
		return runtime, user
	}
	var found [2]bool
	for _, s := range p.Sample {
		r, u := grows(s)
		found[0], found[1] = found[0] || r, found[1] || u
	}
	if !found[0] || !found[1] {
		t.Fatalf("the recorded heap profile lacks a stack through runtime.malg (%v) or (*accessLog).request (%v)", found[0], found[1])
	}

	c, d := NewCodec(), NewDictionary()
	start := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	var ws []Window
	for i := range 30 {
		q := p.Copy()
		q.TimeNanos, q.DurationNanos = start.Add(time.Duration(i)*10*time.Second).UnixNano(), 0
		for _, s := range q.Sample {
			if r, u := grows(s); r || u {
				// 2 MiB more in use per snapshot on each growing stack.
				s.Value[3] += int64(i) << 21
				s.Value[2] += int64(i) * 64
			}
		}
		w, _ := window(t, c, d, q)
		ws = append(ws, w)
	}
	target := Labels{{Name: "job", Value: "leftpad"}}
	leaks, _, err := Leaks(target, Heap, ws, d, LeakOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var goroutines, user *Leak
	for i, l := range leaks {
		t.Logf("%s (runtime only %v, new goroutines %v): %.0f per hour", l.StartedAt, l.RuntimeOnly, l.NewGoroutines, l.PerHour)
		switch {
		case strings.HasPrefix(l.StartedAt, "runtime.malg "):
			goroutines = &leaks[i]
		case strings.Contains(l.StartedAt, "(*accessLog).request "):
			user = &leaks[i]
		}
		if strings.Contains(l.StartedAt, "systemstack") {
			t.Errorf("a leak named after the runtime's stack switch: %s", l.StartedAt)
		}
	}
	if goroutines == nil || !goroutines.RuntimeOnly || !goroutines.NewGoroutines {
		t.Errorf("the runtime.malg stack is not named as new goroutines' heap: %+v", goroutines)
	}
	if user == nil || user.RuntimeOnly || user.NewGoroutines {
		t.Fatalf("the (*accessLog).request stack is not named by its own frame: %+v", user)
	}
	// Its levels are the stack's level in each snapshot: 2 MiB more a
	// snapshot on each of its samples.
	if len(user.Levels) != 30 {
		t.Fatalf("the leak carries %d levels, want one per snapshot (30)", len(user.Levels))
	}
	per := user.Levels[1].Value - user.Levels[0].Value
	if per <= 0 || math.Mod(per, 1<<21) != 0 {
		t.Errorf("the leak's level grew by %v between its first two snapshots, want a positive multiple of 2 MiB", per)
	}
	for i, l := range user.Levels {
		if at := start.Add(time.Duration(i) * 10 * time.Second); !l.At.Equal(at) || l.Value != user.Levels[0].Value+float64(i)*per {
			t.Errorf("level %d is %v at %v, want %v at %v", i, l.Value, l.At, user.Levels[0].Value+float64(i)*per, at)
		}
	}
	if float64(user.Start) != user.Levels[0].Value || float64(user.End) != user.Levels[29].Value {
		t.Errorf("the levels run from %v to %v, the leak says %d to %d", user.Levels[0].Value, user.Levels[29].Value, user.Start, user.End)
	}
}

// TestLeakSpacing checks the spacing of the snapshots read for a range:
// every one up to 40 minutes, then at most about 240 of them.
func TestLeakSpacing(t *testing.T) {
	for _, c := range []struct{ span, want time.Duration }{
		{10 * time.Minute, 0}, {40 * time.Minute, 0}, {41 * time.Minute, time.Minute}, {time.Hour, time.Minute},
		{4 * time.Hour, time.Minute}, {6 * time.Hour, 10 * time.Minute}, {24 * time.Hour, 10 * time.Minute},
		{40 * time.Hour, 10 * time.Minute}, {7 * 24 * time.Hour, time.Hour},
	} {
		if got := leakSpacing(c.span); got != c.want {
			t.Errorf("leakSpacing(%v) = %v, want %v", c.span, got, c.want)
		}
	}
}
