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

	"github.com/perfscope/perfscope/internal/profseries"
)

// profCrashChildEnv, when set to a DSN, makes TestProfileCrashChild append
// scrapes to it until it is killed.
const profCrashChildEnv = "PERFSCOPE_PROFSTORE_CRASH_CHILD"

// TestProfileCrashChild is the process TestKillDuringAppend kills; on its
// own it does nothing.
func TestProfileCrashChild(t *testing.T) {
	dsn := os.Getenv(profCrashChildEnv)
	if dsn == "" {
		t.Skip("runs only as the child of TestKillDuringAppend")
	}
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	cpu := leftpadProfiles(t, profseries.CPU)
	// Each child starts where the last stopped: a new day, new names.
	var n int64
	s.b.db.QueryRow(`SELECT COUNT(*) FROM prof_blocks`).Scan(&n)
	for i := n + 1; ; i++ {
		sc := scrapeAt(apiTarget, profseries.CPU, renamed(cpu[i%4], int(i)), profEpoch.Add(time.Duration(i)*10*time.Second))
		if err := s.Append(ctx, sc); err != nil {
			fmt.Println("append:", err)
			os.Exit(1)
		}
		fmt.Println("saved", i)
	}
}

func TestKillDuringAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes; skipped in -short mode")
	}
	s, path := openTestSQLite(t)
	acknowledged := 0
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProfileCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), profCrashChildEnv+"="+path)
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
		saved, deadline := 0, time.After(2*time.Minute)
		for saved < 2 {
			select {
			case l, ok := <-lines:
				if !ok || !strings.HasPrefix(l, "saved ") {
					t.Fatalf("round %d: child: %q", round, l)
				}
				saved++
			case <-deadline:
				cmd.Process.Kill()
				t.Fatalf("round %d: child saved nothing in 2 minutes", round)
			}
		}
		time.Sleep(time.Duration(rand.IntN(100)) * time.Millisecond)
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
	}
	ctx := context.Background()
	var blocks int
	if err := s.b.db.QueryRow(`SELECT COUNT(*) FROM prof_blocks`).Scan(&blocks); err != nil {
		t.Fatal(err)
	}
	if blocks < acknowledged || blocks > acknowledged+4 {
		t.Errorf("%d scrapes stored, %d acknowledged", blocks, acknowledged)
	}
	var check string
	if err := s.b.db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
	// Every stored scrape reads back whole, its symbols all there.
	p, err := s.MergedProfile(ctx, profseries.Query{Type: profseries.CPU, From: profEpoch, To: profEpoch.Add(30 * 24 * time.Hour)})
	if err != nil {
		t.Fatalf("read after kills: %v", err)
	}
	if err := p.CheckValid(); err != nil {
		t.Errorf("merged after kills: %v", err)
	}
	if err := s.Append(ctx, scrapeAt(webTarget, profseries.CPU, leftpadProfiles(t, profseries.CPU)[0], profEpoch)); err != nil {
		t.Errorf("append after kills: %v", err)
	}
}
