package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/testenv"
)

// hostileSubject is a commit subject that would run a script if a page
// wrote it unescaped.
const hostileSubject = `parse: skip copies <script>document.title="pwned"</script>`

// recordGitCommits makes two commits in a scratch git repository, reads
// each as perfscope bench does, and uploads benchmarks of each with what
// git said of it; the head's subject is hostileSubject. It returns the two
// commits' states, base first.
func recordGitCommits(t *testing.T, ts *testServer) (base, head gitstate.State) {
	t.Helper()
	ctx := context.Background()
	repo := testenv.NewGitRepo(t, "trunk")
	var states []gitstate.State
	for i, c := range []struct{ author, subject, file string }{
		{"Grace Hopper <grace@example.com>", "parse: first version", "package parse\n"},
		{"Ada Lovelace <ada@example.com>", hostileSubject + "\n\nThe body is not shown.", "package parse\n\n// Copies are skipped.\n"},
	} {
		if err := os.WriteFile(filepath.Join(repo.Dir, "parse.go"), []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		repo.Git("add", "-A")
		repo.Git("commit", "-q", "--author", c.author, "-m", c.subject)
		st, err := gitstate.Read(ctx, repo.Dir)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, st)
		q := url.Values{"commit": {st.Commit}, "branch": {st.Branch}, "machine": {"builder"},
			"commit_time": {epoch.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)},
			"subject":     {st.Subject}, "author": {st.Author}}
		code, body := ts.do(t, http.MethodPost, "/api/v1/bench?"+q.Encode(), ts.Token, "text/plain", strings.NewReader(benchFixture(6, float64(1+2*i))))
		if code != http.StatusCreated {
			t.Fatalf("upload %s = %d: %s", st.Commit, code, body)
		}
		var res api.BenchUpload
		if err := json.Unmarshal(body, &res); err != nil || res.Subject != st.Subject || res.Author != st.Author {
			t.Errorf("upload answer %s (%v); want subject %q and author %q", body, err, st.Subject, st.Author)
		}
	}
	if states[1].Subject != hostileSubject || states[1].Author != "Ada Lovelace" || states[0].Author != "Grace Hopper" {
		t.Fatalf("git read the commits as %+v", states)
	}
	return states[0], states[1]
}

// pushGitRun uploads a profiling run made on the commit st, with what git
// said of it, and returns the run's id.
func pushGitRun(t *testing.T, ts *testServer, st gitstate.State) string {
	t.Helper()
	const id = "run-on-head"
	dir := makeRunDir(t, id)
	path := filepath.Join(dir, run.File)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var saved run.Run
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	saved.GitCommit, saved.GitBranch, saved.GitSubject, saved.GitAuthor = st.Commit, st.Branch, st.Subject, st.Author
	if data, err = json.Marshal(saved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctype, body := multipartRun(t, dir)
	if code, res := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ctype, body); code != http.StatusCreated {
		t.Fatalf("upload run = %d: %s", code, res)
	}
	return id
}

// TestCommitSubjectsAndAuthors records two real commits and checks that
// the API answers their subjects and authors and that the pages show them,
// with the branch, as text: a subject holding a script tag is shown, not
// run.
func TestCommitSubjectsAndAuthors(t *testing.T) {
	ts := startServer(t, Config{})
	base, head := recordGitCommits(t, ts)

	var commits []store.Commit
	ts.getJSON(t, "/api/v1/commits", &commits)
	if len(commits) != 2 || commits[0].Subject != base.Subject || commits[0].Author != "Grace Hopper" ||
		commits[1].Subject != hostileSubject || commits[1].Author != "Ada Lovelace" || commits[1].Branch != "trunk" {
		t.Errorf("GET /api/v1/commits = %+v", commits)
	}
	// An upload without them, as older clients send, still works and
	// does not erase what another run of the commit said.
	q := url.Values{"commit": {head.Commit}, "branch": {"trunk"}, "machine": {"builder"}}
	if code, body := ts.do(t, http.MethodPost, "/api/v1/bench?"+q.Encode(), ts.Token, "text/plain", strings.NewReader(benchFixture(6, 3))); code != http.StatusCreated {
		t.Fatalf("upload without subject = %d: %s", code, body)
	}
	var one store.CommitSamples
	ts.getJSON(t, "/api/v1/commits/"+head.Commit, &one)
	if one.Commit.Subject != hostileSubject || one.Commit.Author != "Ada Lovelace" || one.Commit.Runs != 2 {
		t.Errorf("GET /api/v1/commits/%s: commit %+v", head.Commit, one.Commit)
	}

	runID := pushGitRun(t, ts, head)
	ts.waitAnalysed(t, runID)
	var runs []store.ProfileRun
	ts.getJSON(t, "/api/v1/runs", &runs)
	if len(runs) != 1 || runs[0].Subject != hostileSubject || runs[0].Author != "Ada Lovelace" || runs[0].Branch != "trunk" {
		t.Errorf("GET /api/v1/runs = %+v", runs)
	}

	compare := "/compare?" + url.Values{"base": {base.Commit}, "head": {head.Commit}}.Encode()
	for _, page := range []string{"/", compare, "/benchmarks", "/runs", "/runs/" + runID} {
		code, body := ts.do(t, http.MethodGet, page, "", "", nil)
		if code != http.StatusOK || strings.Contains(string(body), "<script>document.title") ||
			!strings.Contains(string(body), "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;") {
			t.Errorf("GET %s = %d: the subject is not escaped as text", page, code)
		}
	}
}

// TestBrowserCommitSubjects checks in Chromium that the home page, the
// comparison of two commits, the benchmark list and the trend chart name
// real recorded commits by subject, author and branch.
func TestBrowserCommitSubjects(t *testing.T) {
	ctx := newBrowser(t)
	ts := startServer(t, Config{})
	base, head := recordGitCommits(t, ts)
	art := artifactsDir(t)
	text := func(t *testing.T, page, sel, shot string) string {
		t.Helper()
		ctx, cancel := step(ctx)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+page), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title`))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		screenshot(t, ctx, art, shot)
		if title == "pwned" {
			t.Errorf("%s ran the script in a commit subject", page)
		}
		return s
	}
	wantAll := func(t *testing.T, where, got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s does not show %q:\n%s", where, w, got)
			}
		}
	}

	t.Run("home", func(t *testing.T) {
		got := text(t, "/", "section.home-commits", "commits-home")
		wantAll(t, "the home page's latest commits", got,
			gitstate.Short(head.Commit), hostileSubject, "Ada Lovelace", "trunk",
			gitstate.Short(base.Commit), "parse: first version", "Grace Hopper")
	})
	t.Run("compare", func(t *testing.T) {
		page := "/compare?" + url.Values{"base": {base.Commit}, "head": {head.Commit}}.Encode()
		got := text(t, page, "table.commits", "commits-compare")
		wantAll(t, "the comparison's header", got,
			gitstate.Short(base.Commit), "parse: first version", "Grace Hopper",
			gitstate.Short(head.Commit), hostileSubject, "Ada Lovelace", "trunk")
	})
	t.Run("benchmarks", func(t *testing.T) {
		got := text(t, "/benchmarks", "table.benchmarks", "commits-benchmarks")
		wantAll(t, "the benchmark list's last change", got, hostileSubject)
	})
	t.Run("runs", func(t *testing.T) {
		pushGitRun(t, ts, head)
		got := text(t, "/runs", "table.runs", "commits-runs")
		wantAll(t, "the runs list", got, gitstate.Short(head.Commit), "trunk", hostileSubject+" — Ada Lovelace")
	})
	t.Run("trend", func(t *testing.T) {
		page := "/trend?" + url.Values{"package": {"example.com/fixture"}, "name": {"Encode/size=10-8"}, "unit": {"B/op"}}.Encode()
		got := text(t, page, "table.changes", "commits-trend")
		wantAll(t, "the trend's changes", got, hostileSubject, "Ada Lovelace", "trunk")
		ctx, cancel := step(ctx)
		defer cancel()
		tips, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("svg.trend circle title")].map(e => e.textContent)`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(tips, "\n"), hostileSubject+" — Ada Lovelace") {
			t.Errorf("the chart's tooltips do not name the head commit: %q", tips)
		}
	})
}
