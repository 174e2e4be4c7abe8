package findings

import "testing"

func TestSmallWrites(t *testing.T) {
	checkRule(t, "small-writes", "writes", nil)
}
