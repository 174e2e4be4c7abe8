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

func work() int {
	n, err := strconv.Atoi(os.Getenv("BENCHMOD_WORK"))
	if err != nil || n < 1 {
		return 1000
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
