package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/store"
)

// changesFixtures holds real runs of testdata/changemod, each recorded by
// 'perfscope bench --measure instructions --count 5' (testdata/changes/
// capture.sh): a-* on machine ci-a, b-* on machine ci-b. At main's third
// commit Handle allocates a second buffer (allocs/op 1 → 2, B/op 64 → 128,
// instructions +2.6%); at its fifth it hashes 30% more (instructions
// +28%). Its sec/op, measured on a busy shared machine, is noise.
const changesFixtures = "testdata/changes"

// A fixtureRun is one stored run: its file, commit, branch and machine.
type fixtureRun struct {
	file, commit, branch, machine string
}

// changesRuns are the runs in commit-time order: main on ci-a, a feature
// branch on ci-a whose two commits fall between main's, and main's second,
// fourth and sixth commits measured again on ci-b.
var changesRuns = []fixtureRun{
	{"a-main-1", "m1", "main", "ci-a"},
	{"a-main-2", "m2", "main", "ci-a"},
	{"b-main-2", "m2", "main", "ci-b"},
	{"a-feature-1", "f1", "feature", "ci-a"},
	{"a-main-3", "m3", "main", "ci-a"},
	{"a-feature-2", "f2", "feature", "ci-a"},
	{"a-main-4", "m4", "main", "ci-a"},
	{"b-main-4", "m4", "main", "ci-b"},
	{"a-main-5", "m5", "main", "ci-a"},
	{"a-main-6", "m6", "main", "ci-a"},
	{"b-main-6", "m6", "main", "ci-b"},
	{"a-main-7", "m7", "main", "ci-a"},
}

// fixtureHash is the stored hash of a fixture commit such as "m3".
func fixtureHash(name string) string {
	return fmt.Sprintf("%x%038x", name, 0xc4a96e)
}

// saveChangesRuns stores changesRuns in st, commit i made i hours after the
// first, and returns the commits' times.
func saveChangesRuns(t *testing.T, st *store.DB) {
	t.Helper()
	times := make(map[string]time.Time)
	for _, r := range changesRuns {
		if _, ok := times[r.commit]; !ok {
			times[r.commit] = epoch.Add(time.Duration(len(times)) * time.Hour)
		}
		f, err := os.Open(filepath.Join(changesFixtures, r.file+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		var results []*benchfmt.Result
		rd := benchfmt.NewReader(f, f.Name())
		for rd.Scan() {
			if res, ok := rd.Result().(*benchfmt.Result); ok {
				results = append(results, res.Clone())
			}
		}
		f.Close()
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		run := store.BenchRun{Commit: fixtureHash(r.commit), Branch: r.branch, CommitTime: times[r.commit],
			Time: times[r.commit].Add(time.Duration(len(r.machine)) * time.Minute), Machine: store.Machine{Hostname: r.machine},
			GoVersion: "go1.26.8", Results: results}
		if _, err := st.SaveBenchRun(context.Background(), run); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOneAnswerForWhatChanged stores real runs over seven commits on two
// branches and two machines and checks that 'perfscope history', 'perfscope
// compare' and every dashboard page report the same changes with the same
// numbers: history.Changes' answer. The allocation and instruction steps
// are marked from the first commit they can be, and nothing is compared
// across branches or machines.
func TestOneAnswerForWhatChanged(t *testing.T) {
	ctx := context.Background()
	backend, dbPath := openSQLiteBackend(t)
	saveChangesRuns(t, backend)
	ts := startServer(t, Config{Store: backend})
	want, err := history.Changes(ctx, backend, history.Query{})
	if err != nil {
		t.Fatal(err)
	}
	bin := buildPerfscope(t)

	// perfscope history prints history.Changes' answer.
	var cli history.Result
	if err := json.Unmarshal(runPerfscope(t, bin, "history", "--db", dbPath, "--format", "json"), &cli); err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, cli, want) {
		t.Errorf("perfscope history differs from history.Changes:\n%s", runPerfscope(t, bin, "history", "--db", dbPath))
	}

	// The steps are marked where they happened, each against the commit
	// before on its own branch and machine.
	line := func(name, unit, branch, machine string) history.Series {
		t.Helper()
		for _, s := range want.Series {
			if strings.HasPrefix(s.Name, name+"-") && s.Unit == unit && s.Branch == branch && s.Machine == machine {
				return s
			}
		}
		t.Fatalf("no series %s %s on %s/%s", name, unit, branch, machine)
		return history.Series{}
	}
	marked := func(s history.Series) []string {
		var out []string
		for _, c := range s.Commits {
			if c.Changed {
				out = append(out, c.Ref)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name, unit, branch, machine string
		want                        []string
	}{
		{"Handle", "allocs/op", "main", "ci-a", []string{"m3"}},
		{"Handle", "B/op", "main", "ci-a", []string{"m3"}},
		{"Handle", "instructions/op", "main", "ci-a", []string{"m3", "m5"}},
		{"Steady", "instructions/op", "main", "ci-a", nil},
		{"Steady", "allocs/op", "main", "ci-a", nil},
		{"Handle", "allocs/op", "main", "ci-b", []string{"m4"}},
		{"Handle", "instructions/op", "main", "ci-b", []string{"m4", "m6"}},
		{"Handle", "allocs/op", "feature", "ci-a", nil},
		{"Handle", "instructions/op", "feature", "ci-a", nil},
	} {
		s := line(tc.name, tc.unit, tc.branch, tc.machine)
		var wantRefs []string
		for _, c := range tc.want {
			wantRefs = append(wantRefs, fixtureHash(c))
		}
		if got := marked(s); strings.Join(got, " ") != strings.Join(wantRefs, " ") {
			t.Errorf("%s %s on %s/%s: marked %v, want %v", tc.name, tc.unit, tc.branch, tc.machine, got, tc.want)
		}
	}
	if c := line("Handle", "allocs/op", "main", "ci-a").Commits[2]; c.Better != -1 || c.Previous != fixtureHash("m2") || *c.Delta != 1 {
		t.Errorf("allocs/op 1 → 2 at m3: %+v", c)
	}
	// Every series is one line's commits, each compared with the one
	// before it there.
	onLine := make(map[history.Line]map[string]bool)
	for _, r := range changesRuns {
		l := history.Line{Branch: r.branch, Machine: r.machine}
		if onLine[l] == nil {
			onLine[l] = make(map[string]bool)
		}
		onLine[l][fixtureHash(r.commit)] = true
	}
	for _, s := range want.Series {
		l := history.Line{Branch: s.Branch, Machine: s.Machine}
		if len(s.Machines) != 1 || s.Machines[0] != s.Machine || len(s.Commits) != len(onLine[l]) {
			t.Errorf("%s %s on %s/%s: machines %v, %d commits, want %d", s.Name, s.Unit, s.Branch, s.Machine, s.Machines, len(s.Commits), len(onLine[l]))
		}
		for i, c := range s.Commits {
			if !onLine[l][c.Ref] || i > 0 && c.Previous != s.Commits[i-1].Ref || i == 0 && (c.Previous != "" || c.Changed) {
				t.Errorf("%s %s on %s/%s: commit %d %s compared with %q", s.Name, s.Unit, s.Branch, s.Machine, i, c.Ref, c.Previous)
			}
		}
	}

	// The series API answers each series as history does.
	for _, s := range want.Series {
		var got history.Series
		ts.getJSON(t, "/api/v1/series?"+url.Values{"package": {s.Package}, "name": {s.Name}, "unit": {s.Unit},
			"branch": {s.Branch}, "machine": {s.Machine}}.Encode(), &got)
		if !sameJSON(t, got, s) {
			t.Errorf("/api/v1/series of %s %s on %s/%s differs from history", s.Name, s.Unit, s.Branch, s.Machine)
		}
	}

	// Every change is on the home page, the list (the latest per series),
	// and its trend page, with its number and the link to its
	// comparison on its own line; the comparisons agree.
	home := ts.page(t, "/")
	list := ts.page(t, "/benchmarks")
	changes := 0
	for i, cc := range history.ByCommit(want.Series, 0) {
		for _, ch := range cc.Changes {
			changes++
			checkComparison(t, ts, bin, dbPath, ch)
			if i >= web.HomeCommits {
				continue // older than the home page shows
			}
			link := web.CompareLink(ch.Previous, ch.Ref, url.Values{"branch": {ch.Line.Branch}, "machine": {ch.Line.Machine}})
			if !strings.Contains(home, link) || !strings.Contains(home, measure.FormatChange(ch.Delta)) {
				t.Errorf("home page lacks %s %s %s at %s (%s)", ch.Name, ch.Unit, measure.FormatChange(ch.Delta), ch.Ref, link)
			}
		}
	}
	if changes < 8 {
		t.Fatalf("only %d changes marked; the fixture has at least 8", changes)
	}
	for _, s := range want.Series {
		trend := ts.page(t, "/trend?"+url.Values{"package": {s.Package}, "name": {s.Name}, "unit": {s.Unit},
			"branch": {s.Branch}, "machine": {s.Machine}}.Encode())
		keep := url.Values{"branch": {s.Branch}, "machine": {s.Machine}}
		var last *history.Commit
		for i, c := range s.Commits {
			if !c.Changed {
				continue
			}
			last = &s.Commits[i]
			link := web.CompareLink(c.Previous, c.Ref, keep)
			if !strings.Contains(trend, link) || !strings.Contains(trend, measure.FormatChange(*c.Delta)) {
				t.Errorf("trend of %s %s on %s/%s lacks the change at %s", s.Name, s.Unit, s.Branch, s.Machine, c.Ref)
			}
		}
		if n, want := strings.Count(trend, `class="cmp"`), len(marked(s)); n != want {
			t.Errorf("trend of %s %s on %s/%s lists %d changes, history %d", s.Name, s.Unit, s.Branch, s.Machine, n, want)
		}
		if last != nil {
			cell := measure.FormatChange(*last.Delta) + ` <span class="at">at ` + last.Ref[:7]
			if !strings.Contains(list, web.CompareLink(last.Previous, last.Ref, keep)) || !strings.Contains(list, cell) {
				t.Errorf("the list lacks the last change of %s %s on %s/%s (%s)", s.Name, s.Unit, s.Branch, s.Machine, cell)
			}
		}
	}
	// What the old pages did: compare a main commit with the feature
	// branch's commit before it in time.
	for _, bad := range [][2]string{{"f2", "m4"}, {"f1", "m3"}, {"m3", "f2"}} {
		link := "base=" + fixtureHash(bad[0]) + "&branch="
		if head := "&head=" + fixtureHash(bad[1]); strings.Contains(home, link+"main"+head) || strings.Contains(home, link+"feature"+head) ||
			strings.Contains(list, link+"main"+head) || strings.Contains(list, link+"feature"+head) {
			t.Errorf("a page compares %s with %s, across branches", bad[1], bad[0])
		}
	}
}

// checkComparison compares the two commits of a change with the dashboard's
// comparison API and page and with 'perfscope compare', on the change's
// branch and machine, and checks they say what history says: the same
// medians, change and p-value, significant.
func checkComparison(t *testing.T, ts *testServer, bin, dbPath string, ch history.Change) {
	t.Helper()
	q := url.Values{"base": {ch.Previous}, "head": {ch.Ref}, "branch": {ch.Line.Branch}, "machine": {ch.Line.Machine}}
	var api comparisonJSON
	ts.getJSON(t, "/api/v1/compare?"+q.Encode(), &api)
	var cli comparisonJSON
	out := runPerfscope(t, bin, "compare", "--db", dbPath, "--branch", ch.Line.Branch, "--machine", ch.Line.Machine,
		"--format", "json", ch.Previous, ch.Ref)
	if err := json.Unmarshal(out, &cli); err != nil {
		t.Fatal(err)
	}
	page := ts.page(t, "/compare?"+q.Encode())
	for name, cmp := range map[string]comparisonJSON{"dashboard": api, "perfscope compare": cli} {
		base, head, vs := cmp.row(ch.Unit, ch.Name)
		if vs == nil {
			t.Errorf("%s of %s → %s has no %s %s", name, ch.Previous, ch.Ref, ch.Name, ch.Unit)
			continue
		}
		delta, err := strconv.ParseFloat(strings.TrimSuffix(vs.Delta, "%"), 64)
		if err != nil || !vs.Significant || vs.P != ch.P || *head != ch.Median || math.Abs(delta-100*ch.Delta) > 0.006 ||
			math.Abs(*head / *base - 1 - ch.Delta) > 1e-12 {
			t.Errorf("%s of %s %s at %s: %v → %v, %s p=%v significant %v; history says %+.4f%% p=%v median %v",
				name, ch.Name, ch.Unit, ch.Ref, *base, *head, vs.Delta, vs.P, vs.Significant, 100*ch.Delta, ch.P, ch.Median)
		}
		if name == "dashboard" && !strings.Contains(page, vs.Delta) {
			t.Errorf("the comparison page of %s → %s lacks %s %s %s", ch.Previous, ch.Ref, ch.Name, ch.Unit, vs.Delta)
		}
	}
}

// comparisonJSON is what 'perfscope compare --format json' prints.
type comparisonJSON struct {
	Tables []struct {
		Unit string `json:"unit"`
		Rows []struct {
			Name  string `json:"name"`
			Cells []struct {
				Center *float64 `json:"center"`
				VsBase *struct {
					Delta       string  `json:"delta"`
					P           float64 `json:"p"`
					Significant bool    `json:"significant"`
				} `json:"vs_base"`
			} `json:"cells"`
		} `json:"rows"`
	} `json:"tables"`
}

// row returns the base and head medians of benchmark name in unit and the
// head's change, nil when the comparison lacks them.
func (c comparisonJSON) row(unit, name string) (base, head *float64, vs *struct {
	Delta       string  `json:"delta"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
}) {
	for _, t := range c.Tables {
		for _, r := range t.Rows {
			if t.Unit == unit && r.Name == name && len(r.Cells) == 2 {
				return r.Cells[0].Center, r.Cells[1].Center, r.Cells[1].VsBase
			}
		}
	}
	return nil, nil, nil
}

// sameJSON reports whether a and b have the same JSON form.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

// page gets a dashboard page and returns its HTML with entities decoded,
// as a browser shows its text and follows its links.
func (ts *testServer) page(t *testing.T, path string) string {
	t.Helper()
	code, body := ts.do(t, http.MethodGet, path, "", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d: %.500s", path, code, body)
	}
	return html.UnescapeString(string(body))
}

// buildPerfscope builds the perfscope command for the test.
func buildPerfscope(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "perfscope")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/perfscope")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build perfscope: %v\n%s", err, out)
	}
	return bin
}

// runPerfscope runs the perfscope command and returns its output.
func runPerfscope(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perfscope %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}
