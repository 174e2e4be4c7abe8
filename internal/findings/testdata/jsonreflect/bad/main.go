// Command bad answers each call by decoding its input into map[string]any
// and encoding a map[string]any summary with encoding/json.
package main

import (
	"context"
	"encoding/json"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

var input = []byte(`{"account":"acct-1","currency":"EUR","transactions":[` +
	`{"id":1,"amount":12.5,"kind":"debit"},{"id":2,"amount":3.25,"kind":"credit"},` +
	`{"id":3,"amount":7.75,"kind":"debit"},{"id":4,"amount":1.5,"kind":"debit"}]}`)

func main() {
	harness.Main(func(ctx context.Context) {
		n := 0
		harness.Loop(ctx, func() { n += len(summarize(input)) })
		println(n)
	})
}

//go:noinline
func summarize(in []byte) []byte {
	var doc map[string]any
	if err := json.Unmarshal(in, &doc); err != nil { // want: json-reflect
		panic(err)
	}
	var debit, credit float64
	txs, _ := doc["transactions"].([]any)
	for _, t := range txs {
		tx, _ := t.(map[string]any)
		amount, _ := tx["amount"].(float64)
		if tx["kind"] == "debit" {
			debit += amount
		} else {
			credit += amount
		}
	}
	out, err := json.Marshal(map[string]any{ // want: json-reflect
		"account": doc["account"], "currency": doc["currency"],
		"debit": debit, "credit": credit, "count": len(txs),
	})
	if err != nil {
		panic(err)
	}
	return out
}
