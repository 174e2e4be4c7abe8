// Package sleep has a benchmark that takes as long as it is told and no
// CPU, for testing what becomes of a run that is stopped: at -benchtime
// Nx it runs for about N milliseconds.
package sleep

import (
	"testing"
	"time"
)

func BenchmarkSleep(b *testing.B) {
	for range b.N {
		time.Sleep(time.Millisecond)
	}
}
