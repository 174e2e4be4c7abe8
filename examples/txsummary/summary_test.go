package txsummary

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/expose"
)

var modes = []mode{naive, optimized}

func TestParseCents(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1234.56", 123456, true},
		{"-1234.56", -123456, true},
		{"7.5", 750, true},
		{"-0.05", -5, true},
		{"12", 1200, true},
		{"9999999999999999.99", 999999999999999999, true},
		{"", 0, false},
		{"-", 0, false},
		{".5", 0, false},
		{"5.", 0, false},
		{"1.234", 0, false},
		{"1,5", 0, false},
		{"+5", 0, false},
		{"1e3", 0, false},
		{"12a", 0, false},
		{"99999999999999999", 0, false},
	} {
		got, err := parseCents(tt.in)
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("parseCents(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if !tt.ok && !errors.Is(err, errAmount) {
			t.Errorf("parseCents(%q) = %d, %v; want errAmount", tt.in, got, err)
		}
	}
}

func TestFormatCentsMatchesRat(t *testing.T) {
	for _, c := range []int64{0, 1, -1, 5, -5, 99, 100, -100, 123456, -123456, math.MaxInt64, math.MinInt64} {
		want := new(big.Rat).SetFrac(big.NewInt(c), big.NewInt(100)).FloatString(2)
		if got := formatCents(c); got != want {
			t.Errorf("formatCents(%d) = %q, want %q", c, got, want)
		}
	}
}

func TestAddCentsOverflow(t *testing.T) {
	if _, err := addCents(math.MaxInt64, 1); !errors.Is(err, errOverflow) {
		t.Errorf("MaxInt64+1: %v, want errOverflow", err)
	}
	if _, err := addCents(math.MinInt64, -1); !errors.Is(err, errOverflow) {
		t.Errorf("MinInt64-1: %v, want errOverflow", err)
	}
	if got, err := addCents(-5, 7); got != 2 || err != nil {
		t.Errorf("-5+7 = %d, %v", got, err)
	}
}

// serveMode serves the data set at path in mode m over a real HTTP server.
func serveMode(t testing.TB, m mode, path string) *httptest.Server {
	t.Helper()
	svc := &service{mode: m, path: path} // recheck 0: stat on every request
	srv := httptest.NewServer(expose.Middleware(svc.routes()))
	t.Cleanup(srv.Close)
	return srv
}

func getSummary(t *testing.T, srv *httptest.Server) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/summary")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return resp.StatusCode, string(b)
}

// TestGeneratedTotals checks that both modes return the same, pinned totals
// for the generated data set: a change in either parser or in the
// generator shows up here.
func TestGeneratedTotals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.json")
	if err := writeDataset(path, defaultUsers); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 1<<20 || fi.Size() > 4<<20 {
		t.Errorf("data set is %d bytes, want about 2 MB", fi.Size())
	}
	const want = `{"users":2700,"transactions":20243,"balance_total":"217801689.09","credit_total":"10402672.47","debit_total":"-1609680.99","transaction_total":"8792991.48"}`
	var bodies []string
	for _, m := range modes {
		code, body := getSummary(t, serveMode(t, m, path))
		if code != http.StatusOK {
			t.Fatalf("%v: status %d: %s", m, code, body)
		}
		bodies = append(bodies, body)
	}
	if bodies[0] != bodies[1] {
		t.Errorf("modes disagree:\nnaive:     %s\noptimized: %s", bodies[0], bodies[1])
	}
	if bodies[0] != want {
		t.Errorf("summary = %s\nwant        %s", bodies[0], want)
	}
}

func TestHandwrittenTotals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.json")
	data := `{"users":[
	{"id":1,"balance":"100.10","transactions":[{"amount":"0.10"},{"amount":"0.20"},{"amount":"-0.30"}]},
	{"id":2,"balance":"-0.05","transactions":[{"amount":"12"},{"amount":"-7.5"}]},
	{"id":3,"balance":"0","transactions":[]},
	{"id":4,"balance":"9999999999999999.99"}
]}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	// 0.1 + 0.2 - 0.3 is exactly zero here, unlike in float64.
	const want = `{"users":4,"transactions":5,"balance_total":"10000000000000100.04","credit_total":"12.30","debit_total":"-7.80","transaction_total":"4.50"}`
	for _, m := range modes {
		code, body := getSummary(t, serveMode(t, m, path))
		if code != http.StatusOK || body != want {
			t.Errorf("%v: %d %s\nwant    %s", m, code, body, want)
		}
	}
}

func TestBadData(t *testing.T) {
	for _, tt := range []struct{ name, data, want string }{
		{"not json", `{"users":[`, "parse data set"},
		{"bad amount", `{"users":[{"balance":"12.345"}]}`, "more than two decimal places"},
		{"number amount", `{"users":[{"balance":12}]}`, "balance"},
	} {
		path := filepath.Join(t.TempDir(), "data.json")
		if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, m := range modes {
			code, body := getSummary(t, serveMode(t, m, path))
			var e struct{ Error string }
			if code != http.StatusInternalServerError || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" || strings.Contains(e.Error, "\n") {
				t.Errorf("%s, %v: %d %s, want 500 with a one-line JSON error", tt.name, m, code, body)
			}
			if m == naive && !strings.Contains(e.Error, tt.want) {
				t.Errorf("%s, %v: error %q, want it to mention %q", tt.name, m, e.Error, tt.want)
			}
		}
	}
}

// TestOptimizedReloads checks that optimized mode serves a changed file's
// totals, and keeps serving the cached ones while it is unchanged.
func TestOptimizedReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.json")
	write := func(balance string) {
		if err := os.WriteFile(path, []byte(`{"users":[{"balance":"`+balance+`"}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1.00")
	srv := serveMode(t, optimized, path)
	if _, body := getSummary(t, srv); !strings.Contains(body, `"balance_total":"1.00"`) {
		t.Fatalf("first: %s", body)
	}
	write("22.00") // different size, so detected even within one mtime tick
	if _, body := getSummary(t, srv); !strings.Contains(body, `"balance_total":"22.00"`) {
		t.Errorf("after change: %s", body)
	}
}
