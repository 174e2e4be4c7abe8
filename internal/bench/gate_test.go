package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRunGate(t *testing.T) {
	dir := t.TempDir()
	writeModule(t, dir, map[string]string{"go.mod": smallModule, "small_test.go": smallBench})
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "init")

	ctx := context.Background()
	g, err := BuildGate(ctx, GateOptions{Dir: dir, BaseRef: "HEAD", Benchtime: "10x"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	// Two rounds, then three more, as the gate extends a noisy run.
	for _, rounds := range []int{2, 3} {
		if err := g.Measure(ctx, rounds); err != nil {
			t.Fatal(err)
		}
	}
	run := g.Run
	if run.Rounds != 5 {
		t.Errorf("ran %d rounds, want 5", run.Rounds)
	}
	// Two benchmarks, five rounds, each side.
	if nb, nh := len(run.Base.Results), len(run.Head.Results); nb != 10 || nh != 10 {
		t.Errorf("%d base and %d head results, want 10 each", nb, nh)
	}

	if _, err := RunGate(context.Background(), GateOptions{Dir: dir, BaseRef: "nope", Rounds: 1}); !errors.Is(err, ErrUnknownRef) {
		t.Errorf("unknown ref: %v", err)
	}
	writeModule(t, dir, map[string]string{"extra.go": "package small\n"})
	if _, err := RunGate(context.Background(), GateOptions{Dir: dir, BaseRef: "HEAD", Rounds: 1}); !errors.Is(err, ErrDirty) {
		t.Errorf("dirty tree: %v", err)
	}
}

// coldBench's first operation in a process takes 300 ms (a cache it
// fills, say); every other is a few nanoseconds. At -benchtime 50ms Go's
// testing would report that one operation as the result.
const coldBench = `package small

import (
	"sync"
	"testing"
	"time"
)

var fill sync.Once

func BenchmarkCold(b *testing.B) {
	for i := 0; i < b.N; i++ {
		fill.Do(func() { time.Sleep(300 * time.Millisecond) })
	}
}

func BenchmarkWarm(b *testing.B) {
	for i := 0; i < b.N; i++ {
		fill.Do(func() {})
	}
}
`

// TestGateMeasuresWarm: a benchmark whose first operation outlasts the
// benchtime is measured warm, never as that one cold operation, in the
// round that found it and in every round after, extensions included.
func TestGateMeasuresWarm(t *testing.T) {
	dir := t.TempDir()
	writeModule(t, dir, map[string]string{"go.mod": smallModule, "small_test.go": coldBench})
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "init")

	ctx := context.Background()
	g, err := BuildGate(ctx, GateOptions{Dir: dir, BaseRef: "HEAD", Benchtime: "50ms", Bench: "Cold"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, rounds := range []int{2, 1} {
		if err := g.Measure(ctx, rounds); err != nil {
			t.Fatal(err)
		}
	}
	run := g.Run
	if len(run.Raw.Cold) != 1 || !strings.HasPrefix(run.Raw.Cold[0], "BenchmarkCold") {
		t.Errorf("cold benchmarks %q, want BenchmarkCold", run.Raw.Cold)
	}
	for side, res := range map[string]*Results{"base": run.Base, "head": run.Head} {
		// Round 1's cold result is dropped; rounds 2 and 3 are warm.
		if len(res.Results) != 2 {
			t.Errorf("%s: %d results, want 2 (the cold one dropped):\n%s", side, len(res.Results), run.Raw.Head)
		}
		for _, r := range res.Results {
			if r.Iters <= 1 {
				t.Errorf("%s: %s ran %d iteration, measured cold:\n%s", side, r.Name, r.Iters, run.Raw.Head)
			}
		}
	}
}

func TestWarmResults(t *testing.T) {
	out := "goos: linux\nBenchmarkA-2   \t       1\t68000000 ns/op\t 5554000 B/op\t  900 allocs/op\nBenchmarkB-2   \t   64000\t     775.0 ns/op\t      19 B/op\t       1 allocs/op\nPASS\n"
	kept, cold := warmResults([]byte(out), false, true)
	if want := "goos: linux\nBenchmarkB-2   \t   64000\t     775.0 ns/op\t      19 B/op\t       1 allocs/op\nPASS\n"; string(kept) != want || len(cold) != 1 || cold[0] != "BenchmarkA-2" {
		t.Errorf("cold run: kept %q, cold %q", kept, cold)
	}
	if kept, cold := warmResults([]byte(out), false, false); string(kept) != out || cold != nil {
		t.Errorf("-benchtime Nx: a result of one iteration is what was asked; kept %q, cold %q", kept, cold)
	}
	twice := out + "BenchmarkA-2   \t       3\t 1000 ns/op\t 5 B/op\t  1 allocs/op\nBenchmarkB-2   \t   64001\t     776.0 ns/op\t      19 B/op\t       1 allocs/op\n"
	kept, cold = warmResults([]byte(twice), true, true)
	if want := "goos: linux\nPASS\nBenchmarkA-2   \t       3\t 1000 ns/op\t 5 B/op\t  1 allocs/op\nBenchmarkB-2   \t   64001\t     776.0 ns/op\t      19 B/op\t       1 allocs/op\n"; string(kept) != want || cold != nil {
		t.Errorf("twice: kept %q, cold %q", kept, cold)
	}
}
