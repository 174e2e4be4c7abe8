// Command bad calls a debug logger with ...any arguments on its hot path.
// Debug logging is off, yet every argument is boxed into an interface on
// the heap before the call, because the logger may keep it.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type logger struct{ debug bool }

//go:noinline
func (l *logger) Debug(msg string, args ...any) {
	if l.debug {
		fmt.Fprintln(os.Stderr, append([]any{msg}, args...)...)
	}
}

type event struct {
	id, size int
	user     string
	latency  float64
}

func main() {
	l := &logger{}
	events := make([]event, 256)
	for i := range events {
		events[i] = event{id: 1000 + i, size: 4096 + i, user: fmt.Sprint("user-", i), latency: float64(i) / 3}
	}
	harness.Main(func(ctx context.Context) {
		total := 0
		harness.Loop(ctx, func() { total += process(l, events) })
		println(total)
	})
}

//go:noinline
func process(l *logger, events []event) int {
	total := 0
	for _, e := range events {
		l.Debug("event", "id", e.id, "size", e.size, "user", e.user, "latency", e.latency) // want: iface-escape
		total += e.size
	}
	return total
}
