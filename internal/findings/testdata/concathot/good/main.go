// Command good counts by a struct of the two strings: the key is never
// built, so a lookup allocates nothing.
package main

import (
	"context"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type key struct{ tenant, resource string }

type counters struct {
	hits map[key]int
}

func main() {
	c := &counters{hits: map[key]int{}}
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
	c.hits[key{tenant, resource}]++
}
