package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// unsafeExamples are the commands whose Example still has a line a shell
// would not pass as written. The list only shrinks: a command missing from
// it must have safe examples, and one on it whose examples are safe must
// leave it.
var unsafeExamples = []string{}

// TestExamplesAreShellSafe reads every command's Example as a shell would
// and fails on a word the shell would change or cut: an unquoted &, ;, |,
// <, >, ( or ) inside a word (a URL's query), an unquoted ?, [ or * that the
// shell would expand as a file name pattern (a regular expression), a brace
// list, an unquoted "!" or an unterminated quote. Pasted into a terminal,
// every example must run as it reads.
func TestExamplesAreShellSafe(t *testing.T) {
	var unsafe []string
	for _, c := range allCommands(newRootCmd()) {
		var problems []string
		for _, line := range exampleLines(c.Example) {
			for _, p := range shellProblems(line) {
				problems = append(problems, fmt.Sprintf("%s\n      in: %s", p, line))
			}
		}
		listed := slices.Contains(unsafeExamples, c.CommandPath())
		switch {
		case len(problems) > 0 && !listed:
			t.Errorf("%s: its Example is not safe to paste into a shell (quote the word):\n  %s", c.CommandPath(), strings.Join(problems, "\n  "))
		case len(problems) == 0 && listed:
			t.Errorf("%s: its Example is safe now: take it off unsafeExamples", c.CommandPath())
		}
		if len(problems) > 0 {
			unsafe = append(unsafe, c.CommandPath())
			t.Logf("%s:\n  %s", c.CommandPath(), strings.Join(problems, "\n  "))
		}
	}
	t.Logf("commands whose examples are not shell-safe: %v", unsafe)
}

// exampleLines returns the command lines of an Example: lines joined where
// one ends in a backslash, blank lines left out.
func exampleLines(example string) []string {
	var lines []string
	var cur strings.Builder
	for _, l := range strings.Split(example, "\n") {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutSuffix(l, "\\"); ok {
			cur.WriteString(rest + " ")
			continue
		}
		cur.WriteString(l)
		if s := strings.TrimSpace(cur.String()); s != "" {
			lines = append(lines, s)
		}
		cur.Reset()
	}
	return lines
}

// shellProblems splits line into words as a POSIX shell (or zsh) does and
// returns, for each word the shell would not pass as written, what it would
// do with it. Operators standing alone (|, &&, >, 2>&1 ...) are the shell's
// own and fine; so are $VARIABLES, which an example means to be expanded,
// and a file name pattern such as *.txt.
func shellProblems(line string) []string {
	var problems []string
	type word struct {
		text     strings.Builder
		unquoted strings.Builder // the characters outside quotes
		any      bool
	}
	var w word
	flush := func() {
		if w.any {
			if p := wordProblem(w.text.String(), w.unquoted.String()); p != "" {
				problems = append(problems, p)
			}
		}
		w = word{}
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t':
			flush()
			continue
		case r == '#' && !w.any:
			flush()
			return problems // a comment
		case r == '\\' && i+1 < len(rs):
			i++
			w.text.WriteRune(rs[i])
		case r == '\'' || r == '"':
			end := i + 1
			for end < len(rs) && rs[end] != r {
				if r == '"' && rs[end] == '\\' {
					end++
				}
				if r == '"' && end < len(rs) && rs[end] == '!' {
					problems = append(problems, fmt.Sprintf("%q: bash expands ! in double quotes: use single quotes", string(rs[i:])))
				}
				end++
			}
			if end >= len(rs) {
				return append(problems, fmt.Sprintf("%q: unterminated quote", string(rs[i:])))
			}
			w.text.WriteString(string(rs[i+1 : end]))
			i = end
		default:
			w.text.WriteRune(r)
			w.unquoted.WriteRune(r)
		}
		w.any = true
	}
	flush()
	return problems
}

// shellOperators are the control and redirection operators an example may
// use as words of their own.
var shellOperators = []string{"|", "||", "&", "&&", ";", ">", ">>", "<", "2>", "2>&1", "&>", "|&"}

// wordProblem says what the shell would do to a word whose characters
// outside quotes are unquoted, or "" when it passes it as written.
func wordProblem(text, unquoted string) string {
	if text == unquoted && slices.Contains(shellOperators, text) {
		return ""
	}
	if i := strings.IndexAny(unquoted, "&;|<>()`"); i >= 0 {
		return fmt.Sprintf("%q: the shell cuts the command at the unquoted %q", text, unquoted[i])
	}
	if i := strings.IndexAny(unquoted, "?["); i >= 0 {
		return fmt.Sprintf("%q: the shell expands the unquoted %q as a file name pattern", text, unquoted[i])
	}
	for i := strings.IndexByte(unquoted, '*'); i >= 0; i = strings.IndexByte(unquoted, '*') {
		// *.ext is a file name pattern an example may mean; in a URL, or
		// anywhere else (Parse.*), it is not.
		if strings.Contains(text, "://") || !strings.HasPrefix(unquoted[i+1:], ".") {
			return fmt.Sprintf("%q: the shell expands the unquoted %q as a file name pattern", text, "*")
		}
		unquoted = unquoted[i+1:]
	}
	if o := strings.IndexByte(unquoted, '{'); o >= 0 && strings.Contains(unquoted[o:], ",") {
		return fmt.Sprintf("%q: the shell expands the unquoted braces into several words", text)
	}
	if strings.Contains(unquoted, "!") && unquoted != "!" {
		return fmt.Sprintf("%q: bash expands the unquoted ! from its history", text)
	}
	return ""
}

// TestShellProblems checks the shell reading itself.
func TestShellProblems(t *testing.T) {
	for line, want := range map[string]string{
		"perfscope profile -d 30s http://localhost:8080/v1/leftpad/?str=test&len=50": `the shell cuts the command at the unquoted '&'`,
		"perfscope load http://x/?a=1":                                  `expands the unquoted '?'`,
		"perfscope bench -bench Parse.* ./...":                          `expands the unquoted "*"`,
		"perfscope load 'http://x/?a=1&b=*'":                            "",
		`perfscope load "http://x/?a=1&b=*"`:                            "",
		`perfscope load http://x/\?a=1\&b=2`:                            "",
		"perfscope compare old/*.txt":                                   "",
		"perfscope load 'http://x/":                                     "unterminated quote",
		"perfscope report --format json | jq .findings > out.txt":       "",
		"perfscope serve & sleep 1 && curl http://x/ 2>&1":              "",
		"perfscope push x.txt   # token in $PERFSCOPE_TOKEN; & ?":       "",
		`perfscope profile -H "Authorization: Bearer $TOKEN" http://x/`: "",
		"perfscope history --bench Parse|Decode":                        `cuts the command at the unquoted '|'`,
		"perfscope history --bench 'Parse(Fast)?' --pkg x(y)":           `cuts the command at the unquoted '('`,
		"perfscope bench -bench [A-Z]arse":                              `expands the unquoted '['`,
		"perfscope compare {a,b}.txt":                                   "braces",
		"perfscope report --route 'GET /users/{id}' RUN":                "",
		"perfscope report --route GET\\ /users/{id} RUN":                "",
		`perfscope bench -bench "Parse!"`:                               "! in double quotes",
		"perfscope bench -bench Parse!x":                                "history",
	} {
		got := strings.Join(shellProblems(line), "; ")
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", line, got, want)
		}
	}
}
