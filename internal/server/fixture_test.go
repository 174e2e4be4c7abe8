package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/run"
)

// fixtureCommits is how many commits the benchmark fixture records;
// fixtureChange is the first one whose code does three times the work.
const fixtureCommits, fixtureChange = 8, 5

// fixtureCommit is the fake hash of commit i.
func fixtureCommit(i int) string { return fmt.Sprintf("%02d%038x", i, 0xbe9c4+i) }

// pushBenchmodHistory runs the benchmarks of testdata/benchmod once per
// fake commit, with the work tripled from fixtureChange on, and uploads
// each run's output as that commit's results.
func pushBenchmodHistory(t *testing.T, ts *testServer) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "benchmod.test")
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Dir = filepath.Join("testdata", "benchmod")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/benchmod: %v\n%s", err, out)
	}
	for i := range fixtureCommits {
		work := "1024"
		if i >= fixtureChange {
			work = "3072"
		}
		cmd := exec.Command(bin, "-test.run=^$", "-test.bench=.", "-test.count=6", "-test.benchtime=20ms", "-test.benchmem")
		cmd.Env = append(os.Environ(), "BENCHMOD_WORK="+work)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run benchmarks: %v\n%s", err, out)
		}
		ts.pushBench(t, fixtureCommit(i), epoch.Add(time.Duration(i)*time.Hour), string(out))
	}
}

// pushLeftpadRun uploads a run of the bundled leftpad example (naive
// mode) that `perfscope profile` captured once
// (internal/findings/testdata/capture.sh); it returns the run's id. A
// committed run shows the same functions however busy the machine is.
func pushLeftpadRun(t *testing.T, ts *testServer) string {
	t.Helper()
	return pushFindingsRun(t, ts, "leftpad-naive")
}

// pushFindingsRun uploads the committed run name of the findings'
// testdata and returns its id.
func pushFindingsRun(t *testing.T, ts *testServer, name string) string {
	t.Helper()
	dir := filepath.Join("..", "findings", "testdata", "runs", name)
	profiles, err := filepath.Glob(filepath.Join(dir, "*.pb.gz"))
	if err != nil || len(profiles) == 0 {
		t.Fatalf("no profiles in %s: %v", dir, err)
	}
	names := []string{run.File}
	for _, p := range profiles {
		names = append(names, filepath.Base(p))
	}
	ct, body := multipartRun(t, dir, names...)
	code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body)
	if code != http.StatusCreated {
		t.Fatalf("upload run %s = %d %s", name, code, resp)
	}
	var res api.RunUpload
	if err := json.Unmarshal(resp, &res); err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// benchmarkNamed returns the stored name of the benchmark whose name
// starts with prefix: the -procs suffix depends on the machine.
func benchmarkNamed(t *testing.T, ts *testServer, prefix string) string {
	t.Helper()
	var benches []struct {
		Name string `json:"name"`
	}
	ts.getJSON(t, "/api/v1/benchmarks?package=^example.com/benchmod$", &benches)
	for _, b := range benches {
		if strings.HasPrefix(b.Name, prefix) {
			return b.Name
		}
	}
	t.Fatalf("no benchmark %s* among %+v", prefix, benches)
	return ""
}
