// Command good reads and parses the transactions file once at start and
// serves the summary it computed then.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

type transaction struct {
	ID     int     `json:"id"`
	Amount float64 `json:"amount"`
	Kind   string  `json:"kind"`
}

func main() {
	path := writeTransactions()
	defer os.Remove(path)
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	var txs []transaction
	if err := json.Unmarshal(data, &txs); err != nil {
		panic(err)
	}
	body := strconv.AppendFloat(nil, total(txs), 'f', 2, 64)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
	})
	harness.Main(func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/summary", 4)
	})
}

func total(txs []transaction) float64 {
	t := 0.0
	for _, tx := range txs {
		t += tx.Amount
	}
	return t
}

// writeTransactions writes the file the service reads.
func writeTransactions() string {
	f, err := os.CreateTemp("", "transactions-*.json")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var txs []transaction
	for i := range 300 {
		txs = append(txs, transaction{ID: i, Amount: float64(i%97) + 0.25, Kind: []string{"debit", "credit"}[i%2]})
	}
	if err := json.NewEncoder(f).Encode(txs); err != nil {
		panic(fmt.Sprint("write transactions: ", err))
	}
	return f.Name()
}
