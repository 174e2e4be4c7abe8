package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/store"
)

// storeCountedCommits records the real counted runs of
// testdata/instructions (see capture.go there): a benchmark whose head
// runs hot's loop 1,000 more times, 14 instructions each, and a third
// commit whose count of it was uploaded as results only. It returns the
// base's and the head's commits, and the third.
func storeCountedCommits(t *testing.T, st *store.DB) (base, head, bare string) {
	t.Helper()
	ctx := context.Background()
	var commits []string
	for i, side := range []string{"base", "head", "head"} {
		dir := filepath.Join("testdata", "instructions")
		f, err := os.Open(filepath.Join(dir, side+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := bench.Parse(f, side+".txt")
		f.Close()
		if err != nil || len(res.Results) == 0 {
			t.Fatalf("%s.txt: %v", side, err)
		}
		commit := res.Results[0].GetConfig("commit")
		run := store.BenchRun{Commit: commit, Branch: "main", CommitTime: time.Date(2026, 11, 1, i, 0, 0, 0, time.UTC),
			Machine: store.Machine{Hostname: "counter", GOOS: "linux", GOARCH: "amd64"}, Results: res.Results}
		if i == 2 {
			run.Commit = "c0ffee" + commit[6:]
		} else {
			data, err := os.ReadFile(filepath.Join(dir, side+".instructions.pb.gz"))
			if err != nil {
				t.Fatal(err)
			}
			run.InstructionProfiles = []store.InstructionProfile{{Package: "example.com/scratch", Name: "Mix-2", Data: data}}
		}
		if _, err := st.SaveBenchRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		commits = append(commits, run.Commit)
	}
	return commits[0], commits[1], commits[2]
}

// TestInstructionChanges compares two commits whose instruction counts
// were recorded with their profiles: the JSON API and the comparison page
// name hot first, with its exact delta of 14,000 instructions an
// operation, and the page's diff flame graph opens in a real Chromium with
// hot in it and the way back. A side counted without a profile says why.
func TestInstructionChanges(t *testing.T) {
	st, _ := openSQLiteBackend(t)
	base, head, bare := storeCountedCommits(t, st)
	ts := startServer(t, Config{Store: st, NoCompiler: true})

	var cmp struct {
		Changes []gate.RecordedChange `json:"instruction_changes"`
	}
	ts.getJSON(t, "/api/v1/compare?base="+base+"&head="+head, &cmp)
	if len(cmp.Changes) != 1 || cmp.Changes[0].Explanation == nil || len(cmp.Changes[0].Explanation.Functions) == 0 {
		t.Fatalf("instruction_changes: %+v, want one explained", cmp.Changes)
	}
	c := cmp.Changes[0]
	f := c.Explanation.Functions[0]
	if c.Benchmark != "Mix-2" || c.Change < 0.049 || c.Change > 0.051 || f.Function != "example.com/scratch.hot" || f.Delta != 14000 {
		t.Errorf("explained %s %+.2f%%, first %s %+v; want Mix-2 about +5%%, example.com/scratch.hot +14000", c.Benchmark, 100*c.Change, f.Function, f.Delta)
	}
	if len(c.Explanation.Lines) == 0 || c.Explanation.Lines[0].Source != "s += i % 7" || c.Explanation.Lines[0].Function != "example.com/scratch.hot" {
		t.Errorf("lines %+v, want hot's loop first", c.Explanation.Lines)
	}
	cmp.Changes = nil
	ts.getJSON(t, "/api/v1/compare?base="+bare+"&head="+head, &cmp)
	if len(cmp.Changes) != 0 {
		t.Errorf("equal counts explained: %+v", cmp.Changes)
	}
	cmp.Changes = nil
	ts.getJSON(t, "/api/v1/compare?base="+base+"&head="+bare, &cmp)
	if len(cmp.Changes) != 1 || cmp.Changes[0].Explanation != nil || !strings.Contains(cmp.Changes[0].Unexplained, "the head's count of it kept no per-function profile: counted before") {
		t.Errorf("a head without a profile: %+v, want it said", cmp.Changes)
	}
	code, md := ts.do(t, http.MethodGet, "/api/v1/compare?format=markdown&base="+base+"&head="+head, "", "", nil)
	if code != http.StatusOK || !strings.Contains(string(md), "Where it changed") || !strings.Contains(string(md), "example.com/scratch.hot") {
		t.Errorf("markdown %d:\n%s", code, md)
	}
	if code, _ := ts.do(t, http.MethodGet, "/compare/instructions/1/999/example.com%2Fscratch/Mix-2", "", "", nil); code != http.StatusNotFound {
		t.Errorf("the diff of a run without the profile answered %d, want 404", code)
	}

	ctx := newBrowser(t)
	art := artifactsDir(t)
	sctx, cancel := step(ctx)
	defer cancel()
	err := chromedp.Do(sctx, chromedp.Navigate(ts.URL+"/compare?base="+base+"&head="+head), chromedp.WaitVisible(chromedp.CSS("section.where-changed a.instr-flame")))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, sctx, art, "compare-instructions")
	first, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS("section.where-changed table.where tbody tr")))
	if err != nil || !strings.Contains(first, "example.com/scratch.hot") || !strings.Contains(first, "+14,000") {
		t.Errorf("the first function row reads %q (%v), want example.com/scratch.hot with +14,000", first, err)
	}
	err = chromedp.Do(sctx, chromedp.Click(chromedp.CSS("section.where-changed a.instr-flame")), chromedp.WaitVisible(chromedp.CSS("iframe.flame")))
	if err != nil {
		t.Fatal(err)
	}
	back, err := chromedp.Run(sctx, chromedp.Evaluate[string](`document.querySelector("a.back").getAttribute("href")`))
	if err != nil || back != "/compare?base="+base+"&head="+head {
		t.Errorf("the way back is %q (%v)", back, err)
	}
	frame, err := chromedp.Run(sctx, chromedp.Evaluate[string](`document.querySelector("iframe.flame").src`))
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := step(ctx)
	defer cancel()
	if err := chromedp.Do(fctx, chromedp.Navigate(frame), chromedp.WaitVisible(chromedp.CSS("#stack-chart .boxtext"))); err != nil {
		t.Fatal(err)
	}
	boxes, err := chromedp.Run(fctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#stack-chart .boxtext")].map(e => e.innerText)`))
	screenshot(t, fctx, art, "instructions-flamegraph")
	if err != nil || !strings.Contains(strings.Join(boxes, "\n"), "hot") {
		t.Errorf("the diff flame graph at %s shows %q (%v), want hot", frame, boxes, err)
	}
}
