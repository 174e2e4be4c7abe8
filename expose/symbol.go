package expose

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
)

// lookupSymbols serves net/http/pprof's symbol lookup with its address
// list bounded. The list is the posted body (at most maxSymbolBody bytes,
// which limits.body has read) or, for GET, the query string (at most the
// header limit): program counters joined by "+", in hexadecimal with 0x or
// decimal. The answer is "num_symbols: 1" and a line "0x<pc> <function>"
// for each address that falls in a function. A list of more than
// maxAddresses addresses is refused with 400. net/http/pprof parses the
// list; this bound, and the body's, are what keep its answer small.
func lookupSymbols(maxAddresses int) bodyHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		n := addressCount(r.URL.RawQuery)
		if r.Method == http.MethodPost {
			n = addressCount(body)
			r = r.WithContext(r.Context()) // a copy, whose body can be replaced
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if n > maxAddresses {
			serveError(w, http.StatusBadRequest, fmt.Sprintf("symbol lookup of %d addresses: at most %d are answered at once; split the list", n, maxAddresses))
			return
		}
		pprof.Symbol(w, r)
	}
}

// addressCount returns how many addresses net/http/pprof's symbol lookup
// reads in list: the words between "+" signs, empty ones included, since
// it parses each.
func addressCount[L string | []byte](list L) int {
	if len(list) == 0 {
		return 0
	}
	n := 1
	for i := range len(list) {
		if list[i] == '+' {
			n++
		}
	}
	return n
}
