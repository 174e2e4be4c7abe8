// Command good appends each response by hand with strconv: no
// reflection, no allocation.
package main

import (
	"context"
	"strconv"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type account struct {
	id, currency  string
	debit, credit float64
	count         int
	tags          []string
}

func main() {
	a := account{id: "acct-1", currency: "EUR", debit: 1520.25, credit: 310.5, count: 42, tags: []string{"retail", "eu", "verified"}}
	harness.Main(func(ctx context.Context) {
		n := 0
		var buf []byte
		harness.Loop(ctx, func() {
			buf = respond(buf[:0], a)
			n += len(buf)
		})
		println(n)
	})
}

//go:noinline
func respond(dst []byte, a account) []byte {
	dst = append(dst, `{"account":`...)
	dst = strconv.AppendQuote(dst, a.id)
	dst = append(dst, `,"balance":`...)
	dst = strconv.AppendFloat(dst, a.credit-a.debit, 'g', -1, 64)
	dst = append(dst, `,"count":`...)
	dst = strconv.AppendInt(dst, int64(a.count), 10)
	dst = append(dst, `,"credit":`...)
	dst = strconv.AppendFloat(dst, a.credit, 'g', -1, 64)
	dst = append(dst, `,"currency":`...)
	dst = strconv.AppendQuote(dst, a.currency)
	dst = append(dst, `,"debit":`...)
	dst = strconv.AppendFloat(dst, a.debit, 'g', -1, 64)
	dst = append(dst, `,"tags":`...)
	dst = appendTags(dst, a.tags)
	dst = append(dst, "}\n"...)
	return appendTags(dst, a.tags)
}

func appendTags(dst []byte, tags []string) []byte {
	dst = append(dst, '[')
	for i, t := range tags {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendQuote(dst, t)
	}
	return append(dst, ']')
}
