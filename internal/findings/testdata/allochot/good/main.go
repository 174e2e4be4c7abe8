// Command good prices loans like bad, with the big.Int receivers kept
// across months and requests: math/big writes into them and reuses their
// digits, so the arithmetic allocates nothing once warm.
package main

import (
	"context"
	"math/big"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

// Amounts carry 18 decimal places, as a decimal library would.
var (
	scale     = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	principal = new(big.Int).Mul(big.NewInt(250_000_123), scale)
	rate      = new(big.Int).Div(new(big.Int).Mul(big.NewInt(4_125), scale), big.NewInt(1_200_000)) // 4.125% a year, monthly
)

// A calc holds the values one goroutine's arithmetic writes into.
type calc struct{ prod, interest, rem, paid big.Int }

func main() {
	harness.Main(func(ctx context.Context) {
		n := 0
		var c calc
		harness.Loop(ctx, func() { n += c.schedule(principal, 360).BitLen() })
		println(n)
	})
}

// schedule is one request: the interest paid over a loan's months.
//
//go:noinline
func (c *calc) schedule(amount *big.Int, months int) *big.Int {
	c.paid.SetInt64(0)
	for range months {
		c.prod.Mul(amount, rate)
		c.interest.QuoRem(&c.prod, scale, &c.rem)
		c.paid.Add(&c.paid, &c.interest)
	}
	return &c.paid
}
