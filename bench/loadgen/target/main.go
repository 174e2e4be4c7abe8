// Command target is a minimal net/http server used as the load generators'
// common target in bench/loadgen/run.sh: it answers every request with a
// small JSON body, so the measured cost is the HTTP round trip itself and
// the generator's share of the CPU shows up directly in requests/second.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address; the chosen address is printed on stdout")
	flag.Parse()

	body := []byte(`{"padded":"     hello","length":10}` + "\n")
	contentLength := strconv.Itoa(len(body))
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{contentLength}
		_, _ = w.Write(body)
	})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "target:", err)
		os.Exit(1)
	}
	// run.sh reads this line to learn the port.
	fmt.Println(ln.Addr().String())
	log.Fatal(http.Serve(ln, nil))
}
