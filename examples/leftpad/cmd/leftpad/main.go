// Command leftpad runs the leftpad example service; see package leftpad for its
// endpoint and flags. 'perfscope example leftpad' runs the same service.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/perfscope/perfscope/examples/leftpad"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(leftpad.Run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
