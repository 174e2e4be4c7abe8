package profiles

import (
	"strings"
	"testing"
)

func TestGoroutineGrowth(t *testing.T) {
	g, err := GoroutineGrowth(load(t, "goroutine_start"), load(t, "goroutine_end"), 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.End-g.Start < 25 {
		t.Errorf("goroutines %d -> %d, want at least 25 more", g.Start, g.End)
	}
	if len(g.Grew) == 0 {
		t.Fatal("no stack grew")
	}
	top := g.Grew[0]
	if top.Function != "main.parkForever" || top.Line != siteLine(t, "park") || top.Delta < 20 || top.Start != 0 {
		t.Errorf("top growth: %+v, want main.parkForever line %d +25", top, siteLine(t, "park"))
	}
	// A goroutine caught between starting and parking has a stack of its
	// own; together they are the 25 the workload started.
	var parked int64
	for _, sg := range g.Grew {
		if sg.Function == "main.parkForever" {
			parked += sg.Delta
		}
	}
	if parked != 25 {
		t.Errorf("main.parkForever grew by %d, want 25", parked)
	}
	if !strings.HasPrefix(top.Wait, "runtime.chanrecv") {
		t.Errorf("parked in %q, want runtime.chanrecv*", top.Wait)
	}
	if len(top.Stack) < 2 || !strings.HasPrefix(top.Stack[0], "runtime.gopark ") {
		t.Errorf("stack %v", top.Stack)
	}
	if _, err := GoroutineGrowth(nil, load(t, "goroutine_end"), 5, nil); err == nil {
		t.Error("no error without a start profile")
	}
}
