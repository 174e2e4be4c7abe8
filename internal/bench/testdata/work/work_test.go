// Package work has benchmarks whose work per operation is known, for
// testing instruction counts: Spin/1000 does half the loop iterations of
// Spin/2000 and a 5000th of Long's, Fixed ignores b.N, Write makes a
// system call per operation, NoisySetup does Spin/1000's work after a
// set-up of random length, Setup after a set-up of two thousand
// operations' work, Draw one of two amounts of work drawn per process.
package work

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
)

var (
	sink uint64
	kept []byte
)

//go:noinline
func spin(n int) uint64 {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func BenchmarkSpin(b *testing.B) {
	for _, n := range []int{1000, 2000} {
		b.Run(itoa(n), func(b *testing.B) {
			for range b.N {
				sink += spin(n)
			}
		})
	}
}

// BenchmarkLong is a b.N benchmark long enough to be counted over the
// fewest operations.
func BenchmarkLong(b *testing.B) {
	for range b.N {
		sink += spin(5_000_000)
	}
}

// draw is 0 or 1, drawn once per process from the operating system's
// randomness (crypto/rand), whatever the runtime's seed.
var draw = func() int {
	var r [1]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(err)
	}
	return int(r[0] & 1)
}()

// BenchmarkDraw spins 1,000,000 or 1,100,000 times an operation, as draw
// decides: an operation whose cost differs from process to process, as a
// map's hashing does with the seed of the thread that created the map.
func BenchmarkDraw(b *testing.B) {
	n := 1_000_000 + 100_000*draw
	for range b.N {
		sink += spin(n)
	}
}

func BenchmarkAlloc(b *testing.B) {
	for range b.N {
		kept = make([]byte, 4096)
	}
}

func BenchmarkWrite(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "out"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	p := []byte("x")
	for range b.N {
		if _, err := f.Write(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNoisySetup spins up to two operations' worth before its loop,
// a random amount (crypto/rand: the operating system's, whatever the
// runtime's seed), so that a count over one or two operations cannot
// tell its operations from its set-up.
func BenchmarkNoisySetup(b *testing.B) {
	var r [1]byte
	if _, err := rand.Read(r[:]); err != nil {
		b.Fatal(err)
	}
	sink += spin(int(r[0]) * 8)
	for range b.N {
		sink += spin(1000)
	}
}

func BenchmarkSetup(b *testing.B) {
	sink += spin(2_000_000)
	for range b.N {
		sink += spin(1000)
	}
}

func BenchmarkFixed(b *testing.B) {
	sink += spin(100_000)
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
