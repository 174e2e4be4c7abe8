package findings

import "testing"

func TestStdLoggerLock(t *testing.T) {
	checkRule(t, "std-logger-lock", "logger", nil)
}
