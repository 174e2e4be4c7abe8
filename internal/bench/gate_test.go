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

	calls := 0
	run, err := RunGate(context.Background(), GateOptions{
		Dir: dir, BaseRef: "HEAD", Rounds: 2, Benchtime: "10x",
		Extend: func(rounds int, base, head *Results) int {
			calls++
			if rounds == 2 {
				return 3
			}
			return 0
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if run.Rounds != 5 || calls != 2 {
		t.Errorf("ran %d rounds with %d extension calls; want 5 and 2", run.Rounds, calls)
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
