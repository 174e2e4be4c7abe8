// Command good checks the debug level before building the call's
// arguments, so nothing is boxed while debug logging is off.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type logger struct{ debug bool }

func (l *logger) Enabled() bool { return l.debug }

//go:noinline
func (l *logger) Debug(msg string, args ...any) {
	fmt.Fprintln(os.Stderr, append([]any{msg}, args...)...)
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
		if l.Enabled() {
			l.Debug("event", "id", e.id, "size", e.size, "user", e.user, "latency", e.latency)
		}
		total += e.size
	}
	return total
}
