package bench

import (
	"context"
	"errors"
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
