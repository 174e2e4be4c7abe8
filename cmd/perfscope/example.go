package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/examples/leftpad"
	"github.com/perfscope/perfscope/examples/txsummary"
	"github.com/perfscope/perfscope/internal/demo"
)

func init() { register(newExampleCmd) }

func newExampleCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "example NAME [flags]",
		Short: "Run a bundled example service (leftpad or txsummary)",
		Long: `example runs one of the example services built into perfscope, the
workloads of 'perfscope demo', in the foreground until Ctrl-C. Each has a
naive and an optimized mode (--mode) and serves its profiles with package
expose on a separate loopback port; its first line says where, and the
next the command that profiles it:

  leftpad    the left-pad microservice with StatsD metrics and an access log
             API   http://127.0.0.1:8080/v1/leftpad/?str=test&len=50&chr=*
             pprof http://127.0.0.1:6060/debug/pprof/  (--pprof-addr)

  txsummary  the JSON transaction-summary service over a generated data set
             API   http://127.0.0.1:8081/summary
             pprof http://127.0.0.1:6061/debug/pprof/  (--pprof-addr)

'perfscope example NAME --help' lists the example's own flags. Port 0 in
--addr or --pprof-addr picks a free port; --pprof-addr "" serves no profiles.`,
		Example: `  perfscope example leftpad --mode naive
  perfscope profile -d 10s --pprof http://127.0.0.1:6060 'http://127.0.0.1:8080/v1/leftpad/?str=test&len=50&chr=*'
  perfscope example txsummary --mode optimized --addr 127.0.0.1:0 --pprof-addr 127.0.0.1:0`,
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
				return cmd.Help()
			}
			var run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
			switch args[0] {
			case "leftpad":
				run = leftpad.Run
			case "txsummary":
				run = txsummary.Run
			default:
				return usagef("unknown example %q: use leftpad or txsummary", args[0])
			}
			stdout := demo.WithProfileHint(cmd.OutOrStdout(), args[0])
			code := run(cmd.Context(), args[1:], stdout, demo.WithPortHint(cmd.ErrOrStderr()))
			_ = stdout.Flush()
			if code != 0 {
				return exitError{code: code}
			}
			return nil
		},
	}
	return c
}
