package findings

import "testing"

func TestLockWait(t *testing.T) {
	checkRule(t, "lock-wait", "lockwait", nil)
}
