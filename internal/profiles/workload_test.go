package profiles

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// workloadDir holds the profiles that testdata/workload wrote, once per test
// run; TestMain sets it. The program takes seconds of CPU, so every test
// reads the same profiles instead of running it again.
var workloadDir string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "profiles-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if err := runWorkload(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		return 1
	}
	workloadDir = filepath.Join(tmp, "profiles")
	return m.Run()
}

// runWorkload builds testdata/workload and runs it to write its profiles
// under dir/profiles.
func runWorkload(dir string) error {
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		goCmd = "go"
	}
	bin := filepath.Join(dir, "workload")
	build := exec.Command(goCmd, "build", "-o", bin, "./testdata/workload")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	out := filepath.Join(dir, "profiles")
	if err := os.Mkdir(out, 0o755); err != nil {
		return err
	}
	if msg, err := exec.Command(bin, "-out", out).CombinedOutput(); err != nil {
		return fmt.Errorf("run: %w\n%s", err, msg)
	}
	return nil
}

// load parses one of the workload's profiles (by file base name).
func load(t *testing.T, name string) *profile.Profile {
	t.Helper()
	f, err := os.Open(filepath.Join(workloadDir, name+".pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// siteLine finds the line of testdata/workload/main.go marked "// site: name".
func siteLine(t *testing.T, name string) int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "workload", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := int64(1); sc.Scan(); n++ {
		if strings.HasSuffix(sc.Text(), "// site: "+name) || strings.Contains(sc.Text(), "// site: "+name+" ") {
			return n
		}
	}
	t.Fatalf("no line marked site: %s", name)
	return 0
}

// userRows returns the user-code rows of a focused table, in order.
func userRows(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Class == User && r.Folded == 0 {
			out = append(out, r)
		}
	}
	return out
}

func names(rows []Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Function
	}
	return out
}
