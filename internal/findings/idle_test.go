package findings

import "testing"

func TestNotBottleneck(t *testing.T) {
	checkRule(t, "not-bottleneck", "idle", nil)
}
