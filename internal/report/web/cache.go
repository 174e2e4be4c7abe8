package web

import (
	"container/list"
	"strconv"
	"strings"
	"sync"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/store"
)

// A ChangesCache keeps the latest views of change detection, by history
// query. Change detection over thousands of commits costs tens of
// milliseconds, mostly U tests; an entry is reused while the store's
// version says no benchmark run was added since.
//
// Its size is counted in commits, not entries: a view with its rendered
// chart takes about half a KiB per commit, so a budget of 100,000 commits
// holds about 50 MiB, twenty full histories of 5,000 commits or a hundred
// default pages.
type ChangesCache struct {
	mu      sync.Mutex
	max     int        // commits
	size    int        // commits held
	order   *list.List // of *cacheEntry, most recent first
	entries map[string]*list.Element
}

// CacheCommits is the default budget of a ChangesCache.
const CacheCommits = 100_000

type cacheEntry struct {
	key     string
	version store.Version
	view    *Changes
	commits int
}

// NewChangesCache returns an empty cache of max commits.
func NewChangesCache(max int) *ChangesCache {
	return &ChangesCache{max: max, order: list.New(), entries: make(map[string]*list.Element)}
}

// cacheKey identifies a history query in the cache.
func cacheKey(q history.Query) string {
	f := q.Filter
	return strings.Join([]string{f.Package, f.Name, f.Unit, f.Branch, f.Machine,
		strconv.FormatInt(f.Since.UnixNano(), 10), strconv.Itoa(q.Window),
		strconv.FormatFloat(q.Options.Alpha, 'g', -1, 64)}, "\x00")
}

// Get returns the view of q kept at version, or nil.
func (c *ChangesCache) Get(q history.Query, version store.Version) *Changes {
	key := cacheKey(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	e := el.Value.(*cacheEntry)
	if e.version != version {
		c.remove(el)
		return nil
	}
	c.order.MoveToFront(el)
	return e.view
}

// Put keeps v as the view of q at version, dropping the least recently
// used beyond the budget; a view larger than the budget is not kept.
func (c *ChangesCache) Put(q history.Query, version store.Version, v *Changes) {
	key := cacheKey(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	n := v.Commits()
	if n > c.max {
		return
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key, version, v, n})
	c.size += n
	for c.size > c.max {
		c.remove(c.order.Back())
	}
}

func (c *ChangesCache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.size -= e.commits
}

// Invalidate drops every entry; the version check would drop them one by
// one, this frees their memory at once after an upload.
func (c *ChangesCache) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.entries)
	c.size = 0
}
