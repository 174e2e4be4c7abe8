// Package listen words the error of an example service that cannot listen
// on an address its flags gave. Ports are shared: another program may hold
// the example's default port, and the error then says how to pick a free
// one.
package listen

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// Error is err, from listening on addr given by flag (such as --addr), in
// one line naming the flag; an address another program holds gets what to
// pass instead: the same host with port 0, which picks a free port.
func Error(flag, addr string, err error) error {
	if !inUse(err) {
		return fmt.Errorf("%s %s: %w", flag, addr, err)
	}
	free := "127.0.0.1:0"
	if host, _, serr := net.SplitHostPort(addr); serr == nil {
		free = net.JoinHostPort(host, "0")
	}
	return fmt.Errorf("%s %s: the port is in use by another program: pass %s %s to pick a free port (%w)", flag, addr, flag, free, err)
}

// inUse reports whether err says the address is taken: EADDRINUSE, or
// Windows' WSAEADDRINUSE (10048).
func inUse(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && (errno == syscall.EADDRINUSE || errno == 10048)
}
