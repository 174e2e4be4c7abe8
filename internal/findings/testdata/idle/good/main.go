// Command good is a service kept busy by its load: requests do real work
// and arrive on two connections without pause.
package main

import (
	"context"
	"crypto/sha256"
	"net/http"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

func main() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := digest([]byte(r.URL.Path))
		w.Write(sum[:])
	})
	harness.Main(func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/ping", 2)
	})
}

//go:noinline
func digest(b []byte) [32]byte {
	sum := sha256.Sum256(b)
	for range 2000 {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}
