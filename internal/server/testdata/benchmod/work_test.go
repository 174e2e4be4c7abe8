// Package benchmod is a tiny benchmark module for the dashboard's browser
// tests. Its "commits" differ by BENCHMOD_WORK, the size of the work each
// benchmark iteration does, so that a test can record real benchmark
// results with a real change at a commit of its choice.
package benchmod

import (
	"os"
	"strconv"
	"testing"
)

func work() int { return size("BENCHMOD_WORK", 1000) }

// size reads a work size from the environment variable name.
func size(name string, def int) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n < 1 {
		return def
	}
	return n
}

var sink []byte

// BenchmarkWork fills a buffer of the work's size: time and bytes grow with it.
func BenchmarkWork(b *testing.B) {
	n := work()
	for b.Loop() {
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = byte(i * 7)
		}
		sink = buf
	}
}

// BenchmarkSteady does the same work at every commit.
func BenchmarkSteady(b *testing.B) {
	for b.Loop() {
		buf := make([]byte, 512)
		for i := range buf {
			buf[i] = byte(i)
		}
		sink = buf
	}
}

// BenchmarkCopy copies a buffer of BENCHMOD_COPY bytes into a new one.
func BenchmarkCopy(b *testing.B) {
	src := make([]byte, size("BENCHMOD_COPY", 4096))
	for b.Loop() {
		sink = append([]byte(nil), src...)
	}
}
