package txsummary

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A summary is the response of GET /summary. Totals are exact decimal
// strings with two decimal places.
type summary struct {
	Users            int    `json:"users"`
	Transactions     int    `json:"transactions"`
	BalanceTotal     string `json:"balance_total"`
	CreditTotal      string `json:"credit_total"`      // sum of positive amounts
	DebitTotal       string `json:"debit_total"`       // sum of negative amounts (negative)
	TransactionTotal string `json:"transaction_total"` // credits plus debits
}

// mode selects an implementation; see the package documentation.
type mode int

const (
	naive mode = iota
	optimized
)

func (m mode) String() string {
	if m == optimized {
		return "optimized"
	}
	return "naive"
}

func parseMode(s string) (mode, error) {
	switch s {
	case "naive":
		return naive, nil
	case "optimized":
		return optimized, nil
	}
	return naive, fmt.Errorf("unknown --mode %q: use naive or optimized", s)
}

// service serves the summary of the data set in one file.
type service struct {
	mode mode
	path string
	// recheck is how often optimized mode stats the file; 0 means every
	// request.
	recheck time.Duration

	// Optimized mode: the response for the file as last read.
	cached atomic.Pointer[cachedSummary]
	reload sync.Mutex // one reload at a time
}

// cachedSummary is a response body and the file version it was computed from.
type cachedSummary struct {
	body    []byte
	modTime time.Time
	size    int64
	checked time.Time // when the file was last stat'ed
}

// recheckInterval is how often optimized mode looks at the file's
// modification time by default: often enough that an edit shows up at once to a
// person, rarely enough that the stat call never shows up in a profile.
const recheckInterval = time.Second

func (s *service) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /summary", s.handleSummary)
	return mux
}

// handleSummary serves GET /summary: the totals over the data set.
func (s *service) handleSummary(w http.ResponseWriter, r *http.Request) {
	var body []byte
	var err error
	if s.mode == naive {
		body, err = summarizeNaive(s.path)
	} else {
		body, err = s.summaryOptimized()
	}
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		msg, _ := json.Marshal(map[string]string{"error": err.Error()})
		w.Write(msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// summarizeNaive does what the first version of such a service does: read
// and parse the whole file on every request into generic maps, and parse
// each amount into a big.Rat to sum it exactly.
func summarizeNaive(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read data set: %w", err)
	}
	var doc map[string]interface{}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse data set %s: %w", path, err)
	}
	users, ok := doc["users"].([]interface{})
	if !ok {
		return nil, fmt.Errorf("parse data set %s: no users array", path)
	}
	balance, credit, debit := new(big.Rat), new(big.Rat), new(big.Rat)
	transactions := 0
	for i, u := range users {
		um, ok := u.(map[string]interface{})
		if !ok {
			return nil, fmt.Errorf("user %d: not an object", i)
		}
		b, err := parseRatAmount(um["balance"])
		if err != nil {
			return nil, fmt.Errorf("user %d: balance: %w", i, err)
		}
		balance.Add(balance, b)
		txs, _ := um["transactions"].([]interface{})
		for j, tx := range txs {
			txm, ok := tx.(map[string]interface{})
			if !ok {
				return nil, fmt.Errorf("user %d transaction %d: not an object", i, j)
			}
			a, err := parseRatAmount(txm["amount"])
			if err != nil {
				return nil, fmt.Errorf("user %d transaction %d: amount: %w", i, j, err)
			}
			if a.Sign() > 0 {
				credit.Add(credit, a)
			} else {
				debit.Add(debit, a)
			}
			transactions++
		}
	}
	return json.Marshal(summary{
		Users:            len(users),
		Transactions:     transactions,
		BalanceTotal:     balance.FloatString(2),
		CreditTotal:      credit.FloatString(2),
		DebitTotal:       debit.FloatString(2),
		TransactionTotal: new(big.Rat).Add(credit, debit).FloatString(2),
	})
}

// parseRatAmount parses a decimal amount string exactly.
func parseRatAmount(v interface{}) (*big.Rat, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%v is not a decimal string", v)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a decimal number", s)
	}
	if !new(big.Rat).Mul(r, big.NewRat(100, 1)).IsInt() {
		return nil, fmt.Errorf("%q has more than two decimal places", s)
	}
	return r, nil
}

// summaryOptimized returns the precomputed response, recomputing it only
// when the file has changed (its modification time or size).
func (s *service) summaryOptimized() ([]byte, error) {
	c := s.cached.Load()
	now := time.Now()
	if c != nil && now.Sub(c.checked) < s.recheck {
		return c.body, nil
	}
	s.reload.Lock()
	defer s.reload.Unlock()
	if c = s.cached.Load(); c != nil && now.Sub(c.checked) < s.recheck {
		return c.body, nil // another request reloaded meanwhile
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return nil, fmt.Errorf("data set: %w", err)
	}
	if c != nil && fi.ModTime().Equal(c.modTime) && fi.Size() == c.size {
		s.cached.Store(&cachedSummary{body: c.body, modTime: c.modTime, size: c.size, checked: now})
		return c.body, nil
	}
	body, err := summarizeFile(s.path)
	if err != nil {
		return nil, err
	}
	s.cached.Store(&cachedSummary{body: body, modTime: fi.ModTime(), size: fi.Size(), checked: now})
	return body, nil
}

// summarizeFile stream-decodes the data set into typed structs holding only
// the fields the summary needs, and sums amounts as integer cents.
func summarizeFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read data set: %w", err)
	}
	defer f.Close()
	var ds struct {
		Users []struct {
			Balance      string `json:"balance"`
			Transactions []struct {
				Amount string `json:"amount"`
			} `json:"transactions"`
		} `json:"users"`
	}
	if err := json.NewDecoder(f).Decode(&ds); err != nil {
		return nil, fmt.Errorf("parse data set %s: %w", path, err)
	}
	var balance, credit, debit int64
	transactions := 0
	for i, u := range ds.Users {
		b, err := parseCents(u.Balance)
		if err == nil {
			balance, err = addCents(balance, b)
		}
		if err != nil {
			return nil, fmt.Errorf("user %d: balance: %w", i, err)
		}
		for j, tx := range u.Transactions {
			a, err := parseCents(tx.Amount)
			if err == nil && a > 0 {
				credit, err = addCents(credit, a)
			} else if err == nil {
				debit, err = addCents(debit, a)
			}
			if err != nil {
				return nil, fmt.Errorf("user %d transaction %d: amount: %w", i, j, err)
			}
			transactions++
		}
	}
	total, err := addCents(credit, debit)
	if err != nil {
		return nil, fmt.Errorf("transaction total: %w", err)
	}
	return json.Marshal(summary{
		Users:            len(ds.Users),
		Transactions:     transactions,
		BalanceTotal:     formatCents(balance),
		CreditTotal:      formatCents(credit),
		DebitTotal:       formatCents(debit),
		TransactionTotal: formatCents(total),
	})
}

// errAmount describes the amounts parseCents accepts.
var errAmount = errors.New("want a decimal number with at most two decimal places, such as -1234.5")

// errOverflow is returned when a total does not fit in int64 cents.
var errOverflow = errors.New("total exceeds ±92 233 720 368 547 758.07")

// parseCents parses a decimal amount with at most two decimal places into
// integer cents: [-]digits[.d[d]], at most 16 digits before the point.
func parseCents(amount string) (int64, error) {
	s := amount
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	whole, frac := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			whole, frac = s[:i], s[i+1:]
			break
		}
	}
	if whole == "" || len(whole) > 16 || len(frac) > 2 || (len(frac) == 0 && len(whole) < len(s)) {
		return 0, fmt.Errorf("%q: %w", amount, errAmount)
	}
	var cents int64
	for _, part := range [2]string{whole, frac} {
		for i := 0; i < len(part); i++ {
			d := part[i] - '0'
			if d > 9 {
				return 0, fmt.Errorf("%q: %w", amount, errAmount)
			}
			cents = cents*10 + int64(d)
		}
	}
	for range 2 - len(frac) {
		cents *= 10
	}
	if neg {
		cents = -cents
	}
	return cents, nil
}

// addCents returns a+b, or errOverflow.
func addCents(a, b int64) (int64, error) {
	sum := a + b
	if (b > 0 && sum < a) || (b < 0 && sum > a) {
		return 0, errOverflow
	}
	return sum, nil
}

// formatCents formats cents as a decimal string with two decimal places, as
// big.Rat.FloatString(2) does.
func formatCents(c int64) string {
	var b []byte
	mag := uint64(c)
	if c < 0 {
		b = append(b, '-')
		mag = -mag // two's complement: right for math.MinInt64 too
	}
	b = strconv.AppendUint(b, mag/100, 10)
	b = append(b, '.', byte('0'+mag%100/10), byte('0'+mag%10))
	return string(b)
}
