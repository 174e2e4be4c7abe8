// Command bad formats StatsD lines with fmt.Sprintf for every metric.
package main

import (
	"fmt"

	"context"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type metric struct {
	name  string
	value int64
	ms    float64
}

func main() {
	ms := []metric{{"requests", 1, 0}, {"errors", 0, 0}, {"latency", 0, 12.5}}
	harness.Main(func(ctx context.Context) {
		n := 0
		harness.Loop(ctx, func() {
			for _, m := range ms {
				n += len(line("svc", m))
			}
		})
		println(n)
	})
}

//go:noinline
func line(prefix string, m metric) string {
	if m.ms > 0 {
		return fmt.Sprintf("%s.%s:%.3f|ms", prefix, m.name, m.ms) // want: fmt-hot
	}
	return fmt.Sprintf("%s.%s:%d|c", prefix, m.name, m.value) // want: fmt-hot
}
