package findings

import "testing"

func TestGCPressure(t *testing.T) {
	checkRule(t, "gc-pressure", "gc", nil)
}
