package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
)

func init() { register(newTokenCmd) }

func newTokenCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke the dashboard's API tokens",
		Long: `token manages the tokens 'perfscope serve' accepts for uploads (and for
reads from other machines). Only a hash of each token is stored: a token is
shown once, when it is created.`,
	}
	var db, name string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a new API token and print it once",
		Long: `create makes a new random token, stores its hash in the store the server
uses, and prints the token on stdout. Keep it in your CI's secrets and pass it
to 'perfscope push' as --token or the PERFSCOPE_TOKEN environment variable.`,
		Example: `  perfscope token create --name ci-linux --db postgres://perf:secret@db/perfscope`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openServerStore(cmd, db, false)
			if err != nil {
				return err
			}
			defer st.Close()
			secret, t, err := st.CreateToken(cmd.Context(), name)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), secret)
			fmt.Fprintln(cmd.ErrOrStderr(), report.TokenCreated(t, describeDB(db)))
			return nil
		},
	}
	create.Flags().StringVar(&name, "name", "", `what the token is for, e.g. ci-linux (default "token")`)
	create.Flags().StringVar(&db, "db", "", "the server's store: a SQLite file or a postgres:// URL (default ~/.perfscope/perfscope.db)")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the API tokens (names and dates; the tokens themselves are not kept)",
		Long: `list prints each token's ID, name and creation time, oldest first. It
only reads: it opens the store read-only, and a store that does not exist,
or a file that is not one, is an error, not a new database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openServerStoreWith(cmd, db, store.OpenReadOnly, "check --db, or create a token first (perfscope token create)")
			if err != nil {
				return err
			}
			defer st.Close()
			tokens, err := st.Tokens(cmd.Context())
			if err != nil {
				return err
			}
			return report.WriteTokens(cmd.OutOrStdout(), tokens)
		},
	}
	list.Flags().StringVar(&db, "db", "", "the server's store: a SQLite file or a postgres:// URL (default ~/.perfscope/perfscope.db)")

	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API token: the server refuses it from then on",
		Long: `revoke deletes the token with this ID (the first column of 'perfscope token
list') from the store, so that the server refuses its secret. A store or a
token that does not exist is an error.`,
		Example: `  perfscope token list
  perfscope token revoke 3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id < 1 {
				return usagef("token ID %q: give the number 'perfscope token list' shows", args[0])
			}
			st, err := openServerStore(cmd, db, true)
			if err != nil {
				return err
			}
			defer st.Close()
			t, err := st.RevokeToken(cmd.Context(), id)
			if errors.Is(err, store.ErrUnknownToken) {
				return fmt.Errorf("no token %d in %s (see 'perfscope token list')", id, describeDB(db))
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), report.TokenRevoked(t, describeDB(db)))
			return nil
		},
	}
	revoke.Flags().StringVar(&db, "db", "", "the server's store: a SQLite file or a postgres:// URL (default ~/.perfscope/perfscope.db)")
	c.AddCommand(create, list, revoke)
	return c
}
