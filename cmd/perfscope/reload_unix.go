//go:build !windows

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyReload sends SIGHUP to sig.
func notifyReload(sig chan os.Signal) bool {
	signal.Notify(sig, syscall.SIGHUP)
	return true
}
