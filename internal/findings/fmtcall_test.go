package findings

import "testing"

func TestFmtHot(t *testing.T) {
	checkRule(t, "fmt-hot", "fmt", escapeIndex(t))
}
