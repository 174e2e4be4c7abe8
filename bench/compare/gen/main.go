// Command gen writes the two benchmark files bench/compare/run.sh compares:
// N benchmarks × COUNT samples each, every line with sec/op, B/op and
// allocs/op, as "go test -bench -benchmem -count COUNT" prints them. The
// head file makes a tenth of the benchmarks slower and a tenth allocate
// more, so tables hold both changes and "~". The output depends only on
// the flags.
//
// Usage: go run ./bench/compare/gen -o DIR [-n 2000] [-count 20]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	var (
		dir   = flag.String("o", ".", "directory to write base.txt and head.txt into")
		n     = flag.Int("n", 2000, "benchmarks per file")
		count = flag.Int("count", 20, "samples per benchmark")
	)
	flag.Parse()
	for _, side := range []string{"base", "head"} {
		if err := write(filepath.Join(*dir, side+".txt"), side == "head", *n, *count); err != nil {
			log.Fatal(err)
		}
	}
}

// write writes one file. Benchmarks are spread over packages of 100, with
// sub-benchmarks, and each has a base time, a noise level and an
// allocation profile of its own.
func write(path string, head bool, n, count int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	seed := uint64(1)
	if head {
		seed = 2
	}
	noise := rand.New(rand.NewPCG(seed, 0))
	fmt.Fprintf(w, "goos: linux\ngoarch: amd64\n")
	for b := range n {
		// Per-benchmark parameters come from the benchmark's index, so
		// both files agree on them; only the noise differs.
		shape := rand.New(rand.NewPCG(uint64(b), 99))
		if b%100 == 0 {
			fmt.Fprintf(w, "pkg: example.com/svc/pkg%02d\ncpu: Example CPU @ 3.00GHz\n", b/100)
		}
		ns := 20 * float64(uint64(1)<<shape.IntN(14)) * (1 + shape.Float64())
		spread := 0.005 + 0.05*shape.Float64()
		bytes, allocs := 16*shape.IntN(64), shape.IntN(12)
		if head && b%10 == 3 {
			ns *= 1.1
		}
		if head && b%10 == 7 {
			bytes, allocs = bytes+64, allocs+1
		}
		name := fmt.Sprintf("BenchmarkOp%04d/size=%d-8", b, 1<<(b%7))
		for range count {
			v := ns * (1 + spread*noise.NormFloat64())
			iters := max(1, int(1e9/ns))
			b := bytes
			if noise.IntN(20) == 0 {
				b += 8 // the odd sample that grew a buffer
			}
			fmt.Fprintf(w, "%s\t%8d\t%10s ns/op\t%6d B/op\t%4d allocs/op\n", name, iters, nsPerOp(v), b, allocs)
		}
	}
	fmt.Fprintln(w, "PASS")
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// nsPerOp prints a time per operation with the precision "go test" gives
// it: whole nanoseconds from 100 up, then one more decimal per decade
// below, so close samples of a fast benchmark tie as they do in real runs.
func nsPerOp(v float64) string {
	switch {
	case v >= 99.995:
		return fmt.Sprintf("%.0f", v)
	case v >= 9.9995:
		return fmt.Sprintf("%.1f", v)
	case v >= 0.99995:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
