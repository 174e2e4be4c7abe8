package store

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// crashChildEnv, when set to a DSN, makes TestCrashChild write runs to it
// until it is killed.
const crashChildEnv = "PERFSCOPE_STORE_CRASH_CHILD"

// crashRunText is a realistic run: 200 benchmarks × 3 units × 10 samples.
func crashRunText() string {
	var b strings.Builder
	b.WriteString("pkg: example.com/crash\n")
	for n := range 200 {
		for i := range 10 {
			fmt.Fprintf(&b, "BenchmarkCrash%03d-8 \t 1000\t %d ns/op\t %d B/op\t %d allocs/op\n", n, 1000+i, 64*n, n%7)
		}
	}
	return b.String()
}

const crashRunMetrics = 200 * 3

// TestCrashChild is the process TestKillDuringWrite kills; on its own it
// does nothing.
func TestCrashChild(t *testing.T) {
	dsn := os.Getenv(crashChildEnv)
	if dsn == "" {
		t.Skip("runs only as the child of TestKillDuringWrite")
	}
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	results := parseBench(t, crashRunText())
	for i := 0; ; i++ {
		id, err := s.SaveBenchRun(ctx, BenchRun{Commit: fmt.Sprintf("%040x", i), Branch: "main", Results: results})
		if err != nil {
			fmt.Println("save:", err)
			os.Exit(1)
		}
		// Printed only after the commit returned: every run the parent
		// has seen here must survive.
		fmt.Println("saved", id)
	}
}

func TestKillDuringWrite(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		s, path := openTestSQLite(t)
		killDuringWrite(t, s, path)
		var check string
		if err := s.b.db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Errorf("integrity_check = %q, %v", check, err)
		}
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		s, dsn := openTestPostgres(t)
		killDuringWrite(t, s, dsn)
	})
}

// killDuringWrite kills a writing child with SIGKILL several times at random
// moments, then checks that s holds every run the child reported saved and
// that each run it holds is whole.
func killDuringWrite(t *testing.T, s *DB, dsn string) {
	if testing.Short() {
		t.Skip("kills child processes; skipped in -short mode")
	}
	const rounds = 5
	acknowledged := 0
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dsn)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Let a couple of runs land, then kill at a random point of the
		// following writes: the child spends nearly all its time inside
		// SaveBenchRun, so most kills land mid-transaction.
		saved, deadline := 0, time.After(2*time.Minute)
		for saved < 2 {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("round %d: child exited early", round)
				}
				if !strings.HasPrefix(l, "saved ") {
					t.Fatalf("round %d: child: %s", round, l)
				}
				saved++
			case <-deadline:
				cmd.Process.Kill()
				t.Fatalf("round %d: child saved nothing in 2 minutes", round)
			}
		}
		time.Sleep(time.Duration(rand.IntN(200)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for l := range lines {
			if strings.HasPrefix(l, "saved ") {
				saved++
			}
		}
		cmd.Wait()
		acknowledged += saved
		t.Logf("round %d: killed after %d saved runs", round, saved)
	}

	ctx := context.Background()
	db := s.b.db
	var runs int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM bench_runs").Scan(&runs); err != nil {
		t.Fatal(err)
	}
	// A kill between a commit and its "saved" line leaves one run more
	// than acknowledged per round, never one less.
	if runs < acknowledged || runs > acknowledged+rounds {
		t.Errorf("%d runs stored, %d acknowledged by the child", runs, acknowledged)
	}
	rows, err := db.QueryContext(ctx, `SELECT r.id, COUNT(s.run_id) FROM bench_runs r LEFT JOIN samples s ON s.run_id = r.id GROUP BY r.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		if n != crashRunMetrics {
			t.Errorf("run %d has %d metrics, want %d: a partial run survived", id, n, crashRunMetrics)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var orphans int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM samples s LEFT JOIN bench_runs r ON r.id = s.run_id WHERE r.id IS NULL`).Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("%d samples without a run (%v)", orphans, err)
	}
	// The store still takes writes after the kills.
	if _, err := s.SaveBenchRun(ctx, BenchRun{Commit: "after", Results: parseBench(t, crashRunText())}); err != nil {
		t.Errorf("write after kills: %v", err)
	}
}
