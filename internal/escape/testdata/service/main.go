// Command service is a small program whose compiler diagnostics the tests
// check. Lines marked "want: KIND substring" must carry a diagnostic of
// that kind whose reason contains the substring.
package main

import (
	"fmt"
	"os"

	"example.com/service/internal/store"
)

func leftPad(s string, n int, c rune) string { // want: leak "parameter `s` leaks to result"
	for len(s) < n {
		s = string(c) + s // want: escape "`string(c) + s` escapes to heap: stored in `s`, then returned"
	}
	return s
}

func logValue(v int) string {
	return fmt.Sprintf("value=%d", v) // want: escape "`v` escapes to heap: passed as interface argument to fmt.Sprintf, which retains it"
}

type point struct{ x, y int }

func newPoint() *point {
	p := point{1, 2} // want: moved-to-heap "`p` is moved to heap: its address is returned"
	return &p
}

func add(a, b int) int { return a + b } // want: can-inline "cost"

type logger struct{ on bool }

func (l *logger) Debug3(args ...any) {
	if l.on {
		fmt.Fprintln(os.Stderr, args...)
	}
}

func handle(l *logger, smallIndex int) {
	l.Debug3("index", smallIndex) // want: escape "`smallIndex` escapes to heap: passed as interface argument to l.Debug3"
}

func sum(xs []int, i int) int {
	return xs[i] + xs[i+1] // want: bounds "bounds check on an index expression"
}

func main() {
	fmt.Println(leftPad("x", 5, ' '), logValue(3), add(1, 2), sum([]int{1, 2, 3}, 1))
	handle(&logger{}, 4)
	fmt.Println(store.Keep(newPoint()) != nil)
}
