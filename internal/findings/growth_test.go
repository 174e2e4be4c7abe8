package findings

import "testing"

func TestGrowth(t *testing.T) {
	checkRule(t, "growth", "growth", nil)
}
