// Command bad serves a total of a transactions file: a helper, readData,
// reads the file and returns its bytes, and the handler hands them to
// parseTransactions, a function of its own, on every request. Reading is
// cheap; decoding what was read is most of the work.
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
	Memo   string  `json:"memo"`
}

func main() {
	path := writeTransactions()
	defer os.Remove(path)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := readData(path) // want: reread
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		txs, err := parseTransactions(data) // want: reread
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(strconv.AppendFloat(nil, total(txs), 'f', 2, 64))
	})
	harness.Main(func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/total", 4)
	})
}

// readData returns the bytes of the data set.
//
//go:noinline
func readData(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read data set: %w", err)
	}
	return data, nil
}

// parseTransactions decodes the data set.
//
//go:noinline
func parseTransactions(data []byte) ([]transaction, error) {
	var txs []transaction
	if err := json.Unmarshal(data, &txs); err != nil {
		return nil, fmt.Errorf("parse data set: %w", err)
	}
	return txs, nil
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
		txs = append(txs, transaction{ID: i, Amount: float64(i%97) + 0.25, Kind: []string{"debit", "credit"}[i%2], Memo: fmt.Sprintf("invoice %d of account %d", i, i%13)})
	}
	if err := json.NewEncoder(f).Encode(txs); err != nil {
		panic(fmt.Sprint("write transactions: ", err))
	}
	return f.Name()
}
