package benchstats

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestMatchesBenchstat runs benchstat and Compare on the same real
// benchmark files with the same options and requires the same facts:
// every table's configuration, unit and columns, and every center, ±CI,
// delta, p-value, geomean and warning, each in its place. benchstat's CSV
// carries them all at full precision; the layout of our own renderers is
// not compared.
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
		{name: "col-two-fields", args: []string{"-col", ".file,/n", "old.txt", "new.txt"}, opts: Options{Col: ".file,/n"}},
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
			want := benchstatFacts(t, benchstat, testdata, tc.args)
			got := compareFacts(t, testdata, files, tc.opts)
			if len(want) == 0 {
				t.Fatal("benchstat reported nothing")
			}
			if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
				t.Errorf("facts differ from benchstat's\n--- benchstat\n%s\n--- compare\n%s", w, g)
			}
		})
	}
}

// compareFacts runs Compare on files in dir and states its results as
// benchstatFacts does.
func compareFacts(t *testing.T, dir string, files []string, opts Options) []string {
	t.Helper()
	t.Chdir(dir)
	inputs, err := ResolveAll(context.Background(), FileResolver{}, files)
	if err != nil {
		t.Fatal(err)
	}
	opts.KeepRunKeys = true
	cmp, err := Compare(context.Background(), inputs, opts)
	if err != nil {
		t.Fatal(err)
	}
	var facts []string
	add := func(format string, args ...any) { facts = append(facts, fmt.Sprintf(format, args...)) }
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for i, tb := range cmp.Tables {
		for j, kv := range tb.Config {
			if i == 0 || j >= len(cmp.Tables[i-1].Config) || cmp.Tables[i-1].Config[j] != kv {
				add("config %s: %s", kv.Key, kv.Value)
			}
		}
		var cols []string
		for _, c := range tb.Columns {
			var vs []string
			for _, f := range c.Fields {
				vs = append(vs, f.Value)
			}
			cols = append(cols, strings.Join(vs, "/"))
		}
		add("table %s columns %s", tb.Unit, strings.Join(cols, " | "))
		for _, r := range tb.Rows {
			for ci, c := range r.Cells {
				if c == nil {
					continue
				}
				add("%s col %d: %s ± %s %q", r.Name, ci, num(c.Summary.Center), c.Summary.PctRangeString(), errorStrings(c.Warnings))
				if ch := c.Change; ch != nil {
					add("%s col %d vs base: %s (%s) %q", r.Name, ci, ch.Delta, ch.Test.String(), errorStrings(ch.Test.Warnings))
				}
			}
		}
		for ci, g := range tb.Geomeans {
			center, delta := "", ""
			if g.HasCenter {
				center = num(g.Center)
			}
			if ci > 0 {
				delta = "?"
				if g.HasRatio {
					delta = fmt.Sprintf("%+.2f%%", (g.Ratio-1)*100)
				}
			}
			add("geomean col %d: %s %s %q", ci, center, delta, errorStrings(g.Warnings))
		}
	}
	return facts
}

func errorStrings(errs []error) []string {
	s := []string{}
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return s
}

var cellWarning = regexp.MustCompile(`^([A-Z]+)([0-9]+): (.*)$`)

// benchstatFacts runs benchstat with -format csv in dir and reads its
// tables back: configuration lines, a row per column-label field, the
// unit row, a row per benchmark (label, then center and CI per column,
// with delta and P for compared columns) and the geomean row; warnings
// come on stderr addressed by spreadsheet cell.
func benchstatFacts(t *testing.T, bin, dir string, args []string) []string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-format", "csv"}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("benchstat %v: %v\n%s", args, err, stderr.String())
	}
	warnings := make(map[[2]int][]string) // record (1-based), field → messages
	for _, l := range strings.Split(stderr.String(), "\n") {
		m := cellWarning.FindStringSubmatch(l)
		if m == nil || len(m[1]) != 1 {
			continue
		}
		rec, _ := strconv.Atoi(m[2])
		k := [2]int{rec, int(m[1][0] - 'A')}
		warnings[k] = append(warnings[k], m[3])
	}
	r := csv.NewReader(&stdout)
	r.FieldsPerRecord = -1
	// Warnings name records by line; the reader skips the blank lines
	// between tables, so keep each record's line.
	var records [][]string
	var lines []int
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read benchstat's CSV: %v", err)
		}
		line, _ := r.FieldPos(0)
		records, lines = append(records, rec), append(lines, line)
	}
	field := func(rec []string, i int) string {
		if i < len(rec) {
			return rec[i]
		}
		return ""
	}
	first := func(i int) int { // first field of column i
		if i == 0 {
			return 1
		}
		return 3 + (i-1)*4
	}
	var facts []string
	add := func(format string, args ...any) { facts = append(facts, fmt.Sprintf(format, args...)) }
	var labels [][]string // per label row, per column
	ncols := 0
	for n, rec := range records {
		w := func(f int) []string {
			if ws := warnings[[2]int{lines[n], f}]; ws != nil {
				return ws
			}
			return []string{}
		}
		switch {
		case len(rec) == 1:
			if rec[0] != "" {
				k, v, _ := strings.Cut(rec[0], ": ")
				add("config %s: %s", k, v)
			}
			labels = nil
		case rec[0] == "" && field(rec, 2) != "CI":
			var row []string
			for i := 0; first(i) < len(rec); i++ {
				row = append(row, rec[first(i)])
			}
			labels = append(labels, row)
		case rec[0] == "":
			ncols = 0
			for first(ncols)+1 < len(rec) && rec[first(ncols)+1] == "CI" {
				ncols++
			}
			var cols []string
			for i := range ncols {
				var vs []string
				for _, l := range labels {
					vs = append(vs, l[i])
				}
				cols = append(cols, strings.Join(vs, "/"))
			}
			add("table %s columns %s", rec[1], strings.Join(cols, " | "))
			labels = nil
		case rec[0] == "geomean":
			for i := range ncols {
				delta := ""
				if i > 0 {
					delta = field(rec, first(i)+2)
				}
				add("geomean col %d: %s %s %q", i, field(rec, first(i)), delta, w(first(i)))
			}
		default:
			for i := range ncols {
				f := first(i)
				if field(rec, f) == "" {
					continue
				}
				add("%s col %d: %s ± %s %q", rec[0], i, rec[f], rec[f+1], w(f))
				if i > 0 && field(rec, f+2) != "" {
					add("%s col %d vs base: %s (%s) %q", rec[0], i, rec[f+2], rec[f+3], w(f+2))
				}
			}
		}
	}
	return facts
}
