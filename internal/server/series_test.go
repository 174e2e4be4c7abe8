package server

import (
	"testing"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/store"
)

func TestSeriesCacheBudget(t *testing.T) {
	c := newSeriesCache(100)
	view := func(n int) *web.Changes {
		return &web.Changes{Series: []*web.Series{{Series: history.Series{Commits: make([]history.Commit, n)}}}}
	}
	v1 := store.Version{MaxID: 1, Runs: 1}
	c.put("a", v1, view(60))
	c.put("b", v1, view(30))
	if c.get("a", v1) == nil || c.get("b", v1) == nil {
		t.Fatal("entries within the budget were dropped")
	}
	c.put("c", v1, view(30)) // 120 > 100: the least recently used, a, goes
	if c.get("a", v1) != nil || c.get("b", v1) == nil || c.get("c", v1) == nil || c.size != 60 {
		t.Errorf("after exceeding the budget: a %v, b %v, c %v, size %d", c.get("a", v1) != nil, c.get("b", v1) != nil, c.get("c", v1) != nil, c.size)
	}
	if c.get("b", store.Version{MaxID: 2, Runs: 2}) != nil || c.size != 30 {
		t.Errorf("a stale entry was served or kept (size %d)", c.size)
	}
	c.put("huge", v1, view(101))
	if c.get("huge", v1) != nil || c.size != 30 {
		t.Errorf("an entry larger than the budget was kept (size %d)", c.size)
	}
}
