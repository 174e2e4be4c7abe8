package cputime

import (
	"testing"
	"time"
)

func TestProcessGrowsWithWork(t *testing.T) {
	before, err := Process()
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the process clock has visibly moved; a busy machine only
	// makes this take longer, never fail.
	deadline := time.Now().Add(30 * time.Second)
	x := 0
	for time.Now().Before(deadline) {
		for i := range 1_000_000 {
			x += i
		}
		after, err := Process()
		if err != nil {
			t.Fatal(err)
		}
		if after > before {
			return
		}
	}
	t.Fatalf("process CPU time did not grow in 30 s of spinning (%d)", x)
}
