package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/store"
)

const fixtures = "../../internal/benchstats/testdata/"

func TestCompareCommand(t *testing.T) {
	out, code := perfCLI(t, "compare", fixtures+"old.txt", fixtures+"new.txt")
	if code != 0 || !strings.Contains(out, "vs base") || !strings.Contains(out, "geomean") {
		t.Fatalf("exit %d:\n%s", code, out)
	}

	out, code = perfCLI(t, "compare", "--format", "json", fixtures+"old.txt", fixtures+"new.txt")
	if code != 0 {
		t.Fatalf("json: exit %d", code)
	}
	var doc struct {
		Tables []struct {
			Unit string
			Rows []struct {
				Name  string
				Cells []*struct {
					Center float64
					VsBase *struct {
						Delta string
						P     float64
					} `json:"vs_base"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(doc.Tables) == 0 || len(doc.Tables[0].Rows) == 0 || doc.Tables[0].Rows[0].Cells[1].VsBase == nil {
		t.Fatalf("json lacks comparisons:\n%s", out)
	}

	out, code = perfCLI(t, "compare", "--format", "markdown", fixtures+"old.txt", fixtures+"new.txt")
	if code != 0 || !strings.Contains(out, "|---|---:|") {
		t.Errorf("markdown: exit %d:\n%s", code, out)
	}
	out, code = perfCLI(t, "compare", "--format", "csv", fixtures+"old.txt", fixtures+"new.txt")
	if code != 0 || !strings.Contains(out, "sec/op,CI") {
		t.Errorf("csv: exit %d:\n%s", code, out)
	}
}

func TestCompareRename(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	b := filepath.Join(dir, "b.txt")
	var sa, sb strings.Builder
	for i := range 6 {
		sa.WriteString("BenchmarkOld/n=1-2 \t 100 \t " + strconv.Itoa(100+i) + " ns/op\n")
		sb.WriteString("BenchmarkNew/n=1-2 \t 100 \t " + strconv.Itoa(200+i) + " ns/op\n")
	}
	os.WriteFile(a, []byte(sa.String()), 0o644)
	os.WriteFile(b, []byte(sb.String()), 0o644)
	out, code := perfCLI(t, "compare", "--rename", "BenchmarkOld=New", a, b)
	if code != 0 || !strings.Contains(out, "+97.56%") {
		t.Errorf("renamed benchmarks not paired (exit %d):\n%s", code, out)
	}
}

func TestCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	if _, code := perfCLI(t, "compare", filepath.Join(dir, "missing.txt"), fixtures+"new.txt"); code != 2 {
		t.Errorf("missing file: exit %d, want 2", code)
	}
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("not a benchmark\n"), 0o644)
	if _, code := perfCLI(t, "compare", empty); code != 1 {
		t.Errorf("no results: exit %d, want 1", code)
	}
	if _, code := perfCLI(t, "compare", "--format", "xml", fixtures+"new.txt"); code != 2 {
		t.Errorf("bad format: exit %d, want 2", code)
	}
	if _, code := perfCLI(t, "compare", "--rename", "nope", fixtures+"new.txt"); code != 2 {
		t.Errorf("bad rename: exit %d, want 2", code)
	}
	if _, code := perfCLI(t, "compare", "--filter", "((", fixtures+"new.txt"); code != 2 {
		t.Errorf("bad filter: exit %d, want 2", code)
	}
}

func TestBenchCommand(t *testing.T) {
	r := newGateRepo(t)
	t.Chdir(r.dir)
	out, code := perfCLI(t, "bench", "--count", "2", "--benchtime", "20x", "-o", "res.txt", "--cpuprofile", "--db", filepath.Join(t.TempDir(), "h.db"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	data, err := os.ReadFile(filepath.Join(r.dir, "res.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"commit: ", "branch: main", "dirty: false", "BenchmarkWork-"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("results lack %q:\n%s", want, data)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(r.dir, "res.*.cpu.pb.gz")); len(m) != 1 {
		t.Errorf("cpu profiles beside the results: %v", m)
	}
	// The saved profiles are found and diffed by compare.
	out, code = perfCLI(t, "compare", "res.txt", "res.txt")
	if code != 0 || !strings.Contains(out, "where it changed") {
		t.Errorf("compare with profiles: exit %d:\n%s", code, out)
	}
}

// TestCompareCommitRefs compares commits recorded in a real store by what
// git calls them in a real repository.
func TestCompareCommitRefs(t *testing.T) {
	ctx := context.Background()
	r := newGateRepo(t)
	r.write("notes.txt", "second")
	r.commit("second")
	testdata, err := filepath.Abs(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(r.dir)
	db := filepath.Join(t.TempDir(), "history.db")
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{}
	for rev, file := range map[string]string{"HEAD~1": "old.txt", "HEAD": "new.txt"} {
		out, err := exec.Command("git", "rev-parse", rev).Output()
		if err != nil {
			t.Fatal(err)
		}
		hashes[rev] = strings.TrimSpace(string(out))
		f, err := os.Open(filepath.Join(testdata, file))
		if err != nil {
			t.Fatal(err)
		}
		res, err := bench.Parse(f, file)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveBenchRun(ctx, store.BenchRun{Commit: hashes[rev], Machine: store.Machine{Hostname: "ci"}, Results: res.Results}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	for _, refs := range [][]string{{"HEAD~1", "main"}, {"main~1", "HEAD"}, {hashes["HEAD~1"][:8], "main"}} {
		out, code := perfCLI(t, append([]string{"compare", "--db", db, "--ignore", "go"}, refs...)...)
		if code != 0 || !strings.Contains(out, "vs base") || !strings.Contains(out, refs[1]) {
			t.Errorf("compare %v: exit %d:\n%s", refs, code, out)
		}
	}
	// A reference git does not know, and a commit without results, are
	// bad input.
	r.write("notes.txt", "third")
	r.commit("third")
	for _, ref := range []string{"no-such-branch", "main"} {
		if _, code := perfCLI(t, "compare", "--db", db, "HEAD~1", ref); code != 2 {
			t.Errorf("compare HEAD~1 %s: exit %d, want 2", ref, code)
		}
	}
}
