package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/client"
	"github.com/perfscope/perfscope/internal/report"
)

func init() { register(newPushCmd) }

func newPushCmd() *cobra.Command {
	var (
		sf serverFlags
		p  api.BenchParams
	)
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
the server already has is not an error.`,
		Example: `  perfscope push --server http://perf:7070 results.txt          # token in $PERFSCOPE_TOKEN
  perfscope push --server http://perf:7070 .perfscope/runs/RUN  # a profiling run with its profiles`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := sf.client()
			if err != nil {
				return err
			}
			fi, err := os.Stat(args[0])
			if err != nil {
				return usagef("%s: %v", args[0], errors.Unwrap(err))
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), sf.timeout)
			defer cancel()
			if fi.IsDir() {
				res, existed, err := cl.PushRun(ctx, args[0])
				if err != nil {
					return pushError(err)
				}
				return report.WriteRunUpload(cmd.OutOrStdout(), res, existed)
			}
			res, err := cl.PushBench(ctx, args[0], p)
			if err != nil {
				return pushError(err)
			}
			return report.WriteBenchUpload(cmd.OutOrStdout(), res)
		},
	}
	f := c.Flags()
	sf.add(f, 5*time.Minute)
	f.StringVar(&p.Commit, "commit", "", "commit of benchmark results without a 'commit:' line")
	f.StringVar(&p.Branch, "branch", "", "branch of the results")
	f.StringVar(&p.Dirty, "dirty", "", "true|false: whether the work tree had uncommitted changes")
	f.StringVar(&p.CommitTime, "commit-time", "", "committer date, RFC 3339 (default from git when it knows the commit)")
	f.StringVar(&p.Subject, "subject", "", "first line of the commit's message (default from git when it knows the commit)")
	f.StringVar(&p.Author, "author", "", "the commit author's name (default from git when it knows the commit)")
	f.StringVar(&p.Machine, "machine", "", "machine the benchmarks ran on (default this host's name)")
	f.StringVar(&p.Package, "package", "", "import path of results without a 'pkg:' line")
	return c
}

// pushError makes errors in what was named on the command line usage errors.
// serverFlags name the server a command writes to: --server, --token and
// --timeout.
type serverFlags struct {
	server, token string
	timeout       time.Duration
}

func (sf *serverFlags) add(f *pflag.FlagSet, timeout time.Duration) {
	f.StringVar(&sf.server, "server", "", "server URL (default $PERFSCOPE_SERVER, else http://127.0.0.1:7070)")
	f.StringVar(&sf.token, "token", "", "API token (default $PERFSCOPE_TOKEN; create one with 'perfscope token create')")
	f.DurationVar(&sf.timeout, "timeout", timeout, "give up after this long")
}

// client is the client of the server named by --server (else
// $PERFSCOPE_SERVER, else the local default) with the token of --token
// (else $PERFSCOPE_TOKEN), which writes need.
func (sf *serverFlags) client() (*client.Client, error) {
	server, token := sf.server, sf.token
	if sf.timeout <= 0 {
		return nil, usagef("--timeout %s: must be positive", sf.timeout)
	}
	if server == "" {
		server = os.Getenv("PERFSCOPE_SERVER")
	}
	if server == "" {
		server = "http://127.0.0.1:7070"
	}
	if token == "" {
		token = os.Getenv("PERFSCOPE_TOKEN")
	}
	cl, err := client.New(server, token, nil)
	if err != nil {
		return nil, usagef("--server %v", err)
	}
	if token == "" {
		return nil, usagef("no token: pass --token or set PERFSCOPE_TOKEN (create one on the server with 'perfscope token create')")
	}
	return cl, nil
}

func pushError(err error) error {
	if errors.Is(err, client.ErrBadInput) {
		return usageError{err}
	}
	return err
}
