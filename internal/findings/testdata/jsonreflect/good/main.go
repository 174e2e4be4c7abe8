// Command good decodes into a typed struct once per distinct document
// (cached) and appends the summary with strconv.
package main

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

var input = []byte(`{"account":"acct-1","currency":"EUR","transactions":[` +
	`{"id":1,"amount":12.5,"kind":"debit"},{"id":2,"amount":3.25,"kind":"credit"},` +
	`{"id":3,"amount":7.75,"kind":"debit"},{"id":4,"amount":1.5,"kind":"debit"}]}`)

type document struct {
	Account      string `json:"account"`
	Currency     string `json:"currency"`
	Transactions []struct {
		ID     int     `json:"id"`
		Amount float64 `json:"amount"`
		Kind   string  `json:"kind"`
	} `json:"transactions"`
}

// cache holds decoded documents by content: the same document is decoded
// once.
var cache = map[string]*document{}

func main() {
	harness.Main(func(ctx context.Context) {
		n := 0
		var buf []byte
		harness.Loop(ctx, func() {
			buf = summarize(buf[:0], input)
			n += len(buf)
		})
		println(n)
	})
}

//go:noinline
func summarize(dst, in []byte) []byte {
	doc := cache[string(in)]
	if doc == nil {
		doc = new(document)
		if err := json.Unmarshal(in, doc); err != nil {
			panic(err)
		}
		cache[string(in)] = doc
	}
	var debit, credit float64
	for _, tx := range doc.Transactions {
		if tx.Kind == "debit" {
			debit += tx.Amount
		} else {
			credit += tx.Amount
		}
	}
	dst = append(dst, `{"account":`...)
	dst = strconv.AppendQuote(dst, doc.Account)
	dst = append(dst, `,"currency":`...)
	dst = strconv.AppendQuote(dst, doc.Currency)
	dst = append(dst, `,"debit":`...)
	dst = strconv.AppendFloat(dst, debit, 'g', -1, 64)
	dst = append(dst, `,"credit":`...)
	dst = strconv.AppendFloat(dst, credit, 'g', -1, 64)
	dst = append(dst, `,"count":`...)
	dst = strconv.AppendInt(dst, int64(len(doc.Transactions)), 10)
	return append(dst, '}')
}
