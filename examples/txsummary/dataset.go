package txsummary

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The data set is a JSON object {"users": [...]}: each user has a balance
// and transactions, amounts as decimal strings with at most two decimal
// places ("1234.56", "-7.5"), so that they can be summed exactly.
type dataset struct {
	Users []user `json:"users"`
}

type user struct {
	ID           int           `json:"id"`
	Name         string        `json:"name"`
	Email        string        `json:"email"`
	Balance      string        `json:"balance"`
	Transactions []transaction `json:"transactions"`
}

type transaction struct {
	ID          string `json:"id"`
	Date        string `json:"date"`
	Amount      string `json:"amount"`
	Description string `json:"description"`
}

// defaultUsers makes a data set of about 2 MB: big enough that parsing it
// per request dominates a profile, small enough to generate in a blink.
const defaultUsers = 2700

// rng is splitmix64: tiny, and its output is fixed by this code rather than
// by a library whose algorithms may change between Go releases, so the
// generated data set is the same everywhere, forever.
type rng struct{ state uint64 }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n); the modulo bias is irrelevant here.
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

var (
	firstNames = [...]string{"Ada", "Alan", "Barbara", "Dennis", "Edsger", "Frances", "Grace", "John", "Ken", "Leslie", "Margaret", "Niklaus", "Radia", "Rob", "Shafi", "Tony"}
	lastNames  = [...]string{"Allen", "Backus", "Dijkstra", "Hamilton", "Hoare", "Hopper", "Kernighan", "Lamport", "Liskov", "Lovelace", "McCarthy", "Perlman", "Pike", "Ritchie", "Thompson", "Wirth"}
	debits     = [...]string{"Grocery store", "Coffee shop", "Rent", "Electricity bill", "Train ticket", "Bookshop", "Restaurant", "Pharmacy", "Internet", "Cinema"}
	credits    = [...]string{"Salary", "Refund", "Interest", "Transfer from savings"}
)

// generate returns the deterministic data set with n users.
func generate(n int) dataset {
	r := &rng{state: 20240601}
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ds := dataset{Users: make([]user, n)}
	txID := 0
	for i := range ds.Users {
		first, last := firstNames[r.intn(len(firstNames))], lastNames[r.intn(len(lastNames))]
		u := user{
			ID:      i + 1,
			Name:    first + " " + last,
			Email:   fmt.Sprintf("%s.%s.%d@example.com", first, last, i+1),
			Balance: formatCents(int64(r.intn(20_000_000)) - 2_000_000),
		}
		u.Transactions = make([]transaction, r.intn(16))
		for j := range u.Transactions {
			txID++
			var cents int64
			var desc string
			if r.intn(5) == 0 {
				cents, desc = int64(r.intn(500_000)+1), credits[r.intn(len(credits))]
			} else {
				cents, desc = -int64(r.intn(20_000)+1), debits[r.intn(len(debits))]
			}
			amount := formatCents(cents)
			// Some amounts are written with fewer decimals, as people and
			// other systems do; both parsers must read them the same.
			switch {
			case cents%100 == 0 && r.intn(2) == 0:
				amount = amount[:len(amount)-3]
			case cents%10 == 0 && r.intn(4) == 0:
				amount = amount[:len(amount)-1]
			}
			u.Transactions[j] = transaction{
				ID:          "tx-" + strconv.Itoa(txID),
				Date:        epoch.AddDate(0, 0, r.intn(366)).Format(time.DateOnly),
				Amount:      amount,
				Description: desc,
			}
		}
		ds.Users[i] = u
	}
	return ds
}

// writeDataset writes the data set with n users to path, one user per line,
// atomically: a reader never sees a half-written file.
func writeDataset(path string, n int) error {
	ds := generate(n)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write data set: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename this fails harmlessly
	w := bufio.NewWriter(tmp)
	w.WriteString(`{"users":[` + "\n")
	for i, u := range ds.Users {
		b, err := json.Marshal(u)
		if err != nil {
			tmp.Close()
			return fmt.Errorf("write data set: %w", err)
		}
		w.Write(b)
		if i < len(ds.Users)-1 {
			w.WriteByte(',')
		}
		w.WriteByte('\n')
	}
	w.WriteString("]}\n")
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("write data set %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write data set %s: %w", path, err)
	}
	// CreateTemp makes the file private; the data set is not secret.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write data set: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write data set: %w", err)
	}
	return nil
}

// defaultDataPath is where the data set is generated when --data is not
// given: the user's cache directory, or the temporary directory without one.
func defaultDataPath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	} else {
		dir = filepath.Join(dir, "perfscope")
	}
	return filepath.Join(dir, "txsummary-v1.json")
}

// ensureDataset generates the default data set at path if no file is there,
// and reports whether it did.
func ensureDataset(path string) (generated bool, err error) {
	if _, err := os.Stat(path); err == nil {
		return false, nil
	} else if !os.IsNotExist(err) {
		return false, fmt.Errorf("data set: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("data set: %w", err)
	}
	return true, writeDataset(path, defaultUsers)
}
