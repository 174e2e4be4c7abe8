// Command txsummary runs the txsummary example service; see package txsummary for its
// endpoint and flags. 'perfscope example txsummary' runs the same service.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/perfscope/perfscope/examples/txsummary"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(txsummary.Run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
