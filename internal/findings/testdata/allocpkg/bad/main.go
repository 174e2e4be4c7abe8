// Command bad prices invoices with a decimal package whose every operation
// returns a new value: parsing, multiplying, rounding and adding each
// allocate at a few lines of the package, none much alone, and together
// they are most of the program's allocations.
package main

import (
	"context"

	"github.com/perfscope/perfscope/internal/findings/testdata/allocpkg/bad/decimal"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type item struct {
	price string // per unit, e.g. "19.99"
	qty   int
}

var (
	items = []item{{"19.99", 3}, {"4.25", 12}, {"129.00", 1}, {"0.35", 250}, {"12.80", 7}, {"3.10", 40}}
	tax   = must(decimal.Parse("0.0825"))
)

func main() {
	harness.Main(func(ctx context.Context) {
		n := 0
		harness.Loop(ctx, func() { n += len(invoice(items)) })
		println(n)
	})
}

// invoice is one request: the total of the items with tax, as text.
//
//go:noinline
func invoice(items []item) string {
	total := decimal.FromInt(0)
	for _, it := range items {
		price, err := decimal.Parse(it.price) // want: alloc-package
		if err != nil {
			panic(err)
		}
		amount := price.Mul(decimal.FromInt(it.qty))            // want: alloc-package
		total = total.Add(amount.Add(amount.Mul(tax))).Round(2) // want: alloc-package
	}
	return total.String()
}

func must(d *decimal.Decimal, err error) *decimal.Decimal {
	if err != nil {
		panic(err)
	}
	return d
}
