package store

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"sync"
)

// A keptLRU keeps values by key within about limit bytes (each value's
// size given when it is put), the least recently used dropped first. A
// value kept is shared by every get: nothing may change it.
type keptLRU[K comparable, V any] struct {
	limit int
	mu    sync.Mutex
	bytes int
	kept  map[K]*list.Element // of *lruEntry
	order list.List           // most recently used first
}

type lruEntry[K comparable, V any] struct {
	key  K
	v    V
	size int
}

func newKeptLRU[K comparable, V any](limit int) *keptLRU[K, V] {
	return &keptLRU[K, V]{limit: limit, kept: map[K]*list.Element{}}
}

func (c *keptLRU[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.kept[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).v, true
}

// put keeps v under k; a value larger than a quarter of the limit is not
// kept (it would push out most of the others).
func (c *keptLRU[K, V]) put(k K, v V, size int) {
	if size > c.limit/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.kept[k]; ok {
		c.bytes -= e.Value.(*lruEntry[K, V]).size
		c.order.Remove(e)
	}
	c.kept[k] = c.order.PushFront(&lruEntry[K, V]{key: k, v: v, size: size})
	c.bytes += size
	for c.bytes > c.limit {
		e := c.order.Back()
		old := e.Value.(*lruEntry[K, V])
		c.order.Remove(e)
		delete(c.kept, old.key)
		c.bytes -= old.size
	}
}

// A keyHasher hashes what names a value kept into a key of 16 bytes: two
// hashes of 64 bits under seeds of their own, the same for the process,
// so that two different names share a key with a chance of 2^-128. A
// name written as it comes costs no copy of it, however long (the
// records of every series of a bucket).
type keyHasher struct{ a, b maphash.Hash }

var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func newKeyHasher() *keyHasher {
	h := &keyHasher{}
	h.a.SetSeed(keySeeds[0])
	h.b.SetSeed(keySeeds[1])
	return h
}

func (h *keyHasher) int(v int64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	h.a.Write(b[:])
	h.b.Write(b[:])
}

// str writes s and its length, so that no two lists of strings write the
// same bytes.
func (h *keyHasher) str(s string) {
	h.int(int64(len(s)))
	h.a.WriteString(s)
	h.b.WriteString(s)
}

func (h *keyHasher) key() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], h.a.Sum64())
	binary.LittleEndian.PutUint64(b[8:], h.b.Sum64())
	return string(b[:])
}
