// Package strs holds small string benchmarks whose results are the
// fixtures of compare's benchstat-equivalence test. FIXTURE_VARIANT=new
// switches to a slower concatenation and a faster join, so the fixtures
// contain real changes as well as real noise.
package strs

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

var sink string

var variant = os.Getenv("FIXTURE_VARIANT")

func concat(parts []string) string {
	if variant == "new" {
		s := ""
		for _, p := range parts {
			s += p
		}
		return s
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p)
	}
	return b.String()
}

func BenchmarkConcat(b *testing.B) {
	for _, n := range []int{4, 32} {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = strconv.Itoa(i)
		}
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				sink = concat(parts)
			}
		})
	}
}

func BenchmarkRepeat(b *testing.B) {
	for b.Loop() {
		sink = strings.Repeat("ab", 64)
	}
}

func BenchmarkItoa(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		sink = strconv.Itoa(i)
	}
}
