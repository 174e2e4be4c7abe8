package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/run"
)

func init() { register(newPushCmd) }

// pushOptions are push's flags.
type pushOptions struct {
	server, token                string
	commit, branch, machine, pkg string
	commitTime                   string
	dirty                        string
	timeout                      time.Duration
}

func newPushCmd() *cobra.Command {
	var o pushOptions
	c := &cobra.Command{
		Use:   "push FILE|RUNDIR",
		Short: "Upload benchmark results or a profiling run to a perfscope server",
		Long: `push uploads to a dashboard started with 'perfscope serve', typically from CI:

  FILE     Go benchmark output ('go test -bench' or a 'perfscope bench' file),
           stored per commit. The commit, branch and dirty state come from the
           file's configuration lines (perfscope bench writes them), else from
           the flags, else from the git work tree push runs in.
  RUNDIR   a run directory saved by 'perfscope profile' (run.json and its
           profiles), shown on the server's Runs page with its flame graphs.

The server acknowledges an upload only once it is stored. Uploading a run
the server already has is not an error.

Flags:
  --server URL        the server (default $PERFSCOPE_SERVER, else http://127.0.0.1:7070)
  --token T           API token (default $PERFSCOPE_TOKEN; create one with 'perfscope token create')
  --commit HASH       commit of benchmark results without a 'commit:' line
  --branch B          branch of the results
  --dirty true|false  whether the work tree had uncommitted changes
  --commit-time T     committer date (RFC 3339); default from git when it knows the commit
  --machine HOST      machine the benchmarks ran on (default this host's name)
  --package PATH      import path of results without a 'pkg:' line
  --timeout D         give up after this long (default 5m)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.server == "" {
				o.server = os.Getenv("PERFSCOPE_SERVER")
			}
			if o.server == "" {
				o.server = "http://127.0.0.1:7070"
			}
			u, err := url.Parse(o.server)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usagef("--server %q: want a URL such as http://perf.example.com:7070", o.server)
			}
			if o.token == "" {
				o.token = os.Getenv("PERFSCOPE_TOKEN")
			}
			if o.token == "" {
				return usagef("no token: pass --token or set PERFSCOPE_TOKEN (create one on the server with 'perfscope token create')")
			}
			if o.timeout <= 0 {
				return usagef("--timeout %s: must be positive", o.timeout)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			fi, err := os.Stat(args[0])
			if err != nil {
				return usagef("%s: %v", args[0], errors.Unwrap(err))
			}
			var msg string
			if fi.IsDir() {
				msg, err = pushRun(ctx, o, args[0])
			} else {
				msg, err = pushBench(ctx, o, args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.server, "server", "", "server URL (default $PERFSCOPE_SERVER, else http://127.0.0.1:7070)")
	f.StringVar(&o.token, "token", "", "API token (default $PERFSCOPE_TOKEN)")
	f.StringVar(&o.commit, "commit", "", "commit of results without a 'commit:' line")
	f.StringVar(&o.branch, "branch", "", "branch of the results")
	f.StringVar(&o.dirty, "dirty", "", "true when the work tree had uncommitted changes")
	f.StringVar(&o.commitTime, "commit-time", "", "committer date, RFC 3339 (default from git)")
	f.StringVar(&o.machine, "machine", "", "machine the benchmarks ran on (default this host's name)")
	f.StringVar(&o.pkg, "package", "", "import path of results without a 'pkg:' line")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up after this long")
	return c
}

// pushBench uploads a benchmark results file.
func pushBench(ctx context.Context, o pushOptions, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	parsed, err := bench.Parse(bytes.NewReader(data), path)
	if err != nil {
		return "", err
	}
	if len(parsed.Results) == 0 {
		return "", usagef("%s holds no benchmark results (lines such as 'BenchmarkX-8  1000  123 ns/op')", path)
	}
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	commit, branch, dirty := o.commit, o.branch, o.dirty
	if commit == "" && parsed.Results[0].GetConfig("commit") == "" {
		// Plain 'go test -bench' output: the results are of the
		// code checked out here.
		if meta, err := bench.Environment(ctx, "."); err == nil && meta.Commit != "" {
			commit = meta.Commit
			if branch == "" {
				branch = meta.Branch
			}
			if dirty == "" {
				dirty = fmt.Sprint(meta.Dirty)
			}
		} else {
			return "", usagef("%s has no 'commit:' line and this is not a git work tree: pass --commit", path)
		}
	}
	set("commit", commit)
	set("branch", branch)
	set("dirty", dirty)
	machine := o.machine
	if machine == "" {
		machine, _ = os.Hostname()
	}
	set("machine", machine)
	set("package", o.pkg)
	ct := o.commitTime
	if ct == "" {
		hash := commit
		if hash == "" {
			hash = parsed.Results[0].GetConfig("commit")
		}
		ct = gitCommitTime(ctx, hash)
	}
	set("commit_time", ct)
	var res struct {
		ID         int64    `json:"id"`
		Commit     string   `json:"commit"`
		Benchmarks int      `json:"benchmarks"`
		Results    int      `json:"results"`
		Warnings   []string `json:"warnings"`
		URL        string   `json:"url"`
	}
	code, err := pushRequest(ctx, o, "/api/v1/bench?"+q.Encode(), "text/plain; charset=utf-8", bytes.NewReader(data), &res)
	if err != nil {
		return "", err
	}
	if code != http.StatusCreated {
		return "", fmt.Errorf("push %s: unexpected answer %d from the server", path, code)
	}
	msg := fmt.Sprintf("pushed %d results of %d benchmarks for commit %s: %s", res.Results, res.Benchmarks, shortHash(res.Commit), strings.TrimSuffix(o.server, "/")+res.URL)
	for _, w := range res.Warnings {
		msg += "\nskipped: " + w
	}
	return msg, nil
}

// gitCommitTime returns the committer date of hash in the git work tree
// push runs in, or "" when git does not know it.
func gitCommitTime(ctx context.Context, hash string) string {
	if hash == "" {
		return ""
	}
	out, err := exec.CommandContext(ctx, "git", "show", "-s", "--format=%cI", hash, "--").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// pushRun uploads a run directory as multipart/form-data, streamed.
func pushRun(ctx context.Context, o pushOptions, dir string) (string, error) {
	saved, err := run.Load(dir)
	if err != nil {
		return "", usagef("%v", err)
	}
	files := []string{run.File}
	for _, pf := range saved.Profiles {
		if pf.File != "" {
			files = append(files, pf.File)
		}
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return "", fmt.Errorf("run %s is incomplete: %w", dir, err)
		}
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			for _, name := range files {
				part, err := mw.CreateFormFile(name, name)
				if err != nil {
					return err
				}
				f, err := os.Open(filepath.Join(dir, name))
				if err != nil {
					return err
				}
				_, err = io.Copy(part, f)
				f.Close()
				if err != nil {
					return err
				}
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	var res struct {
		ID       string `json:"id"`
		Profiles int    `json:"profiles"`
		URL      string `json:"url"`
	}
	code, err := pushRequest(ctx, o, "/api/v1/runs", mw.FormDataContentType(), pr, &res)
	pr.Close()
	if err != nil {
		return "", err
	}
	base := strings.TrimSuffix(o.server, "/")
	if code == http.StatusConflict {
		return fmt.Sprintf("run %s is already on the server: %s/runs/%s", saved.ID, base, saved.ID), nil
	}
	return fmt.Sprintf("pushed run %s with %d profiles: %s", res.ID, res.Profiles, base+res.URL), nil
}

// pushRequest POSTs body to the server and decodes a 201 answer into out.
// It returns the status for 201 and 409; any other answer is an error
// carrying the server's message.
func pushRequest(ctx context.Context, o pushOptions, path, contentType string, body io.Reader, out any) (int, error) {
	target := strings.TrimSuffix(o.server, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+o.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach the perfscope server at %s: %w", o.server, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("read the server's answer: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusCreated:
		if err := json.Unmarshal(data, out); err != nil {
			return 0, fmt.Errorf("the server at %s answered something that is not perfscope's JSON: %w", o.server, err)
		}
		return resp.StatusCode, nil
	case http.StatusConflict:
		return resp.StatusCode, nil
	}
	var apiErr struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &apiErr) != nil || apiErr.Error == "" {
		apiErr.Error = strings.TrimSpace(string(data))
		if len(apiErr.Error) > 200 {
			apiErr.Error = apiErr.Error[:200] + "..."
		}
	}
	return 0, fmt.Errorf("the server refused the upload (%s): %s", resp.Status, apiErr.Error)
}
