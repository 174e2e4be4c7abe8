package store

import "testing"

// TestKeyHasher: the same name gives the same key in two hashers; names
// that differ, even only in where one string ends and the next begins,
// give different keys.
func TestKeyHasher(t *testing.T) {
	key := func(ints []int64, strs ...string) string {
		h := newKeyHasher()
		for _, v := range ints {
			h.int(v)
		}
		for _, s := range strs {
			h.str(s)
		}
		return h.key()
	}
	a := key([]int64{1, 2}, "ab", "c")
	if b := key([]int64{1, 2}, "ab", "c"); a != b || len(a) != 16 {
		t.Fatalf("one name gave keys %x and %x", a, b)
	}
	for _, other := range []string{key([]int64{1, 2}, "a", "bc"), key([]int64{2, 1}, "ab", "c"), key([]int64{1, 2}, "ab", "c", ""), key(nil, "ab", "c")} {
		if other == a {
			t.Errorf("two names gave the key %x", a)
		}
	}
}
