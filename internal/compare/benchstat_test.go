package compare

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/testenv"
)

// benchstatBinary finds benchstat, installing the x/perf version this
// module uses when it is missing (the README's test command installs it
// up front). Without it the equivalence tests cannot run: they fail in CI
// and skip elsewhere.
func benchstatBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	if p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "benchstat"); fileExists(p) {
		return p
	}
	version, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "golang.org/x/perf").Output()
	if err == nil {
		gobin := t.TempDir()
		cmd := exec.Command("go", "install", "golang.org/x/perf/cmd/benchstat@"+strings.TrimSpace(string(version)))
		cmd.Env = append(os.Environ(), "GOBIN="+gobin)
		if out, err := cmd.CombinedOutput(); err == nil {
			return filepath.Join(gobin, "benchstat")
		} else {
			t.Logf("install benchstat: %v\n%s", err, out)
		}
	}
	testenv.Missing(t, "benchstat is not installed and could not be installed", "go install golang.org/x/perf/cmd/benchstat@latest")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestMatchesBenchstat runs benchstat and compare on the same real
// benchmark files with the same options and requires identical output:
// every center, ±CI, delta, p-value, geomean and warning footnote.
func TestMatchesBenchstat(t *testing.T) {
	benchstat := benchstatBinary(t)
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string // benchstat flags, then files
		opts Options
	}{
		{name: "old-new", args: []string{"old.txt", "new.txt"}},
		{name: "new-old", args: []string{"new.txt", "old.txt"}},
		{name: "three-files", args: []string{"old.txt", "new.txt", "six.txt"}},
		{name: "single", args: []string{"new.txt"}},
		{name: "small-samples", args: []string{"small-old.txt", "small-new.txt"}},
		{name: "small-vs-large", args: []string{"small-old.txt", "new.txt"}},
		{name: "six", args: []string{"old.txt", "six.txt"}},
		{name: "same-file-twice", args: []string{"old.txt", "old.txt"}},
		{name: "labels", args: []string{"before=old.txt", "after=new.txt"}},
		{name: "alpha", args: []string{"-alpha", "0.2", "old.txt", "new.txt"}, opts: Options{Alpha: 0.2}},
		{name: "confidence", args: []string{"-confidence", "0.99", "old.txt", "new.txt"}, opts: Options{Confidence: 0.99}},
		{name: "ignore-pkg", args: []string{"-ignore", "pkg", "old.txt", "new.txt"}, opts: Options{Ignore: []string{"pkg"}}},
		{name: "filter", args: []string{"-filter", ".name:Concat", "old.txt", "new.txt"}, opts: Options{Filter: ".name:Concat"}},
		{name: "col-n", args: []string{"-col", "/n", "new.txt"}, opts: Options{Col: "/n"}},
		{name: "row-name", args: []string{"-row", ".name", "old.txt", "new.txt"}, opts: Options{Row: ".name"}},
		// Sixty interleaved rounds of the bundled examples' benchmarks
		// (two packages, a custom unit) from the gate study.
		{name: "examples-pool", args: []string{"../../../bench/gate/data/moderate/base.txt", "../../../bench/gate/data/moderate/head.txt"}},
		{name: "examples-heavy-vs-moderate", args: []string{"-ignore", "pkg", "../../../bench/gate/data/heavy/head.txt", "../../../bench/gate/data/moderate/head.txt"}, opts: Options{Ignore: []string{"pkg"}}},
		{name: "table-none", args: []string{"-table", "", "-ignore", "pkg", "old.txt", "new.txt"}, opts: Options{Table: " ", Ignore: []string{"pkg"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var files []string
			for _, a := range tc.args {
				if strings.HasSuffix(a, ".txt") {
					files = append(files, a)
				}
			}
			for _, format := range []string{"text", "csv"} {
				want := runBenchstat(t, benchstat, testdata, append([]string{"-format", format}, tc.args...))
				got := runCompare(t, testdata, files, tc.opts, format)
				if got != want {
					t.Errorf("%s output differs from benchstat\n--- benchstat\n%s\n--- compare\n%s", format, want, got)
				}
			}
		})
	}
}

func runBenchstat(t *testing.T, bin, dir string, args []string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("benchstat %v: %v", args, err)
	}
	return stdout.String()
}

func runCompare(t *testing.T, dir string, args []string, opts Options, format string) string {
	t.Helper()
	t.Chdir(dir)
	inputs, err := ResolveAll(context.Background(), FileResolver{}, args)
	if err != nil {
		t.Fatal(err)
	}
	opts.KeepRunKeys = true
	cmp, err := Compare(inputs, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if format == "csv" {
		err = cmp.WriteCSV(&b, &bytes.Buffer{})
	} else {
		err = cmp.WriteText(&b)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
