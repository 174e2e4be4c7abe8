package listen

import (
	"errors"
	"net"
	"strings"
	"testing"
)

// TestError listens where another listener already is, and on an address
// that cannot be listened on for another reason.
func TestError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	_, lerr := net.Listen("tcp", taken)
	if lerr == nil {
		t.Fatalf("listening twice on %s succeeded", taken)
	}
	err = Error("--addr", taken, lerr)
	want := "--addr " + taken + ": the port is in use by another program: pass --addr 127.0.0.1:0 to pick a free port ("
	if !strings.HasPrefix(err.Error(), want) || !errors.Is(err, lerr) {
		t.Errorf("Error = %q; want it to start %q and wrap the listen error", err, want)
	}

	_, lerr = net.Listen("tcp", "127.0.0.1:notaport")
	if err := Error("--pprof-addr", "127.0.0.1:notaport", lerr); !strings.HasPrefix(err.Error(), "--pprof-addr 127.0.0.1:notaport: ") || strings.Contains(err.Error(), "free port") {
		t.Errorf("Error = %q; want the flag, the address and the listen error, no port advice", err)
	}
}
