// Command bad looks up a per-tenant counter by a key it concatenates on
// every call: no loop, but one new string per lookup.
package main

import (
	"context"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type counters struct {
	hits map[string]int
}

func main() {
	c := &counters{hits: map[string]int{}}
	tenants := []string{"acme", "globex", "initech", "umbrella"}
	resources := []string{"/v1/orders", "/v1/invoices", "/v1/customers"}
	harness.Main(func(ctx context.Context) {
		i := 0
		harness.Loop(ctx, func() {
			c.hit(tenants[i%len(tenants)], resources[i%len(resources)])
			i++
		})
		println(len(c.hits))
	})
}

//go:noinline
func (c *counters) hit(tenant, resource string) {
	key := tenant + ":" + resource // want: concat-hot
	c.hits[key]++
}
