//go:build !linux

package bench

import "time"

// processCPU reports that this system does not say what CPU time a running
// process has used (without cgo): a count's run is then bounded by wall time.
func processCPU(pid int) (time.Duration, bool) { return 0, false }
