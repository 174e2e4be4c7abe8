// Command bad prices loans with fixed-point decimals in math/big: every
// operation of every month makes new big.Int values, and the digits inside
// them, so the allocation profile is the arithmetic's.
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

func main() {
	harness.Main(func(ctx context.Context) {
		n := 0
		harness.Loop(ctx, func() { n += schedule(principal, 360).BitLen() })
		println(n)
	})
}

// schedule is one request: the interest paid over a loan's months.
//
//go:noinline
func schedule(amount *big.Int, months int) *big.Int {
	paid := new(big.Int)
	for range months {
		interest := new(big.Int).Quo(new(big.Int).Mul(amount, rate), scale) // want: alloc-hot
		paid = new(big.Int).Add(paid, interest)                             // want: alloc-hot
	}
	return paid
}
