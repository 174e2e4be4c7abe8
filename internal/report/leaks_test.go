package report

import (
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestLeakSentence: each kind of growing stack is said as what it is —
// goroutines by where they started, heap by the line that allocated, and
// heap the runtime allocated for new goroutines as theirs, never as
// allocated "at" a line of the program.
func TestLeakSentence(t *testing.T) {
	from := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	base := profseries.Leak{From: from, To: from.Add(2 * time.Hour), PerHour: 3 << 20, Unit: "bytes"}
	for _, c := range []struct {
		name string
		edit func(*profseries.Leak)
		want string
	}{
		{"goroutines", func(l *profseries.Leak) {
			l.Type, l.Unit, l.PerHour = profseries.Goroutine, "count", 612
			l.StartedAt = "example.com/svc.awaitAudit /src/svc/leak.go:32"
		}, "goroutines started at example.com/svc.awaitAudit (leak.go:32) grew by 612 per hour for 2h"},
		{"heap of a line", func(l *profseries.Leak) {
			l.Type, l.StartedAt = profseries.Heap, "example.com/svc.(*cache).put /src/svc/cache.go:25"
		}, "heap in use allocated at example.com/svc.(*cache).put (cache.go:25) grew by 3 MiB per hour"},
		{"heap of new goroutines", func(l *profseries.Leak) {
			l.Type, l.RuntimeOnly, l.NewGoroutines = profseries.Heap, true, true
			l.StartedAt = "runtime.malg /usr/local/go/src/runtime/proc.go:5274"
		}, "heap in use for new goroutines' structures and stacks, allocated by the runtime at runtime.malg (proc.go:5274) grew by 3 MiB per hour"},
		{"heap of the runtime", func(l *profseries.Leak) {
			l.Type, l.RuntimeOnly = profseries.Heap, true
			l.StartedAt = "runtime.allocm /usr/local/go/src/runtime/proc.go:2200"
		}, "heap in use allocated by the runtime for itself, at runtime.allocm (proc.go:2200)"},
		{"heap of waiting goroutines", func(l *profseries.Leak) {
			l.Type, l.WaitRecords = profseries.Heap, true
			l.StartedAt = "sync.runtime_notifyListWait /usr/local/go/src/runtime/sema.go:598"
		}, "heap in use for waiting goroutines' records (sudogs), allocated by the runtime at sync.runtime_notifyListWait (sema.go:598)"},
	} {
		l := base
		c.edit(&l)
		if got := LeakSentence(l); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want it to contain %q", c.name, got, c.want)
		}
	}
}
