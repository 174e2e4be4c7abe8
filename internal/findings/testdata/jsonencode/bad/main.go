// Command bad encodes each response from a map[string]any with
// encoding/json: it only encodes, it decodes nothing.
package main

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type account struct {
	id, currency  string
	debit, credit float64
	count         int
	tags          []string
}

func main() {
	a := account{id: "acct-1", currency: "EUR", debit: 1520.25, credit: 310.5, count: 42, tags: []string{"retail", "eu", "verified"}}
	harness.Main(func(ctx context.Context) {
		n := 0
		var buf bytes.Buffer
		harness.Loop(ctx, func() {
			buf.Reset()
			respond(&buf, a)
			n += buf.Len()
		})
		println(n)
	})
}

//go:noinline
func respond(buf *bytes.Buffer, a account) {
	if err := json.NewEncoder(buf).Encode(map[string]any{ // want: json-reflect
		"account": a.id, "currency": a.currency, "debit": a.debit, "credit": a.credit,
		"balance": a.credit - a.debit, "count": a.count, "tags": a.tags,
	}); err != nil {
		panic(err)
	}
	out, err := json.Marshal(a.tags) // want: json-reflect
	if err != nil {
		panic(err)
	}
	buf.Write(out)
}
