package dashboard

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/store"
)

// BenchRun builds the run a benchmark upload stores from its query
// parameters (api.BenchParams) and the parsed file: a parameter overrides
// the file's configuration line of the same meaning, which every result
// must agree on. What is wrong with them is an ErrBadInput.
func BenchRun(q url.Values, parsed *bench.Results) (store.BenchRun, error) {
	if len(parsed.Results) == 0 {
		msg := "no benchmark results in the body: send Go benchmark format ('go test -bench' output, lines such as 'BenchmarkX-8  1000  123 ns/op')"
		if len(parsed.Warnings) > 0 {
			msg += "; first malformed line: " + parsed.Warnings[0].Error()
		}
		return store.BenchRun{}, BadInput(msg)
	}
	// The file's own configuration, where every result agrees on it.
	conf := func(key string) (string, error) {
		v := parsed.Results[0].GetConfig(key)
		for _, r := range parsed.Results[1:] {
			if r.GetConfig(key) != v {
				return "", BadInput(fmt.Sprintf("the results disagree on %q (%q and %q): upload one file per %s", key, v, r.GetConfig(key), key))
			}
		}
		return v, nil
	}
	pick := func(v, key string) (string, error) {
		if v != "" || key == "" {
			return v, nil
		}
		return conf(key)
	}
	p := api.ParseBenchParams(q)
	var run store.BenchRun
	var err error
	fields := []struct {
		param, value, key string
		dst               *string
	}{
		{"commit", p.Commit, "commit", &run.Commit},
		{"branch", p.Branch, "branch", &run.Branch},
		{"subject", p.Subject, "", &run.Subject},
		{"author", p.Author, "", &run.Author},
		{"machine", p.Machine, "", &run.Machine.Hostname},
		{"goos", p.GOOS, "goos", &run.Machine.GOOS},
		{"goarch", p.GOARCH, "goarch", &run.Machine.GOARCH},
		{"cpu", p.CPU, "cpu", &run.Machine.CPU},
		{"go", p.Go, "go", &run.GoVersion},
		{"package", p.Package, "", &run.Package},
	}
	for _, f := range fields {
		if *f.dst, err = pick(f.value, f.key); err != nil {
			return run, err
		}
		if len(*f.dst) > 512 {
			return run, BadInput(fmt.Sprintf("%s is longer than 512 characters", f.param))
		}
	}
	if run.Commit == "" {
		return run, BadInput("no commit: pass ?commit=HASH or upload a file with a 'commit:' line (as 'perfscope bench' writes)")
	}
	if strings.ContainsAny(run.Commit, " \t\n/") {
		return run, BadInput(fmt.Sprintf("commit %q: want a hash, without spaces or slashes", run.Commit))
	}
	dirty, err := pick(p.Dirty, "dirty")
	if err != nil {
		return run, err
	}
	if dirty != "" {
		if run.Dirty, err = strconv.ParseBool(dirty); err != nil {
			return run, BadInput(fmt.Sprintf("dirty %q: want true or false", dirty))
		}
	}
	if run.CommitTime, err = parseTime("commit_time", p.CommitTime); err != nil {
		return run, err
	}
	if run.Time, err = parseTime("time", p.Time); err != nil {
		return run, err
	}
	run.Results = parsed.Results
	return run, nil
}
