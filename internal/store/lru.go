package store

import (
	"container/list"
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
