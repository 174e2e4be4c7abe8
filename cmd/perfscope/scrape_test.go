//go:build linux

// 'perfscope scrape' runs until interrupted; these tests send it SIGINT
// through startProcess's process groups: Linux, where the project's test
// command runs.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/scrape"
)

// scrapeUp is the line 'perfscope scrape' prints once it runs.
const scrapeUp = `scraping (\S+)(?: \(shard \S+\))? into (\S+)`

// leftpadFunc is the naive example's padding function, by the full name
// pprof gives it.
const leftpadFunc = "github.com/perfscope/perfscope/examples/leftpad.leftpad"

// A storedSeries is one row of 'perfscope query targets --format json'.
type storedSeries struct {
	Labels      []struct{ Name, Value string }
	Type        string
	First, Last time.Time
	Scrapes     int64
}

// label returns the value of the series' label name.
func (s storedSeries) label(name string) string {
	for _, l := range s.Labels {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// scrapesOf counts the scrapes of type typ stored for the target whose
// instance is addr.
func scrapesOf(ss []storedSeries, addr, typ string) int64 {
	var n int64
	for _, s := range ss {
		if s.label("instance") == addr && s.Type == typ {
			n += s.Scrapes
		}
	}
	return n
}

// cliResult is how a perfscope command line ended.
type cliResult struct {
	stdout, stderr string
	code           int
}

// perfscopeCLI runs the built perfscope in dir with env and returns how
// it ended.
func perfscopeCLI(t *testing.T, bin, dir string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cliResult{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("perfscope %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// ok runs a command line that must succeed and returns its output.
func okCLI(t *testing.T, bin, dir string, env []string, args ...string) string {
	t.Helper()
	r := perfscopeCLI(t, bin, dir, env, args...)
	if r.code != 0 {
		t.Fatalf("perfscope %s: exit status %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// storedIn lists the series the store db holds.
func storedIn(t *testing.T, bin, dir string, env []string, db string) []storedSeries {
	t.Helper()
	out := okCLI(t, bin, dir, env, "query", "targets", "--db", db, "--format", "json")
	var ss []storedSeries
	if err := json.Unmarshal([]byte(out), &ss); err != nil {
		t.Fatalf("query targets --format json: %v\n%s", err, out)
	}
	return ss
}

// eventually polls cond until it holds, failing the test after a
// deadline generous enough for a busy machine: the tests wait for counts
// reached, never for how fast.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		<-tick.C
	}
}

// leftpadLabels are the labels the tests' configurations give a leftpad
// example's target, spaces, dashes and unicode included; job and
// instance are the scraper's, as it adds them.
func leftpadLabels(addr, mode, zone string) map[string]string {
	return map[string]string{"job": "leftpad", "instance": addr, "service": "left pad", "team": "pay-ments ✓", "mode": mode, "zone": zone}
}

// shardZone returns the first value of the label zone that, with
// labels(i, zone) for target i, puts target i in shard want[i] of n: the
// tests then know each scraper has targets of its own.
func shardZone(t *testing.T, n int, want []int, labels func(i int, zone string) map[string]string) string {
	t.Helper()
	for k := range 10000 {
		zone := fmt.Sprintf("zone-%d", k)
		fits := true
		for i, w := range want {
			tg := scrape.Target{Labels: profseries.NewLabels(labels(i, zone))}
			if !(scrape.Shard{I: w, N: n}).Keeps(tg) {
				fits = false
				break
			}
		}
		if fits {
			return zone
		}
	}
	t.Fatalf("no zone puts the targets in shards %v of %d", want, n)
	return ""
}

// targetYAML writes one static_configs group of the target addr with its
// labels but job and instance.
func targetYAML(addr string, labels map[string]string) string {
	var kv []string
	for _, k := range []string{"service", "team", "mode", "zone"} {
		kv = append(kv, fmt.Sprintf("%s: %q", k, labels[k]))
	}
	return fmt.Sprintf("      - targets: [%q]\n        labels: {%s}\n", addr, strings.Join(kv, ", "))
}

// writeLeftpadConfig writes dir/scrape.yml, a configuration of job
// leftpad over the groups scraped every second, and returns its path.
func writeLeftpadConfig(t *testing.T, dir string, groups ...string) string {
	t.Helper()
	path := filepath.Join(dir, "scrape.yml")
	cfg := "global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: leftpad\n    static_configs:\n" + strings.Join(groups, "")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startLeftpad runs the leftpad example of bin in mode on loopback ports
// of its own and returns its origin and its pprof host:port.
func startLeftpad(t *testing.T, ctx context.Context, bin, mode string) (string, string) {
	t.Helper()
	p := startProcess(t, exec.CommandContext(ctx, bin, "example", "leftpad", "--mode", mode, "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0"))
	m, err := p.waitFor(ctx, regexp.MustCompile(exampleUp))
	if err != nil {
		t.Fatalf("leftpad example: %v\n%s", err, p.output())
	}
	return m[1], hostPort(m[2])
}

// loadLeftpad loads the leftpad example at origin with bin's load
// generator until the returned function stops it.
func loadLeftpad(t *testing.T, ctx context.Context, bin, origin string) func() {
	t.Helper()
	p := startProcess(t, exec.CommandContext(ctx, bin, "load", "-c", "2", "-d", "30m", origin+"/v1/leftpad/?str=test&len=50&chr=*"))
	return func() { _, _ = p.interrupt(ctx) }
}

// hostPort is the host:port of an http:// URL.
func hostPort(url string) string {
	s := strings.TrimPrefix(url, "http://")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	return s
}

// stackTrace is how a Go stack trace starts.
var stackTrace = regexp.MustCompile(`^panic: |goroutine \d+ \[`)

// oneLine checks that a command's error output is one line that holds
// every one of want, and no stack trace.
func oneLine(t *testing.T, r cliResult, code int, want ...string) {
	t.Helper()
	msg := strings.TrimRight(r.stderr, "\n")
	if r.code != code || msg == "" || strings.Contains(msg, "\n") || stackTrace.MatchString(msg) {
		t.Errorf("exit status %d, want %d, with one line of error; stderr:\n%s", r.code, code, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
}

// TestScrapeThenQuery scrapes the naive leftpad example under load every
// second into SQLite until three CPU scrapes are stored, stops the
// scraper with SIGINT, and asks the store every query: labels come back
// as written, the merged CPU profile is one go tool pprof and go build
// -pgo take, the allocation ranking and the findings name the example's
// own code, and bad input is one line with exit status 2, or 1 when
// nothing is stored.
func TestScrapeThenQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perfscope, runs the leftpad example under load and scrapes it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bin := buildPerfscope(t)
	dir, env := t.TempDir(), os.Environ()
	cli := func(args ...string) cliResult { return perfscopeCLI(t, bin, dir, env, args...) }
	ok := func(args ...string) string { return okCLI(t, bin, dir, env, args...) }

	origin, addr := startLeftpad(t, ctx, bin, "naive")
	stopLoad := loadLeftpad(t, ctx, bin, origin)
	defer stopLoad()
	labels := leftpadLabels(addr, "naive", "zone-a")
	cfg := writeLeftpadConfig(t, dir, targetYAML(addr, labels))
	db := filepath.Join(dir, "scrape.db")
	sc := startProcess(t, exec.CommandContext(ctx, bin, "scrape", "--config", cfg, "--db", db, "--status-every", "1s"))
	if _, err := sc.waitFor(ctx, regexp.MustCompile(scrapeUp)); err != nil {
		t.Fatalf("%v\n%s", err, sc.output())
	}
	var stored []storedSeries
	eventually(t, "three CPU and three allocs scrapes stored", func() bool {
		stored = storedIn(t, bin, dir, env, db)
		return scrapesOf(stored, addr, "cpu") >= 3 && scrapesOf(stored, addr, "allocs") >= 3
	})
	if code, err := sc.interrupt(ctx); err != nil || code != 0 {
		t.Fatalf("scrape after SIGINT: exit status %d (%v), want 0\n%s", code, err, sc.output())
	}
	if out := sc.output(); !strings.Contains(out, "HEALTH") || !strings.Contains(out, addr) {
		t.Errorf("scrape did not end with its targets' health:\n%s", out)
	}
	stopLoad()

	t.Run("targets", func(t *testing.T) {
		out := ok("query", "targets", "--db", db)
		for _, w := range []string{`service="left pad"`, `team="pay-ments ✓"`, `job="leftpad"`, "cpu", "allocs", "heap", "goroutine"} {
			if !strings.Contains(out, w) {
				t.Errorf("query targets lacks %s:\n%s", w, out)
			}
		}
		for _, sel := range []string{`{team="pay-ments ✓"}`, `{service="left pad", team=~"pay-.*"}`} {
			if out := ok("query", "targets", "--db", db, "--type", "cpu", sel); !strings.Contains(out, addr) {
				t.Errorf("query targets %s does not find the target:\n%s", sel, out)
			}
		}
		if out := ok("query", "targets", "--db", db, `{team="payments"}`); strings.Contains(out, addr) {
			t.Errorf("query targets {team=\"payments\"} lists a target it does not choose:\n%s", out)
		}
	})

	t.Run("merge", func(t *testing.T) {
		pgo := filepath.Join(dir, "f.pb.gz")
		out := ok("query", "merge", "--db", db, "--since", "1h", `{service="left pad"}`, "-o", pgo)
		if !strings.Contains(out, "wrote "+pgo) {
			t.Errorf("merge does not say what it wrote:\n%s", out)
		}
		b, err := os.ReadFile(pgo)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.ParseData(b)
		if err != nil {
			t.Fatalf("the merged profile does not parse: %v", err)
		}
		if len(p.Sample) == 0 || len(p.SampleType) != 2 || p.SampleType[1].Type != "cpu" {
			t.Errorf("merged profile: %d samples of %v, want CPU samples", len(p.Sample), p.SampleType)
		}
		top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", pgo).CombinedOutput()
		if err != nil || !strings.Contains(string(top), "Type: cpu") || !strings.Contains(string(top), "flat%") {
			t.Errorf("go tool pprof -top: %v\n%s", err, top)
		}
		mod := t.TempDir()
		prog := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"
		for name, text := range map[string]string{"go.mod": "module pgotest\n\ngo 1.26\n", "main.go": prog} {
			if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		build := exec.CommandContext(ctx, "go", "build", "-pgo="+pgo, "-o", filepath.Join(mod, "pgotest"), ".")
		build.Dir, build.Env = mod, append(os.Environ(), "GOFLAGS=", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			t.Errorf("go build -pgo refused the merged profile: %v\n%s", err, out)
		}
	})

	t.Run("top allocs", func(t *testing.T) {
		out := ok("query", "top", "--db", db, "--type", "allocs", `{job="leftpad"}`)
		if !strings.Contains(out, "alloc_space") || !strings.Contains(out, leftpadFunc+"\n") {
			t.Errorf("query top --type allocs does not rank %s by allocated bytes:\n%s", leftpadFunc, out)
		}
	})

	t.Run("function", func(t *testing.T) {
		out := ok("query", "function", "--db", db, "--type", "allocs", "--step", "1h", leftpadFunc, `{job="leftpad"}`)
		// One step, of every allocs scrape, in which the function allocated.
		if !regexp.MustCompile(`[1-9][0-9.]*%\s+[1-9][0-9.]*%\s+[1-9][0-9]*\n`).MatchString(out) {
			t.Errorf("query function shows no share of %s in a step of scrapes:\n%s", leftpadFunc, out)
		}
	})

	t.Run("findings", func(t *testing.T) {
		out := ok("query", "findings", "--db", db, `{job="leftpad"}`)
		// The access log builds a strings.Replacer per request: half the
		// bytes allocated, under any load, from the allocation profile
		// alone.
		for _, w := range []string{"perfscope report: profiles scraped from {job=\"leftpad\"}", "FINDINGS", "(built-per-call)"} {
			if !strings.Contains(out, w) {
				t.Errorf("query findings lacks %q:\n%s", w, out)
			}
		}
	})

	t.Run("diff", func(t *testing.T) {
		var first, last time.Time
		for _, s := range stored {
			if s.label("instance") == addr && s.Type == "cpu" {
				first, last = s.First, s.Last
			}
		}
		mid := first.Add(last.Sub(first) / 2)
		at := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
		out := ok("query", "diff", "--db", db, "--from", at(mid), "--to", at(last.Add(time.Second)),
			"--base-from", at(first.Add(-time.Second)), "--base-to", at(mid), `{job="leftpad"}`)
		for _, w := range []string{"base ", "head ", "Functions by change of flat share", "runtime."} {
			if !strings.Contains(out, w) {
				t.Errorf("query diff lacks %q:\n%s", w, out)
			}
		}
	})

	t.Run("bad input", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.yml")
		if err := os.WriteFile(bad, []byte("global:\n  scrape_intervl: 1s\nscrape_configs: []\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		oneLine(t, cli("scrape", "--config", bad, "--db", filepath.Join(dir, "other.db")), 2, "bad.yml:2", "scrape_intervl")
		oneLine(t, cli("query", "top", "--db", db, `{job="leftpad"`), 2, "selector")
		oneLine(t, cli("query", "merge", "--db", db, "--from", "1h", "--to", "2h", "-o", filepath.Join(dir, "x.pb.gz")), 2, "empty time range")
		oneLine(t, cli("query", "top", "--db", db, "--type", "cpuu"), 2, "cpuu")
		oneLine(t, cli("query", "top", "--db", db, `{job="nothing here"}`), 1, "no profiles stored", "perfscope query targets")
		oneLine(t, cli("query", "findings", "--db", db, "--from", "30d", "--to", "29d"), 1, "no profiles stored", "widen the range")
	})
}
