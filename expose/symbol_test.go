package expose

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// addressList returns n addresses of real functions in the form go tool
// pprof posts them, hexadecimal joined by "+", with zeros after each "0x" to
// make the list size bytes long if it is shorter.
func addressList(n, size int) string {
	pcs := []uintptr{
		reflect.ValueOf(lookupSymbols).Pointer(),
		reflect.ValueOf(addressCount[string]).Pointer(),
		reflect.ValueOf(http.ListenAndServe).Pointer(),
	}
	words := make([]string, n)
	length := n - 1 // the "+" signs
	for i := range words {
		words[i] = fmt.Sprintf("%x", pcs[i%len(pcs)])
		length += len("0x") + len(words[i])
	}
	for i := range words {
		// Short words: net/http/pprof reads a word of more than 4 KiB as
		// an error.
		zeros := (size - length) / (n - i)
		if zeros < 0 {
			zeros = 0
		}
		words[i] = "0x" + strings.Repeat("0", zeros) + words[i]
		length += zeros
	}
	return strings.Join(words, "+")
}

// TestSymbolLookupBounds checks the symbol lookup at and just past each of
// its bounds, posted and in the query, on a real server.
func TestSymbolLookupBounds(t *testing.T) {
	s := start(t, Options{})
	url := s.URL() + "symbol"
	for _, tt := range []struct {
		name      string
		method    string
		list      string
		want      int
		wantLines int // lines of the answer
	}{
		{"posted, most addresses in the largest body", "POST", addressList(maxSymbolAddresses, maxSymbolBody), 200, maxSymbolAddresses + 1},
		{"posted, one address too many", "POST", addressList(maxSymbolAddresses+1, 0), 400, 1},
		{"posted, one byte too many", "POST", addressList(maxSymbolAddresses, maxSymbolBody+1), 413, 1},
		{"posted, empty", "POST", "", 200, 1},
		{"query, three addresses", "GET", addressList(3, 0), 200, 4},
		{"query, one address too many", "GET", strings.Repeat("1+", maxSymbolAddresses) + "1", 400, 1},
	} {
		before := memoryObtained()
		var resp *http.Response
		var err error
		if tt.method == "POST" {
			resp, err = http.Post(url, "text/plain", strings.NewReader(tt.list))
		} else {
			resp, err = http.Get(url + "?" + tt.list)
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var answer bytes.Buffer
		_, err = answer.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: reading the answer: %v", tt.name, err)
		}
		grew := memoryObtained() - before
		lines := bytes.Count(answer.Bytes(), []byte("\n"))
		if resp.StatusCode != tt.want || lines != tt.wantLines {
			t.Errorf("%s: status %d with %d lines (%.200q), want %d with %d", tt.name, resp.StatusCode, lines, answer.Bytes(), tt.want, tt.wantLines)
		}
		if grew > maxGrowth {
			t.Errorf("%s: memory grew by %d MiB, want at most %d MiB", tt.name, grew>>20, maxGrowth>>20)
		}
		t.Logf("%s: %d-byte list, %d-byte answer, memory grew by %.1f MiB", tt.name, len(tt.list), answer.Len(), float64(grew)/(1<<20))
	}
}

func TestAddressCount(t *testing.T) {
	for list, want := range map[string]int{
		"":              0,
		"0x4a1b2c":      1,
		"0x4a1b2c+1234": 2,
		"+":             2,
		"1++2+":         4,
	} {
		if got := addressCount(list); got != want {
			t.Errorf("addressCount(%q) = %d, want %d", list, got, want)
		}
		if got := addressCount([]byte(list)); got != want {
			t.Errorf("addressCount([]byte(%q)) = %d, want %d", list, got, want)
		}
	}
}

// FuzzSymbolLookup posts arbitrary bodies to the symbol lookup, which
// net/http/pprof parses once the bounds have let them through. Whatever the
// body, the answer is a lookup with at most a line per address, or a
// refusal in one line of a body or list past its bound. The bounds are
// scaled down to 64 bytes and 8 addresses, so that small inputs reach them
// and the fuzzer explores both sides.
func FuzzSymbolLookup(f *testing.F) {
	const maxBody, maxAddresses = 64, 8
	for _, seed := range []string{
		"",
		addressList(1, 0),
		addressList(3, 0) + "+1234+junk++0x+0xffffffffffffffffff",
		addressList(maxAddresses, maxBody),
		addressList(maxAddresses+1, 0),
		strings.Repeat("+", maxAddresses),
		strings.Repeat("1", maxBody+1),
	} {
		f.Add([]byte(seed))
	}
	h := defaultLimits().body(maxBody, lookupSymbols(maxAddresses))
	f.Fuzz(func(t *testing.T, body []byte) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/debug/pprof/symbol", bytes.NewReader(body)))
		answer := w.Body.Bytes()
		lines := bytes.Count(answer, []byte("\n"))
		n := addressCount(body)
		switch w.Code {
		case http.StatusOK:
			if len(body) > maxBody || n > maxAddresses {
				t.Fatalf("%d-byte body of %d addresses answered, want it refused", len(body), n)
			}
			if !bytes.HasPrefix(answer, []byte("num_symbols: 1\n")) || lines > n+1 {
				t.Fatalf("answer of %d lines to %d addresses: %.200q", lines, n, answer)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if len(body) <= maxBody && n <= maxAddresses {
				t.Fatalf("%d-byte body of %d addresses refused with %d: %q", len(body), n, w.Code, answer)
			}
			if lines != 1 {
				t.Fatalf("refusal %q, want one line", answer)
			}
		default:
			t.Fatalf("status %d (%q), want 200, 400 or 413", w.Code, answer)
		}
	})
}
