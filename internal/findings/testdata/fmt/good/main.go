// Command good appends StatsD lines to a reused buffer with strconv.
package main

import (
	"context"
	"strconv"

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
		var buf []byte
		harness.Loop(ctx, func() {
			for _, m := range ms {
				buf = appendLine(buf[:0], "svc", m)
				n += len(buf)
			}
		})
		println(n)
	})
}

//go:noinline
func appendLine(b []byte, prefix string, m metric) []byte {
	b = append(b, prefix...)
	b = append(b, '.')
	b = append(b, m.name...)
	b = append(b, ':')
	if m.ms > 0 {
		b = strconv.AppendFloat(b, m.ms, 'f', 3, 64)
		return append(b, "|ms"...)
	}
	b = strconv.AppendInt(b, m.value, 10)
	return append(b, "|c"...)
}
