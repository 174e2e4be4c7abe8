package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestArgsErrors gives every command no arguments and then ones it does
// not take: each that refuses them says so in one usage line (exit status
// 2) that starts with the command's name, not in cobra's words.
func TestArgsErrors(t *testing.T) {
	refused := 0
	for _, c := range commandTree(newRootCmd())[1:] {
		if c.Args == nil || c.DisableFlagParsing {
			continue
		}
		path := strings.Fields(c.CommandPath())[1:]
		for _, extra := range [][]string{nil, {"x1", "x2", "x3"}} {
			if err := c.Args(c, extra); err == nil {
				continue
			}
			refused++
			_, err := runCLI(t, append(append([]string{}, path...), extra...)...)
			var ue usageError
			line := errorLine(err)
			if !errors.As(err, &ue) || !strings.HasPrefix(line, c.CommandPath()+" ") && !strings.HasPrefix(line, c.CommandPath()+":") || strings.Contains(line, "\n") ||
				strings.Contains(line, "arg(s)") || strings.Contains(line, "perfscope: ") {
				t.Errorf("%s %s: %q; want one usage line starting %q", c.CommandPath(), strings.Join(extra, " "), line, c.CommandPath())
			}
		}
	}
	if refused < 10 {
		t.Errorf("only %d refusals tried", refused)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"load"}, "perfscope load: give the URL to load, e.g. perfscope load -d 10s 'http://127.0.0.1:8080/'"},
		{[]string{"profile"}, "perfscope profile: give URL, e.g. perfscope profile "},
		{[]string{"token", "revoke"}, "perfscope token revoke: give ID, e.g. perfscope token revoke 3"},
		{[]string{"load", "http://a/", "b"}, `perfscope load is used as 'perfscope load URL', not with "http://a/" "b"`},
		{[]string{"history", "x"}, `perfscope history takes no arguments, not "x"`},
		{[]string{"token", "lsit"}, `perfscope token: unknown command "lsit": use create, list, revoke`},
	} {
		_, err := runCLI(t, tc.args...)
		if line := errorLine(err); !strings.HasPrefix(line, tc.want) {
			t.Errorf("perfscope %s: %q, want %q", strings.Join(tc.args, " "), line, tc.want)
		}
	}

	// A group of commands given nothing shows its help.
	if out, err := runCLI(t, "token"); err != nil || !strings.Contains(out, "Available Commands") {
		t.Errorf("perfscope token: %v, %q; want its help", err, out)
	}
}

// commandTree returns root and every command below it.
func commandTree(root *cobra.Command) []*cobra.Command {
	all := []*cobra.Command{root}
	for _, sub := range root.Commands() {
		all = append(all, commandTree(sub)...)
	}
	return all
}
