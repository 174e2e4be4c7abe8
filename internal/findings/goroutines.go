package findings

import (
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// Thresholds of the goroutine-growth rule: a stack must gain at least
// goroutineMinGrowth goroutines and end with at least goroutineFactor
// times as many as it started with. Load keeps a steady number of
// connection goroutines; a leak adds some per request.
const (
	goroutineMinGrowth = 20
	goroutineFactor    = 2.0
)

func goroutineRule() Rule {
	return Rule{
		ID:        "goroutine-growth",
		Title:     "Goroutines pile up during the run",
		Summary:   "the number of goroutines parked at one place grew between the start and the end of the load: a possible leak",
		Resources: []Resource{Goroutines},
		Explanation: sentence(`
Under a steady load a service keeps a steady number of goroutines: one per
connection, plus its workers. Goroutines that grow with the number of requests
served are waiting for something that never comes (a channel send nobody
receives, a response nobody reads, a context never cancelled): each holds its
stack and everything it references, until memory runs out.

The rule compares the goroutine profiles taken at the start and the end of the
profiled window, stack by stack (same functions at the same lines). It fires
on stacks that gained at least {} goroutines and ended with at least {}
times as many as they started with, naming where they wait. Severity is the
share of the goroutines at the end that those stacks added.`,
			count(goroutineMinGrowth), count(goroutineFactor)),
		Fix: Fix{
			Summary: "Give every goroutine a way to finish: a buffered channel or a select with ctx.Done() on its sends and receives, a timeout on its I/O, and an owner that waits for it.",
			Example: `// before: blocks forever when nobody receives
go func() { results <- compute() }()

// after: gives up when the request is over
go func() {
	select {
	case results <- compute():
	case <-ctx.Done():
	}
}()`,
		},
		check: checkGoroutines,
	}
}

func checkGoroutines(e *env, r *Rule) []Finding {
	start, end := e.a.Profiles[run.KindGoroutineStart], e.a.Profiles[run.KindGoroutineEnd]
	if start == nil || end == nil {
		return nil
	}
	g, err := profiles.GoroutineGrowth(start, end, 0, e.a.Classifier)
	if err != nil || g.End == 0 {
		return nil
	}
	var evs []Evidence
	var added int64
	for _, s := range g.Grew {
		if s.Delta < goroutineMinGrowth || float64(s.End) < goroutineFactor*float64(s.Start) {
			continue
		}
		added += s.Delta
		ev := Evidence{
			Function: s.Function, File: s.File, Line: s.Line, Call: s.Wait, Stack: s.Stack,
			Measures: []Measure{{Resource: Goroutines, Value: s.End, Unit: "goroutines", Share: profiles.Share(s.End, g.End)}},
			Detail:   sentence("{} → {} goroutines", count(s.Start), count(s.End)),
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 {
		return nil
	}
	share := profiles.Share(added, g.End)
	first := evs[0]
	summary := sentence("Goroutines grew from {} to {} during the window; {} of them wait in {} at {} ({}). They may be leaking.",
		count(g.Start), count(g.End), count(added), first.Function, short(first.File, first.Line), first.Call)
	return []Finding{r.finding(share, Goroutines, summary, evs)}
}
