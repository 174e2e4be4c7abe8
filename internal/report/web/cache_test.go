package web

import (
	"testing"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/store"
)

func TestChangesCacheBudget(t *testing.T) {
	c := NewChangesCache(100)
	view := func(n int) *Changes {
		return &Changes{Series: []*Series{{Series: history.Series{Commits: make([]history.Commit, n)}}}}
	}
	q := func(name string) history.Query { return history.Query{Filter: store.Filter{Name: name}} }
	a, b, cq, huge := q("a"), q("b"), q("c"), q("huge")
	v1 := store.Version{MaxID: 1, Runs: 1}
	c.Put(a, v1, view(60))
	c.Put(b, v1, view(30))
	if c.Get(a, v1) == nil || c.Get(b, v1) == nil {
		t.Fatal("entries within the budget were dropped")
	}
	c.Put(cq, v1, view(30)) // 120 > 100: the least recently used, a, goes
	if c.Get(a, v1) != nil || c.Get(b, v1) == nil || c.Get(cq, v1) == nil || c.size != 60 {
		t.Errorf("after exceeding the budget: a %v, b %v, c %v, size %d", c.Get(a, v1) != nil, c.Get(b, v1) != nil, c.Get(cq, v1) != nil, c.size)
	}
	if c.Get(b, store.Version{MaxID: 2, Runs: 2}) != nil || c.size != 30 {
		t.Errorf("a stale entry was served or kept (size %d)", c.size)
	}
	c.Put(huge, v1, view(101))
	if c.Get(huge, v1) != nil || c.size != 30 {
		t.Errorf("an entry larger than the budget was kept (size %d)", c.size)
	}
	if c.Get(history.Query{Filter: store.Filter{Name: "a", Branch: "dev"}}, v1) != nil {
		t.Error("a query of another branch was answered from the cache")
	}
	c.Invalidate()
	if c.Get(cq, v1) != nil || c.size != 0 {
		t.Errorf("an entry survived Invalidate (size %d)", c.size)
	}
}
