// Command good prices invoices in integer hundredths of a cent: parsing,
// multiplying, rounding and adding allocate nothing, and the total is
// formatted into a buffer kept across requests.
package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type item struct {
	price string // per unit, e.g. "19.99"
	qty   int
}

var items = []item{{"19.99", 3}, {"4.25", 12}, {"129.00", 1}, {"0.35", 250}, {"12.80", 7}, {"3.10", 40}}

// taxRate is 8.25% in basis points of a hundredth.
const taxRate = 825

func main() {
	harness.Main(func(ctx context.Context) {
		n := 0
		var buf []byte
		harness.Loop(ctx, func() {
			buf = invoice(buf[:0], items)
			n += len(buf)
		})
		println(n)
	})
}

// invoice is one request: the total of the items with tax, as text
// appended to buf.
//
//go:noinline
func invoice(buf []byte, items []item) []byte {
	total := int64(0) // cents
	for _, it := range items {
		amount := cents(it.price) * int64(it.qty)
		total += amount + (amount*taxRate+5000)/10000
	}
	buf = strconv.AppendInt(buf, total/100, 10)
	buf = append(buf, '.', byte('0'+total/10%10), byte('0'+total%10))
	return buf
}

// cents parses a price such as "19.99" into cents.
func cents(s string) int64 {
	whole, frac, _ := strings.Cut(s, ".")
	c, _ := strconv.ParseInt(whole, 10, 64)
	for i := range 2 {
		c *= 10
		if i < len(frac) {
			c += int64(frac[i] - '0')
		}
	}
	return c
}
