// Package sums holds small numeric benchmarks for compare's fixtures.
package sums

import (
	"os"
	"testing"
)

var sinkInt int

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func BenchmarkSum(b *testing.B) {
	xs := make([]int, 1024)
	if os.Getenv("FIXTURE_VARIANT") == "new" {
		xs = make([]int, 1024+64) // about 6% more work
	}
	b.SetBytes(int64(8 * len(xs)))
	for b.Loop() {
		sinkInt = sum(xs)
	}
}

func BenchmarkMap(b *testing.B) {
	for b.Loop() {
		m := make(map[int]int, 8)
		for i := range 8 {
			m[i] = i
		}
		sinkInt = len(m)
	}
}
