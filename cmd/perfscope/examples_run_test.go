//go:build linux

// The examples are run through bash, with real services, valgrind and
// PostgreSQL where they need them, and SSL_CERT_FILE to trust a test
// certificate: Linux, where the project's test command runs.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/testenv"
)

// A shownLine is a command line a user reads in perfscope's help or in the
// README, with where it is shown.
type shownLine struct {
	line    string
	sources []string
}

// shownLines returns every line of every command's Example and every
// command of the README: each line of its sh blocks, and the "$ perfscope"
// lines its output blocks show. A line shown in several places is one.
func shownLines(t *testing.T) []shownLine {
	t.Helper()
	var order []string
	sources := map[string][]string{}
	add := func(line, source string) {
		if _, ok := sources[line]; !ok {
			order = append(order, line)
		}
		sources[line] = append(sources[line], source)
	}
	for _, c := range allCommands(newRootCmd()) {
		for _, l := range exampleLines(c.Example) {
			add(l, c.CommandPath()+" --help")
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lang, inBlock, cont := "", false, ""
	for i, l := range strings.Split(string(readme), "\n") {
		trimmed := strings.TrimSpace(l)
		if fence, ok := strings.CutPrefix(trimmed, "```"); ok {
			inBlock, lang = !inBlock, fence
			continue
		}
		if !inBlock {
			continue
		}
		where := fmt.Sprintf("README.md:%d", i+1)
		switch {
		case lang == "sh" && trimmed != "" && !strings.HasPrefix(trimmed, "#"):
			if rest, ok := strings.CutSuffix(trimmed, "\\"); ok {
				cont += rest + " "
				continue
			}
			add(cont+trimmed, where)
			cont = ""
		case lang != "sh" && strings.HasPrefix(trimmed, "$ "):
			add(strings.TrimPrefix(trimmed, "$ "), where)
		}
	}
	lines := make([]shownLine, len(order))
	for i, l := range order {
		lines[i] = shownLine{l, sources[l]}
	}
	return lines
}

// notRunHere are the shown lines this test does not run, with the reason.
var notRunHere = map[string]string{
	"bash scripts/test.sh            # the tests: installs what they need (Debian packages, benchstat, PostgreSQL), vets and tests": "the test command itself: it runs this test",
	"go run ./cmd/perfscope demo     # the main job: profile the bundled service, naive then optimized, and compare":                "TestDemoOutsideCheckout runs the demo of the same binary (-d 2s) and checks its side-by-side table and findings",
}

// An exampleCase says how to run one shown line for real: what its
// placeholders become, where it runs and what must be true of its outcome.
type exampleCase struct {
	line string
	// dir is where the line runs: "" for the scratch module (a user's
	// service, at ~/src/service), "clone" for a clone of it of the line's
	// own, "repo" for perfscope's own checkout.
	dir string
	// rewrite returns old, new pairs applied in order: placeholders made
	// real (hosts and ports of the test's services, run ids, commits,
	// databases) and lengths shortened. Each old must occur in the line.
	rewrite func(t *testing.T, e *exampleEnv) []string
	why     string // why a rewrite changes more than a placeholder
	exit    int
	// postgres: the line needs PostgreSQL (PERFSCOPE_TEST_POSTGRES).
	postgres bool
	// background: the line runs beside the others, backgroundLines such
	// lines at a time from the start, in a clone of its own (dir "clone"):
	// for commands that take minutes on a busy machine, such as a gate
	// counting instructions under valgrind. Its check comes in its turn.
	background bool
	// ready, for a command that runs until interrupted: the output that
	// says it is up. up then checks it while it runs, and SIGINT must end it
	// with exit status 0.
	ready *regexp.Regexp
	up    func(t *testing.T, e *exampleEnv, m []string)
	check func(t *testing.T, e *exampleEnv, out string)
}

// benchFileHas checks that the output holds summary and that the results
// file it names holds every one of want.
func benchFileHas(summary string, want ...string) func(*testing.T, *exampleEnv, string) {
	return func(t *testing.T, e *exampleEnv, out string) {
		t.Helper()
		m := regexp.MustCompile(regexp.QuoteMeta(summary) + ` in 1 package -> (\S+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("output lacks %q and the results file", summary)
		}
		b, err := os.ReadFile(filepath.Join(e.module, m[1]))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q", m[1], w)
			}
		}
	}
}

// has checks that the output holds every one of want.
func has(want ...string) func(*testing.T, *exampleEnv, string) {
	return func(t *testing.T, _ *exampleEnv, out string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q", w)
			}
		}
	}
}

// Placeholders the shown lines use, the output that says a server is up,
// and why lines are shortened.
const (
	leftpadAPI   = "127.0.0.1:8080"
	placeServer  = "http://perf:7070"
	placeDB      = "postgres://perf:secret@db/perfscope"
	placeRunID   = "20260304-050607-a1b2c3"
	dashboardUp  = `perfscope dashboard on (http://\S+)`
	exampleUp    = `listening on (http://\S+), pprof on (http://\S+)\n(try: [^\n]*)\n`
	shortLoad    = "the load is shortened to keep the test short; its length is not what the line shows"
	benchtimeWhy = "-benchtime 100x: go test's default of 1s per sample would take a minute for these samples"
)

var runIDPattern = regexp.MustCompile(`perfscope report: run (\d{8}-\d{6}-[0-9a-f]+)`)

// exampleCases lists, in the order they run, how each shown line runs:
// the bench lines record commits before compare and history read them,
// the profile lines make the run report, escape and push read.
func exampleCases() []exampleCase {
	svc := func(e *exampleEnv) string { return "localhost:" + e.port(e.svc) }
	leftpad := func(t *testing.T, e *exampleEnv) []string {
		return []string{leftpadAPI, strings.TrimPrefix(e.leftpadAPI, "http://")}
	}
	cases := []exampleCase{
		{line: "go install ./cmd/perfscope     # from a clone: perfscope lands in $(go env GOBIN), default $(go env GOPATH)/bin",
			dir: "repo",
			check: func(t *testing.T, e *exampleEnv, out string) {
				if _, err := os.Stat(filepath.Join(e.gobin, "perfscope")); err != nil {
					t.Errorf("go install left no perfscope in GOBIN: %v", err)
				}
			}},
		{line: "perfscope version              # module version, the commit it was built from (or why the build recorded none), Go version",
			check: has("github.com/perfscope/perfscope", "go1.")},

		{line: "perfscope bench ./...",
			rewrite: func(*testing.T, *exampleEnv) []string { return []string{"bench ./...", "bench -benchtime 100x ./..."} },
			why:     benchtimeWhy,
			check:   benchFileHas("20 results of 2 benchmarks", "BenchmarkParse/size=10-2", "BenchmarkParse/size=1000-2")},
		{line: "perfscope bench -bench 'Parse$' -count 20 -benchtime 100x ./internal/parse",
			check: benchFileHas("40 results of 2 benchmarks", "BenchmarkParse/size=1000-2")},
		{line: "perfscope bench -b 'Parse$' --count 20 --cpuprofile ./internal/parse",
			rewrite: func(*testing.T, *exampleEnv) []string {
				return []string{"--count 20", "--count 20 -benchtime 100x"}
			},
			why: benchtimeWhy,
			check: func(t *testing.T, e *exampleEnv, out string) {
				if m, _ := filepath.Glob(filepath.Join(e.module, ".perfscope", "bench", "*.cpu.pb.gz")); len(m) == 0 {
					t.Error("no CPU profile saved beside the results in .perfscope/bench")
				}
			}},
		{line: "perfscope bench --benchtime 100x --cpu 1,4 -o before.txt ./...",
			check: func(t *testing.T, e *exampleEnv, out string) {
				b, err := os.ReadFile(filepath.Join(e.module, "before.txt"))
				if err != nil || !strings.Contains(string(b), "BenchmarkParse/size=1000-4") {
					t.Errorf("before.txt holds no result at -cpu 4 (%v):\n%s", err, b)
				}
			}},

		{line: "perfscope compare old.txt new.txt",
			check: has("old.txt", "new.txt", "Parse/size=1000", "geomean")},
		{line: "perfscope compare before=old.txt after=new.txt --format markdown",
			check: has("before", "after", "| Parse/size=1000")},
		{line: "perfscope compare main 1a2b3c4d --ignore go",
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{"1a2b3c4d", e.commits[0][:8]} },
			check:   has("Parse/size=1000", "geomean")},
		{line: "perfscope compare --rename Parse=Decode --filter '.name:Decode' old.txt new.txt",
			check: func(t *testing.T, e *exampleEnv, out string) {
				has("Decode/size=1000")(t, e, out)
				if strings.Contains(out, "Parse/") {
					t.Error("the renamed benchmarks still show as Parse")
				}
			}},
		{line: "perfscope compare --profile base.cpu.pb.gz --profile head.cpu.pb.gz old.txt new.txt",
			check: has("Parse/size=1000", "where it changed")},

		{line: "perfscope history --pkg example.com/svc --unit sec/op --since 30d",
			check: func(t *testing.T, e *exampleEnv, out string) {
				has("example.com/svc/internal/parse", "Parse/size=1000", e.commits[0][:12], e.commits[4][:12])(t, e, out)
			}},
		{line: "perfscope history --bench 'Parse/size=1000' --changed",
			check: func(t *testing.T, e *exampleEnv, out string) {
				// The commit that made the parser fast, and no other.
				has("Parse/size=1000", e.commits[2][:12])(t, e, out)
				for _, c := range []string{e.commits[0], e.commits[1], e.commits[3], e.commits[4]} {
					if strings.Contains(out, c[:12]) {
						t.Errorf("commit %s is listed as changed", c[:12])
					}
				}
			}},

		{line: "perfscope escape ./cmd/server", check: has("main.go", "escapes to heap")},
		{line: "perfscope escape --kind all ./internal/parse", check: has("parse.go")},

		{line: "perfscope load http://localhost:8080/",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"load http", "load -d 2s http", "localhost:8080", svc(e)}
			},
			why:   shortLoad + " (the default is 10s)",
			check: has("throughput", "errors      none")},
		{line: "perfscope load -c 64 -d 30s http://localhost:8080/api",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"-d 30s", "-d 2s", "localhost:8080", svc(e)}
			},
			why:   shortLoad,
			check: has("64 connections", "errors      none")},
		{line: "perfscope load -n 10000 --no-keepalive http://localhost:8080/",
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{"localhost:8080", svc(e)} },
			check:   has("10,000", "errors      none")},
		{line: "perfscope load --rate 2000 -c 100 -d 1m http://localhost:8080/",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"-d 1m", "-d 2s", "localhost:8080", svc(e)}
			},
			why:   shortLoad,
			check: has("open loop", "errors      none")},
		{line: `perfscope load -m POST -H "Content-Type: application/json" --body-file req.json http://localhost:8080/tx`,
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"--body-file", "-d 2s --body-file", "localhost:8080", svc(e)}
			},
			why:   shortLoad + " (the default is 10s)",
			check: has("POST", "errors      none")},

		{line: "perfscope profile -d 10s 'http://127.0.0.1:8080/v1/leftpad/?str=test&len=50&chr=*'",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return append([]string{"-d 10s", "-d 3s --pprof " + e.leftpadPprof}, leftpad(t, e)...)
			},
			why:   shortLoad + "; --pprof names the example's pprof port, which the README's line finds at its default 6060",
			check: has("LOAD", "FINDINGS", "errors       none")},
		{line: "perfscope load -c 8 -d 5s 'http://127.0.0.1:8080/v1/leftpad/?str=test&len=50&chr=*'",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return append([]string{"-d 5s", "-d 2s"}, leftpad(t, e)...)
			},
			why:   shortLoad,
			check: has("8 connections", "errors      none")},
		{line: "perfscope profile -c 4 -d 4s 'http://127.0.0.1:8080/v1/leftpad/?str=test&len=24&chr=*'",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return append([]string{"-d 4s", "-d 4s --pprof " + e.leftpadPprof}, leftpad(t, e)...)
			},
			why:   "--pprof names the example's pprof port, which the README's line finds at its default 6060",
			check: has("LOAD", "CPU", "4 connections")},
		{line: "perfscope profile -d 10s --pprof http://127.0.0.1:6060 'http://127.0.0.1:8080/v1/leftpad/?str=test&len=50&chr=*'",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return append([]string{"-d 10s", "-d 3s", "http://127.0.0.1:6060", strings.TrimSuffix(e.leftpadPprof, "/debug/pprof/")}, leftpad(t, e)...)
			},
			why:   shortLoad,
			check: has("LOAD", "FINDINGS")},
		{line: "perfscope profile -d 30s 'http://localhost:8080/v1/leftpad/?str=test&len=50&chr=*'",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"-d 30s", "-d 3s --pprof " + e.leftpadPprof, "localhost:8080", "localhost:" + e.port(e.leftpadAPI)}
			},
			why:   shortLoad + "; --pprof names the example's pprof port, which the line finds at its default 6060",
			check: has("LOAD", "FINDINGS")},
		{line: `perfscope profile --rate 500 -d 1m -H "Authorization: Bearer $TOKEN" https://svc.internal/api`,
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"-d 1m", "-d 2s", "svc.internal", e.tlsHost}
			},
			why:   shortLoad,
			check: has("open loop", "errors       none", "CPU")},
		{line: "perfscope profile -c 32 -n 200000 --pprof http://localhost:6060/debug/pprof/ http://localhost:8080/",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"-n 200000", "-n 20000", "localhost:6060", svc(e), "http://localhost:8080/", "http://" + svc(e) + "/users/42"}
			},
			why: "20,000 requests instead of 200,000 to keep the test short; to /users/42, the route the report examples focus on",
			check: func(t *testing.T, e *exampleEnv, out string) {
				has("20,000", "FINDINGS")(t, e, out)
				m := runIDPattern.FindStringSubmatch(out)
				if m == nil {
					t.Fatal("no run id in the output")
				}
				e.run = m[1]
			}},

		{line: "perfscope escape --profile .perfscope/runs/RUN/allocs.pb.gz --top 10",
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{"RUN", e.needRun(t)} },
			check:   has("hot lines by alloc_space", "main.go")},
		{line: "perfscope escape --profile .perfscope/runs/20261122-225905-febc6c/allocs.pb.gz --top 3 ./examples/leftpad",
			dir: "repo",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{".perfscope/runs/20261122-225905-febc6c", filepath.Join(e.repo, "internal", "findings", "testdata", "runs", "leftpad-naive")}
			},
			check: has("hot lines by alloc_space", "examples/leftpad/", "escapes to heap")},

		{line: "perfscope report",
			check: func(t *testing.T, e *exampleEnv, out string) {
				has("perfscope report: run "+e.needRun(t), "FINDINGS", "LOAD")(t, e, out)
			}},
		{line: "perfscope report --format markdown .perfscope/runs/" + placeRunID,
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{placeRunID, e.needRun(t)} },
			check:   has("## perfscope report: run ", "| ")},
		{line: "perfscope report --route 'GET /users/{id}' --top 20 RUNDIR",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"RUNDIR", ".perfscope/runs/" + e.needRun(t)}
			},
			check: has("GET /users/{id}", "main.main.func")},
		{line: "perfscope report --source-dir ~/src/service --list 3 RUNDIR",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"RUNDIR", ".perfscope/runs/" + e.needRun(t)}
			},
			check: has("SOURCE", "main.go")},
		{line: "perfscope report --explain concat-loop", check: has("concat-loop", "strings.Builder")},

		{line: "perfscope token create --name ci            # prints a token once; only its hash is stored",
			check: has("created token", "(ci)")},
		{line: "perfscope token list", check: has("ci")},
		{line: "perfscope token list                        # ID, name, creation time; only reads (opens the store read-only)",
			check: has("ci")},
		{line: "perfscope token revoke 3",
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{"3", e.newToken(t)} },
			why:     "the token revoked is one the test created",
			check:   has("revoked token")},
		{line: "perfscope token revoke 3                    # the server refuses that token from then on",
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{"revoke 3", "revoke " + e.newToken(t)} },
			why:     "the token revoked is one the test created",
			check:   has("revoked token")},

		{line: "perfscope push --server http://perf:7070 results.txt          # token in $PERFSCOPE_TOKEN",
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{placeServer, e.push} },
			check:   has("pushed ", "results of 2 benchmarks")},
		{line: "perfscope push --server http://perf:7070 results.txt          # from CI, token in $PERFSCOPE_TOKEN",
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{placeServer, e.push} },
			check:   has("pushed ", "results of 2 benchmarks")},
		{line: "perfscope push --server http://perf:7070 .perfscope/runs/RUN  # a profiling run with its profiles",
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{placeServer, e.push, "RUN", e.needRun(t)} },
			check: func(t *testing.T, e *exampleEnv, out string) {
				has(e.needRun(t))(t, e, out)
			}},
		{line: "perfscope runs rm --server http://perf:7070 20261124-070053-4f1a2c   # token in $PERFSCOPE_TOKEN",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{placeServer, e.push, "20261124-070053-4f1a2c", e.needRun(t)}
			},
			check: func(t *testing.T, e *exampleEnv, out string) {
				has(e.needRun(t))(t, e, out)
			}},

		{line: "perfscope token create --name ci-linux --db " + placeDB, postgres: true,
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{placeDB, "'" + e.pg + "'"} },
			check: func(t *testing.T, e *exampleEnv, out string) {
				has("created token", "(ci-linux)")(t, e, out)
				e.pgToken = strings.TrimSpace(e.stdout)
			}},
		{line: "perfscope serve --addr :7070 --db " + placeDB + " --data /srv/perfscope-runs", postgres: true,
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{":7070", "127.0.0.1:0", placeDB, "'" + e.pg + "'", "/srv/perfscope-runs", t.TempDir()}
			},
			why:   "port 0: 7070 may be taken here",
			ready: regexp.MustCompile(dashboardUp),
			up: func(t *testing.T, e *exampleEnv, m []string) {
				e.healthy(t, m[1])
				// CI's upload, which the next line reads.
				if e.pgToken == "" {
					t.Fatal("no token from 'token create --db postgres://…'")
				}
				e.perfscope(t, "push", "--server", m[1], "--token", e.pgToken, "--machine", "ci-runner-1", "results.txt")
			}},
		{line: "perfscope history --db postgres://perf@db/perfscope --machine ci-runner-1 --format json", postgres: true,
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"postgres://perf@db/perfscope", "'" + e.pg + "'"}
			},
			check: func(t *testing.T, e *exampleEnv, out string) {
				if !json.Valid([]byte(e.stdout)) {
					t.Errorf("its output is not JSON:\n%s", e.stdout)
				}
				has("example.com/svc/internal/parse", e.commits[4])(t, e, out)
			}},
		{line: "perfscope serve --addr :7070 --db postgres://... --data /srv/perfscope-runs", postgres: true,
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{":7070", "127.0.0.1:0", "postgres://...", "'" + e.pg + "'", "/srv/perfscope-runs", t.TempDir()}
			},
			why:   "port 0: 7070 may be taken here",
			ready: regexp.MustCompile(dashboardUp),
			up:    func(t *testing.T, e *exampleEnv, m []string) { e.healthy(t, m[1]) }},
		{line: "perfscope serve",
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{"serve", "serve --addr 127.0.0.1:0"} },
			why:     "port 0: the default 127.0.0.1:7070 may be taken here",
			ready:   regexp.MustCompile(dashboardUp),
			up:      func(t *testing.T, e *exampleEnv, m []string) { e.healthy(t, m[1]) }},

		{line: "perfscope example leftpad --mode naive",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"naive", "naive --addr 127.0.0.1:0 --pprof-addr 127.0.0.1:0"}
			},
			why:   "port 0: 8080 and 6060 may be taken here",
			ready: regexp.MustCompile(exampleUp),
			up: func(t *testing.T, e *exampleEnv, m []string) {
				e.get(t, m[1]+"/v1/leftpad/?str=test&len=50&chr=*")
				e.get(t, m[2]+"cmdline")
			}},
		{line: "perfscope example txsummary --mode optimized --addr 127.0.0.1:0 --pprof-addr 127.0.0.1:0",
			ready: regexp.MustCompile(exampleUp),
			up: func(t *testing.T, e *exampleEnv, m []string) {
				e.get(t, m[1]+"/summary")
				e.get(t, m[2]+"cmdline")
			}},
	}
	cases = append(cases, scrapeCases()...)
	return append(cases, []exampleCase{

		{line: "perfscope gate --base main ./...", dir: "clone", background: true,
			check: has("Parse/size=1000-2 instructions/op", "PASS: no regression")},
		{line: "perfscope gate --base main -bench 'Parse$' -benchtime 100x ./internal/parse", dir: "clone", background: true,
			check: has("Parse/size=1000-2 instructions/op", "rounds of 100x", "PASS: no regression")},
		{line: "perfscope gate --base origin/main --summary gate.md --save gate-results", dir: "clone", background: true,
			check: func(t *testing.T, e *exampleEnv, out string) {
				has("Parse/size=1000-2 instructions/op", "PASS: no regression")(t, e, out)
				b, err := os.ReadFile(filepath.Join(e.cwd, "gate.md"))
				if err != nil || !strings.Contains(string(b), "Parse/size=1000") {
					t.Errorf("gate.md: %v\n%s", err, b)
				}
				if _, err := os.Stat(filepath.Join(e.cwd, "gate-results")); err != nil {
					t.Errorf("gate saved no results: %v", err)
				}
			}},
		{line: "perfscope gate --base HEAD~1 --rounds 40 --max-rounds 40 --format json", dir: "clone", background: true,
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"--rounds 40 --max-rounds 40", "--rounds 5 --max-rounds 5"}
			},
			why: "5 rounds, still a fixed number (--max-rounds equal to --rounds), where 40 took ten minutes on a busy 2-core machine",
			check: func(t *testing.T, e *exampleEnv, out string) {
				var v struct {
					Rounds   int
					Decision struct {
						Regressions *int
						Judgements  []struct{ Benchmark, Unit string }
					}
				}
				if err := json.Unmarshal([]byte(e.stdout), &v); err != nil || v.Decision.Regressions == nil {
					t.Fatalf("not the gate's JSON (%v):\n%s", err, e.stdout)
				}
				if v.Rounds != 5 || *v.Decision.Regressions != 0 {
					t.Errorf("%d rounds, %d regressions; want 5 and none", v.Rounds, *v.Decision.Regressions)
				}
				if !slices.ContainsFunc(v.Decision.Judgements, func(j struct{ Benchmark, Unit string }) bool {
					return j.Benchmark == "Parse/size=1000-2" && j.Unit == "instructions/op"
				}) {
					t.Errorf("no judgement of Parse/size=1000-2 instructions/op")
				}
			}},

		{line: "perfscope bisect --good HEAD~4 --bad main -bench 'Parse/size=1000$' ./internal/parse", dir: "clone", background: true,
			check: func(t *testing.T, e *exampleEnv, out string) {
				has("first bad commit "+e.commits[2][:12]+" parse: split without building each field", "instructions/op")(t, e, out)
			}},
		{line: "perfscope bisect --good HEAD~4 --bad HEAD --measure allocs --threshold 0 -b 'Parse/size=10$' --db bisect.db --format json ./internal/parse", dir: "clone",
			check: func(t *testing.T, e *exampleEnv, out string) {
				var v struct {
					FirstBad struct{ Commit string } `json:"first_bad"`
					Counted  int
				}
				if err := json.Unmarshal([]byte(e.stdout), &v); err != nil {
					t.Fatalf("not bisect's JSON (%v):\n%s", err, e.stdout)
				}
				if v.FirstBad.Commit != e.commits[2] {
					t.Errorf("first bad commit %s, want %s", v.FirstBad.Commit, e.commits[2])
				}
				if _, err := os.Stat(filepath.Join(e.cwd, "bisect.db")); err != nil || v.Counted < 3 {
					t.Errorf("%d commits measured, store: %v", v.Counted, err)
				}
			}},
	}...)
}

// TestEveryExampleHasACase checks, without running anything, that every
// shown line has a case in exampleCases or a reason in notRunHere, and
// that neither lists a line no longer shown: a new example fails here at
// once, in -short runs too.
func TestEveryExampleHasACase(t *testing.T) {
	checkExampleCases(t)
}

func checkExampleCases(t *testing.T) []exampleCase {
	t.Helper()
	shown := shownLines(t)
	cases := exampleCases()
	byLine := map[string]exampleCase{}
	for _, c := range cases {
		if _, dup := byLine[c.line]; dup {
			t.Errorf("exampleCases has %q twice", c.line)
		}
		byLine[c.line] = c
		if c.background && c.dir != "clone" {
			t.Errorf("exampleCases: %q runs in the background but not in a clone of its own", c.line)
		}
	}
	isShown := map[string]bool{}
	for _, s := range shown {
		isShown[s.line] = true
		_, known := byLine[s.line]
		if _, skipped := notRunHere[s.line]; !known && !skipped {
			t.Errorf("example %q (%s) has no setup: add one to exampleCases", s.line, strings.Join(s.sources, ", "))
		}
	}
	for _, c := range cases {
		if !isShown[c.line] {
			t.Errorf("exampleCases has %q, which no help or README shows any more: remove it", c.line)
		}
	}
	for l := range notRunHere {
		if !isShown[l] {
			t.Errorf("notRunHere has %q, which no help or README shows any more: remove it", l)
		}
	}
	return cases
}

// TestEveryExampleRuns runs every example of every command's help and every
// command the README shows, as a user would paste it into a shell: the
// freshly built perfscope first on PATH, in a Go module of a service with
// a git history and an origin, against real services, a real store and a
// real dashboard.
func TestEveryExampleRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perfscope and runs every example, loads and gates included")
	}
	cases := checkExampleCases(t)
	if t.Failed() {
		return
	}

	e := newExampleEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	for _, c := range cases {
		if c.background {
			e.queue = append(e.queue, c)
		}
	}
	e.advance(t, ctx)
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) { e.runCase(t, ctx, c) })
		e.advance(t, ctx)
	}
}

// backgroundLines is how many background lines run at once: one, beside
// the line in front, on the two cores of the machines the tests run on
// (two at once slowed the lines in front more than they gained).
const backgroundLines = 1

// advance starts background lines while fewer than backgroundLines run.
func (e *exampleEnv) advance(t *testing.T, ctx context.Context) {
	t.Helper()
	e.running = slices.DeleteFunc(e.running, func(p *process) bool {
		select {
		case <-p.exited:
			return true
		default:
			return false
		}
	})
	for len(e.running) < backgroundLines && len(e.queue) > 0 {
		c := e.queue[0]
		e.queue = e.queue[1:]
		p := e.startCase(t, ctx, c)
		e.running = append(e.running, p)
		e.started[c.line] = p
	}
}

// exampleEnv is what the examples run against.
type exampleEnv struct {
	bin, home, module, repo, gobin string
	env                            []string
	commits                        []string // the scratch module's, oldest first
	svc                            string   // the scratch module's server
	tlsHost                        string   // https://svc.internal's stand-in
	leftpadAPI, leftpadPprof       string   // the leftpad example's origin and pprof URL
	push                           string   // the dashboard the push lines upload to
	pg                             string   // a PostgreSQL DSN of a schema of its own, or ""
	scraped                        scrapedTargets

	queue   []exampleCase       // the background lines not started yet
	running []*process          // the background lines running
	started map[string]*process // the background lines started, by line
	cwd     string              // where the line being checked ran
	stdout  string              // its standard output alone
	run     string              // the run the profile lines made
	pgToken string              // the token 'token create --db postgres://…' printed
}

// newExampleEnv builds perfscope and starts what the examples need.
func newExampleEnv(t *testing.T) *exampleEnv {
	t.Helper()
	bin := buildPerfscope(t)
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	e := &exampleEnv{started: map[string]*process{}, bin: bin, home: home, repo: repo, module: filepath.Join(home, "src", "service"), gobin: t.TempDir()}
	if os.Getenv("PERFSCOPE_TEST_POSTGRES") != "" || testenv.Required() {
		e.pg = testenv.PostgresSchema(t, "perfscope_examples")
	}
	e.commits = scratchModule(t, e.module)
	token := "svc-secret-token"
	var pemFile string
	e.tlsHost, pemFile = serveTLSAPI(t, token, t.TempDir())
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PERFSCOPE_SERVER=") && !strings.HasPrefix(kv, "PERFSCOPE_TOKEN=") {
			e.env = append(e.env, kv)
		}
	}
	e.env = append(e.env,
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home,
		"GOBIN="+e.gobin,
		"PERFSCOPE_CACHE="+t.TempDir(),
		"SSL_CERT_FILE="+pemFile,
		"TOKEN="+token,
	)
	// The setup builds and starts several programs; on a busy machine
	// that takes minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// The service of the scratch module, built as its developer would.
	server := filepath.Join(t.TempDir(), "server")
	e.command(t, "go", "build", "-o", server, "./cmd/server")
	p := e.start(t, exec.Command(server))
	m, err := p.waitFor(ctx, regexp.MustCompile(`listening on (http://\S+)`))
	if err != nil {
		t.Fatalf("scratch server: %v\n%s", err, p.output())
	}
	e.svc = m[1]

	// The bundled example the README's lines load.
	lp := e.start(t, exec.Command(bin, "example", "leftpad", "--mode", "optimized", "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0"))
	m, err = lp.waitFor(ctx, regexp.MustCompile(exampleUp))
	if err != nil {
		t.Fatalf("leftpad example: %v\n%s", err, lp.output())
	}
	e.leftpadAPI, e.leftpadPprof = m[1], m[2]

	// Results of every commit in the default store, as a developer who
	// benchmarks each commit has; the first commit's and main's also as
	// benchmark files with CPU profiles.
	for i, c := range e.commits {
		e.command(t, "git", "checkout", "-q", c)
		args := []string{"bench", "-q", "-count", "6", "-benchtime", "100x", "./..."}
		switch i {
		case 0:
			args = []string{"bench", "-q", "-count", "6", "-benchtime", "50ms", "--cpuprofile", "-o", "old.txt", "./..."}
		case len(e.commits) - 1:
			args = []string{"bench", "-q", "-count", "6", "-benchtime", "50ms", "--cpuprofile", "-o", "new.txt", "./..."}
		}
		e.perfscope(t, args...)
	}
	e.command(t, "git", "checkout", "-q", "main")
	for from, to := range map[string]string{"new.txt": "results.txt", "old.*.cpu.pb.gz": "base.cpu.pb.gz", "new.*.cpu.pb.gz": "head.cpu.pb.gz"} {
		files, _ := filepath.Glob(filepath.Join(e.module, from))
		if len(files) != 1 {
			t.Fatalf("bench wrote %d files %s, want 1", len(files), from)
		}
		b, err := os.ReadFile(files[0])
		if err == nil {
			err = os.WriteFile(filepath.Join(e.module, to), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.module, "req.json"), []byte(`{"amounts": [12.5, 7, 30.25]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.scrapeConfig(t, ctx)

	// The team's dashboard the push lines upload to, with a token.
	db := filepath.Join(t.TempDir(), "dashboard.db")
	pushToken := strings.TrimSpace(e.perfscope(t, "token", "create", "--name", "push", "--db", db))
	e.env = append(e.env, "PERFSCOPE_TOKEN="+pushToken)
	srv := e.start(t, exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", db, "--data", t.TempDir()))
	m, err = srv.waitFor(ctx, regexp.MustCompile(dashboardUp))
	if err != nil {
		t.Fatalf("dashboard: %v\n%s", err, srv.output())
	}
	e.push = m[1]
	return e
}

// runCase runs c's line, or takes it started in the background, and checks
// its outcome.
func (e *exampleEnv) runCase(t *testing.T, testCtx context.Context, c exampleCase) {
	if c.postgres && e.pg == "" {
		testenv.Missing(t, "PERFSCOPE_TEST_POSTGRES is not set", "start a server with scripts/start-postgres.sh and set it to the DSN it prints")
	}
	ctx, cancel := context.WithTimeout(testCtx, 5*time.Minute)
	defer cancel()
	p, ok := e.started[c.line]
	switch {
	case ok:
		ctx = testCtx // it has been running for a while
	case c.background:
		// Its turn came before the background line before it ended.
		p = e.startCase(t, testCtx, c)
		e.queue = slices.DeleteFunc(e.queue, func(q exampleCase) bool { return q.line == c.line })
		e.running, e.started[c.line] = append(e.running, p), p
		ctx = testCtx
	default:
		p = e.startCase(t, ctx, c)
	}
	if c.ready != nil {
		m, err := p.waitFor(ctx, c.ready)
		if err != nil {
			t.Fatalf("%v\n%s", err, p.output())
		}
		if c.up != nil {
			c.up(t, e, m)
		}
		code, err := p.interrupt(ctx)
		if err != nil || code != 0 {
			t.Errorf("after SIGINT: exit status %d (%v), want 0\n%s", code, err, p.output())
		}
		return
	}
	code, err := p.wait(ctx)
	out := p.output()
	if err != nil || code != c.exit {
		t.Fatalf("exit status %d (%v), want %d\n%s", code, err, c.exit, out)
	}
	if c.check == nil {
		t.Fatal("no check of its output: add one to exampleCases")
	}
	e.cwd, e.stdout = p.cmd.Dir, p.standardOutput()
	c.check(t, e, out)
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// startCase starts c's line with bash, as pasted into a terminal, in its
// directory; ctx bounds it.
func (e *exampleEnv) startCase(t *testing.T, ctx context.Context, c exampleCase) *process {
	t.Helper()
	line := c.line
	if c.rewrite != nil {
		rw := c.rewrite(t, e)
		for i := 0; i+1 < len(rw); i += 2 {
			if !strings.Contains(line, rw[i]) {
				t.Fatalf("rewrite %q → %q no longer applies to %q: update exampleCases", rw[i], rw[i+1], line)
			}
			line = strings.Replace(line, rw[i], rw[i+1], 1)
		}
		if c.why != "" {
			t.Logf("runs as: %s\n(%s)", line, c.why)
		} else {
			t.Logf("runs as: %s", line)
		}
	}
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Env = e.env
	switch c.dir {
	case "":
		cmd.Dir = e.module
	case "repo":
		cmd.Dir = e.repo
	case "clone":
		cmd.Dir = filepath.Join(t.TempDir(), "service")
		e.command(t, "git", "clone", "-q", e.module, cmd.Dir)
	default:
		t.Fatalf("unknown dir %q", c.dir)
	}
	return startProcess(t, cmd)
}

// start starts cmd in the scratch module with the examples' environment;
// it ends with the test.
func (e *exampleEnv) start(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	cmd.Dir, cmd.Env = e.module, e.env
	return startProcess(t, cmd)
}

// command runs name in the scratch module and returns its standard output.
func (e *exampleEnv) command(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = e.module, e.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// perfscope runs the built perfscope in the scratch module.
func (e *exampleEnv) perfscope(t *testing.T, args ...string) string {
	t.Helper()
	return e.command(t, e.bin, args...)
}

// newToken creates a token in the default store and returns its ID.
func (e *exampleEnv) newToken(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(e.bin, "token", "create", "--name", "to-revoke")
	cmd.Dir, cmd.Env = e.module, e.env
	out, err := cmd.CombinedOutput()
	m := regexp.MustCompile(`created token (\d+) `).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
	return string(m[1])
}

// needRun returns the run the profile lines made.
func (e *exampleEnv) needRun(t *testing.T) string {
	t.Helper()
	if e.run == "" {
		t.Fatal("no run: the profile line that makes it failed")
	}
	return e.run
}

// port returns the port of an http:// origin.
func (e *exampleEnv) port(origin string) string {
	return origin[strings.LastIndexByte(origin, ':')+1:]
}

// get checks that url answers 200.
func (e *exampleEnv) get(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", url, resp.Status)
	}
}

// healthy checks that the dashboard at url answers its health check.
func (e *exampleEnv) healthy(t *testing.T, url string) {
	t.Helper()
	e.get(t, url+"/healthz")
}
