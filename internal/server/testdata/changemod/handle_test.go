// Package changemod is a tiny benchmark module whose "commits" differ by
// environment variables, so that real benchmark runs can stand for commits
// that change its performance: CHANGEMOD_WORK is how many bytes an
// operation hashes (instructions and time grow with it), CHANGEMOD_ALLOCS
// how many buffers it allocates.
package changemod

import (
	"os"
	"strconv"
	"testing"
)

// size reads a size from the environment variable name.
func size(name string, def int) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n < 0 {
		return def
	}
	return n
}

var (
	sum  uint64
	sink []byte
)

// hash is FNV-1a over n bytes of a counter.
func hash(n int) uint64 {
	h := uint64(14695981039346656037)
	for i := range n {
		h ^= uint64(byte(i))
		h *= 1099511628211
	}
	return h
}

// BenchmarkHandle hashes CHANGEMOD_WORK bytes and allocates
// CHANGEMOD_ALLOCS buffers of 64 bytes per operation.
func BenchmarkHandle(b *testing.B) {
	work, allocs := size("CHANGEMOD_WORK", 1000), size("CHANGEMOD_ALLOCS", 1)
	for b.Loop() {
		sum = hash(work)
		for range allocs {
			sink = make([]byte, 64)
		}
	}
}

// BenchmarkSteady does the same work at every commit.
func BenchmarkSteady(b *testing.B) {
	for b.Loop() {
		sum = hash(500)
		sink = make([]byte, 32)
	}
}
