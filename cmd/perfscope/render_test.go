package main

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/server"
	"github.com/perfscope/perfscope/internal/store"
)

// committedRun is a real run of the leftpad example in its naive mode,
// saved by 'perfscope demo'.
const committedRun = "../../internal/analysis/testdata/leftpad-naive"

// textFinding matches a finding's heading in the text report:
// "1. Title  [49.2% of allocated bytes]  (rule)".
var textFinding = regexp.MustCompile(`(?m)^\d+\. (.+)  \[(.+)\]  \((\S+)\)$`)

// pageFinding matches a finding on the dashboard's run page.
var pageFinding = regexp.MustCompile(`<li(?: class="high")?><strong>(.*?)</strong> <span class="summary">\((.*?)\)</span>`)

// TestSameFindingsEverywhere renders one committed run as 'perfscope
// profile' prints it, as 'perfscope report' prints it with and without the
// source, and as the dashboard shows it, and checks that each shows the
// same findings with the same shares.
func TestSameFindingsEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example's source for the compiler's reasons")
	}
	dir, err := filepath.Abs(committedRun)
	if err != nil {
		t.Fatal(err)
	}
	r, err := run.Load(dir)
	if err != nil {
		t.Fatal(err)
	}

	// perfscope profile renders the run it saved with its own flags.
	var rf reportFlags
	c := &cobra.Command{}
	addFormatFlag(c, &rf.format, report.Formats()...)
	rf.register(c.Flags())
	if err := c.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	var profileOut bytes.Buffer
	if _, err := writeRunReport(t.Context(), &profileOut, rf, r); err != nil {
		t.Fatal(err)
	}
	want := textFindings(t, "perfscope profile", profileOut.String())
	if len(want) < 2 {
		t.Fatalf("perfscope profile shows %d findings, want the naive leftpad's several:\n%s", len(want), profileOut.String())
	}
	// The run was built in a checkout that is gone, so the loop around
	// leftpad's concatenation is not seen: it is concat-hot's, with a note.
	for _, rule := range []string{"concat-hot", "built-per-call"} {
		if !slices.ContainsFunc(want, func(f string) bool { return strings.HasSuffix(f, "("+rule+")") }) {
			t.Errorf("perfscope profile does not find %s in the naive leftpad: %q", rule, want)
		}
	}

	for _, args := range [][]string{
		{"report", dir},
		{"report", "--list", "3", dir},
	} {
		checkReport(t, want, args...)
	}
	cliOut := perfscope(t, "report", "--format", "json", dir)
	cliJSON := jsonFindings(t, cliOut)
	// A finding's sentence, numbers included, reads the same in every
	// format: the text report (wrapped at 100 columns), JSON, the page.
	sums := jsonSummaries(t, cliOut)
	flatText := strings.Join(strings.Fields(profileOut.String()), " ")
	for _, s := range sums {
		if !strings.Contains(flatText, s) {
			t.Errorf("the text report lacks the JSON report's summary %q", s)
		}
	}

	ts := serveDashboard(t, r, false)
	page := get(t, ts.URL+"/runs/"+r.ID)
	checkPage(t, want, page)
	checkPageReport(t, want, page, ts.URL, r.ID)
	for _, s := range sums {
		if !strings.Contains(html.UnescapeString(page), "<div>"+s+"</div>") {
			t.Errorf("the run page lacks the JSON report's summary %q", s)
		}
	}
	if strings.Contains(page, "Compiler reasons skipped") {
		t.Error("the run page says compiler reasons were skipped, though the server builds them")
	}
	if got := jsonFindings(t, get(t, ts.URL+"/api/v1/runs/"+r.ID+"/report")); !slices.Equal(got, cliJSON) {
		t.Errorf("the API's report has findings\n%q\nwant, as perfscope report --format json,\n%q", got, cliJSON)
	}

	// Without the source, the findings that rest on the compiler's
	// reasons (fmt arguments boxed at the call) charge less; the
	// dashboard told to skip the build shows what the CLI does.
	wantNoSource := checkReport(t, nil, "report", "--no-source", dir)
	if !slices.Equal(wantNoSource, want) {
		t.Logf("without the source:\n%q\nwith it:\n%q", wantNoSource, want)
	}
	noBuild := serveDashboard(t, r, true)
	page = get(t, noBuild.URL+"/runs/"+r.ID)
	checkPage(t, wantNoSource, page)
	checkPageReport(t, wantNoSource, page, noBuild.URL, r.ID)
	if !strings.Contains(page, "Compiler reasons skipped") {
		t.Error("a server told not to build the source does not say on the run page that compiler reasons were skipped")
	}
}

// checkReport runs perfscope with args and checks that its report shows
// the findings want, when want is not nil; it returns the findings.
func checkReport(t *testing.T, want []string, args ...string) []string {
	t.Helper()
	what := "perfscope " + strings.Join(args[:len(args)-1], " ")
	got := textFindings(t, what, perfscope(t, args...))
	if want != nil && !slices.Equal(got, want) {
		t.Errorf("%s shows\n%q\nwant\n%q", what, got, want)
	}
	return got
}

// checkPage checks that a run page lists the findings want, both in its
// findings list and in the text report it embeds.
func checkPage(t *testing.T, want []string, page string) {
	t.Helper()
	var onPage []string
	rules := textFinding.FindAllStringSubmatch(strings.Join(want, "\n"), -1)
	for i, m := range pageFinding.FindAllStringSubmatch(page, -1) {
		rule := ""
		if i < len(rules) {
			rule = rules[i][3] // the list names no rule; the rest must match
		}
		onPage = append(onPage, "1. "+html.UnescapeString(m[1])+"  ["+html.UnescapeString(m[2])+"]  ("+rule+")")
	}
	if !slices.Equal(onPage, want) {
		t.Errorf("the run page lists\n%q\nwant\n%q", onPage, want)
	}
}

// checkPageReport checks that the run page links its whole text report
// and that the report it links lists the findings want lists.
func checkPageReport(t *testing.T, want []string, page, base, id string) {
	t.Helper()
	link := "/api/v1/runs/" + id + "/report?format=text"
	if !strings.Contains(html.UnescapeString(page), `href="`+link+`"`) {
		t.Fatalf("the run page does not link its text report %s:\n%s", link, page)
	}
	if got := textFindings(t, "the run page's text report", get(t, base+link)); !slices.Equal(got, want) {
		t.Errorf("the run page's text report shows\n%q\nwant\n%q", got, want)
	}
}

// textFindings lists the findings' headings of a text report, numbered
// "1." each so that lists compare whatever their place in the report.
func textFindings(t *testing.T, what, out string) []string {
	t.Helper()
	var fs []string
	for _, m := range textFinding.FindAllStringSubmatch(out, -1) {
		fs = append(fs, "1. "+m[1]+"  ["+m[2]+"]  ("+m[3]+")")
	}
	if len(fs) == 0 {
		t.Errorf("%s shows no findings:\n%s", what, out)
	}
	return fs
}

// reportFinding is a finding of a JSON report, as these tests compare it.
type reportFinding struct {
	Rule     string  `json:"rule"`
	Title    string  `json:"title"`
	Severity float64 `json:"severity"`
	Summary  string  `json:"summary"`
}

// jsonReport reads a JSON report's findings.
func jsonReport(t *testing.T, out string) []reportFinding {
	t.Helper()
	var rep struct {
		Findings []reportFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, out)
	}
	return rep.Findings
}

// jsonSummaries lists a JSON report's findings' summaries.
func jsonSummaries(t *testing.T, out string) []string {
	t.Helper()
	var sums []string
	for _, f := range jsonReport(t, out) {
		if f.Summary == "" || strings.Contains(f.Summary, "{}") {
			t.Errorf("a finding's summary is %q", f.Summary)
		}
		sums = append(sums, f.Summary)
	}
	return sums
}

// jsonFindings lists a JSON report's findings as rule, title, severity
// (the share at full precision) and summary.
func jsonFindings(t *testing.T, out string) []string {
	t.Helper()
	var fs []string
	for _, f := range jsonReport(t, out) {
		b, _ := json.Marshal(f)
		fs = append(fs, string(b))
	}
	return fs
}

// perfscope runs the command line in this process and returns its output.
func perfscope(t *testing.T, args ...string) string {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("perfscope %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

// serveDashboard serves the dashboard on a loopback port with r indexed.
func serveDashboard(t *testing.T, r *run.Run, noCompiler bool) *httptest.Server {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "perfscope.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.SaveProfileRun(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, DataDir: t.TempDir(), PublicRead: true, NoCompiler: noCompiler, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, body)
	}
	return string(body)
}
