// Command bad is a service under far too little load: one request every
// 20ms, each of which waits on a slow downstream, so the CPU profile holds
// a handful of samples that say nothing about the service's code.
package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

func main() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond) // the downstream
		w.Write([]byte(strings.Repeat("ok", 8)))
	})
	harness.MainFor(time.Second, 0, func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/ping", 1)
	})
}
