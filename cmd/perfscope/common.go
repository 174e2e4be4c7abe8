package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/perfscope/perfscope/internal/store"
)

// addFormatFlag adds the --format flag shared by every command that renders
// output; the first allowed value is the default. checkFormat validates it.
func addFormatFlag(c *cobra.Command, p *string, allowed ...string) {
	c.Flags().StringVar(p, "format", allowed[0], "output format: "+strings.Join(allowed, ", "))
	_ = c.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	})
}

// checkFormat returns a usage error when format is not one of allowed.
func checkFormat(format string, allowed ...string) error {
	if slices.Contains(allowed, format) {
		return nil
	}
	return usagef("unknown --format %q: use one of %s", format, strings.Join(allowed, ", "))
}

// stderrIsTerminal reports whether progress output would reach a person.
func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// openServerStore opens the store --db names, for the server or its tokens.
// With existing, a store that does not exist is
// an error rather than a new database: commands that only read or remove
// must not leave a mistyped --db behind.
func openServerStore(cmd *cobra.Command, db string, existing bool) (*store.DB, error) {
	open := store.Open
	if existing {
		open = store.OpenExisting
	}
	return openServerStoreWith(cmd, db, open, "check --db")
}

// openServerStoreWith is openServerStore with the store opened by open;
// hint says how to make a store that does not exist yet.
func openServerStoreWith(cmd *cobra.Command, db string, open func(context.Context, string) (*store.DB, error), hint string) (*store.DB, error) {
	st, err := open(cmd.Context(), db)
	if err != nil {
		return nil, storeOpenError(err, hint)
	}
	return st, nil
}

// storeOpenError says what to do about a store that could not be opened:
// one that does not exist yet is made by what hint says; a file that is
// not a store is the wrong --db.
func storeOpenError(err error, hint string) error {
	switch {
	case errors.Is(err, store.ErrNoDatabase):
		return fmt.Errorf("%w: %s", err, hint)
	case errors.Is(err, store.ErrNotStore):
		return fmt.Errorf("%w: check --db", err)
	}
	return err
}

// describeDB names the store for messages, without a password.
func describeDB(db string) string {
	if db == "" {
		p, err := store.DefaultPath()
		if err != nil {
			return "(default)"
		}
		return p
	}
	if store.IsPostgres(db) {
		if i := strings.Index(db, "@"); i > 0 {
			if j := strings.Index(db, "://"); j > 0 && j < i {
				return db[:j+3] + "…" + db[i:]
			}
		}
	}
	return db
}
