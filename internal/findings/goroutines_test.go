package findings

import "testing"

func TestGoroutineGrowth(t *testing.T) {
	checkRule(t, "goroutine-growth", "goroutines", nil)
}
