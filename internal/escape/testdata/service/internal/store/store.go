// Package store keeps values; its diagnostics show that a build covers the
// module's packages, not only the command named.
package store

var kept []any

// Keep stores v for later.
func Keep(v any) []any { // want: leak "parameter `v` leaks to heap"
	kept = append(kept, v)
	return kept
}

// Big is large enough on the stack to be moved to the heap.
func Big() byte {
	var a [20 << 20]byte // want: moved-to-heap "too large for the stack"
	return a[len(a)/2]
}
