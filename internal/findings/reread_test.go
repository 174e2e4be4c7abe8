package findings

import "testing"

func TestReread(t *testing.T) {
	checkRule(t, "reread", "reread", nil)
}
