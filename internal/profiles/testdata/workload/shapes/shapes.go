// Package shapes is user code outside package main, for the classifier:
// a dotted import path whose files are not in the module cache.
package shapes

import "math"

// Spiral sums the areas of n circles of growing radius; it only burns CPU.
//
//go:noinline
func Spiral(n int) float64 {
	var sum float64
	for i := range n {
		r := float64(i%1000) / 7
		sum += math.Pi * r * r / math.Sqrt(r+1)
	}
	return sum
}
