package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// parseLine parses a command line as perfscope would, up to the flags and
// arguments of the command it names, without running the command.
func parseLine(t *testing.T, root *cobra.Command, args ...string) (*cobra.Command, error) {
	t.Helper()
	args, err := goFlagSpellings(root, args)
	if err != nil {
		return nil, err
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return cmd, cmd.ParseFlags(rest)
}

// TestGoFlagSpellings parses bench's and gate's command lines spelled as go
// test spells its flags, and as pflag does.
func TestGoFlagSpellings(t *testing.T) {
	for _, c := range []struct {
		line  string
		flags map[string]string // flag → value after parsing
		args  string            // positional arguments
	}{
		// The command line: -bench is not "-b ench".
		{"gate --base X -bench Parse .", map[string]string{"base": "X", "bench": "Parse"}, "."},
		{"gate --base X -bench=Parse .", map[string]string{"bench": "Parse"}, "."},
		{"gate -base=main -bench Parse -benchtime 10x -benchmem ./...", map[string]string{"base": "main", "bench": "Parse", "benchtime": "10x", "benchmem": "true"}, "./..."},
		{"gate --base HEAD~1 -b Parse", map[string]string{"base": "HEAD~1", "bench": "Parse"}, ""},
		{"bisect -good v1 -bad HEAD -bench Parse -benchtime=10x -threshold 0.5% ./x", map[string]string{"good": "v1", "bad": "HEAD", "bench": "Parse", "benchtime": "10x", "threshold": "0.5%"}, "./x"},
		{"bisect --good v1 --bad HEAD -b Parse -q", map[string]string{"bench": "Parse", "quiet": "true"}, ""},
		{"bench -bench Parse -count 5 -benchtime=100x -cpu 1,4 ./x", map[string]string{"bench": "Parse", "count": "5", "benchtime": "100x", "cpu": "1,4"}, "./x"},
		{"bench -bench=. -count=3 -benchmem -cpuprofile -memprofile ./x ./y", map[string]string{"bench": ".", "count": "3", "benchmem": "true", "cpuprofile": "true", "memprofile": "true"}, "./x ./y"},
		{"bench --bench Parse --count 5 --cpuprofile=true", map[string]string{"bench": "Parse", "count": "5", "cpuprofile": "true"}, ""},
		{"bench -cpuprofile=false", map[string]string{"cpuprofile": "false"}, ""},
		// Shorthands as pflag reads them.
		{"bench -b Parse -q -o out.txt", map[string]string{"bench": "Parse", "quiet": "true", "output": "out.txt"}, ""},
		{"bench -bParse -qo out.txt", map[string]string{"bench": "Parse", "quiet": "true", "output": "out.txt"}, ""},
		{"bench -qb=Parse", map[string]string{"bench": "Parse", "quiet": "true"}, ""},
		// A flag's value is never read as a flag.
		{"bench -o -count -bench -q", map[string]string{"output": "-count", "bench": "-q"}, ""},
		{"bench -b -count", map[string]string{"bench": "-count"}, ""},
		{"bench ./x -- -count", map[string]string{"count": "10"}, "./x -count"},
		// Every other command's long flags.
		{"history -bench Parse -pkg example.com/x -since=30d -changed", map[string]string{"bench": "Parse", "pkg": "example.com/x", "since": "30d", "changed": "true"}, ""},
		{"compare -ignore go -alpha=0.01 a.txt b.txt", map[string]string{"ignore": "go", "alpha": "0.01"}, "a.txt b.txt"},
		{"load -c 8 -timeout 5s -rate=100 http://x/", map[string]string{"concurrency": "8", "timeout": "5s", "rate": "100"}, "http://x/"},
	} {
		cmd, err := parseLine(t, newRootCmd(), strings.Fields(c.line)...)
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		for name, want := range c.flags {
			if got := cmd.Flags().Lookup(name).Value.String(); got != want {
				t.Errorf("%s: --%s = %q, want %q", c.line, name, got, want)
			}
		}
		if got := strings.Join(cmd.Flags().Args(), " "); got != c.args {
			t.Errorf("%s: arguments %q, want %q", c.line, got, c.args)
		}
	}
}

// TestGoFlagSpellingsRefused checks the one-line refusals: a go test flag a
// command does not take, a file name given to a switch.
func TestGoFlagSpellingsRefused(t *testing.T) {
	for line, want := range map[string]string{
		"bench -tags foo .":                 "-tags is go test's flag, which 'perfscope bench' does not take",
		"bench -run X .":                    "-run is go test's flag, which 'perfscope bench' does not take: bench runs benchmarks only",
		"bench -timeout=5m .":               "-timeout is go test's flag",
		"gate --base main -json":            "-json is go test's flag, which 'perfscope gate' does not take: use --format json",
		"gate --base main -count 5 .":       "-count is go test's flag, which 'perfscope gate' does not take: its samples per side are --rounds",
		"gate --base main -cpu 1,2 .":       "-cpu is go test's flag, which 'perfscope gate' does not take",
		"gate --base main -cpuprofile .":    "-cpuprofile is go test's flag",
		"bench -cpuprofile=cpu.out .":       `--cpuprofile is a switch and takes no value ("cpu.out" given): --cpuprofile and --memprofile are switches`,
		"bench --memprofile=mem.out .":      `--memprofile is a switch and takes no value ("mem.out" given)`,
		"load --keepalive=maybe http://x/":  `--keepalive is a switch and takes no value ("maybe" given) (see 'perfscope load --help')`,
		"history -bench Parse -count 3":     "unknown shorthand flag: 'c' in -count", // history runs no go test: pflag's own error
		"gate --base main -bench Parse -vx": "unknown shorthand flag: 'v' in -vx",
	} {
		_, err := parseLine(t, newRootCmd(), strings.Fields(line)...)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v\nwant one line saying %q", line, err, want)
		}
	}
	// A file after the switch, as "go test -cpuprofile cpu.out" has it, is
	// refused before anything is built.
	for _, line := range []string{"bench -cpuprofile cpu.out ./x", "bench --memprofile ./x mem.prof"} {
		out, code := perfCLI(t, strings.Fields(line)...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s", line, code, out)
		}
	}
}

// TestGoFlagSpellingsAmbiguous refuses a single-dash word that reads both as
// a long flag and as a cluster of shorthands, and checks that no command of
// perfscope has one.
func TestGoFlagSpellingsAmbiguous(t *testing.T) {
	root := &cobra.Command{Use: "perfscope"}
	sub := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	sub.Flags().BoolP("verbose", "v", false, "")
	sub.Flags().StringP("output", "o", "", "")
	sub.Flags().Bool("vo", false, "")
	sub.Flags().String("ov", "", "")
	root.AddCommand(sub)
	for line, want := range map[string]string{
		"x -vo out":   "-vo is ambiguous in 'perfscope x': write --vo for that flag, or -v -o for --verbose --output",
		"x -vo=out":   "-vo is ambiguous",
		"x -vv -o f":  "", // a cluster only
		"x -ov f":     "", // -o would take the rest of the word: no cluster, the flag --ov
		"x --vo -o f": "",
	} {
		_, err := parseLine(t, root, strings.Fields(line)...)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}

	for _, c := range allCommands(newRootCmd()) {
		c.InitDefaultHelpFlag()
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if len(f.Name) > 1 && cluster(c.Flags(), f.Name) != nil {
				t.Errorf("%s: -%s reads as a cluster of shorthands too: rename --%s or a shorthand", c.CommandPath(), f.Name, f.Name)
			}
		})
	}
}

// shorthands lists every command's shorthand flags. A command that gains or
// loses one must be listed here, so that TestShorthandsStillWork covers it.
var shorthands = map[string]string{
	"perfscope":                "h",
	"perfscope analyze":        "h",
	"perfscope bench":          "bhoq",
	"perfscope bisect":         "bhq",
	"perfscope compare":        "h",
	"perfscope demo":           "cdhq",
	"perfscope demo watch":     "dh",
	"perfscope escape":         "h",
	"perfscope example":        "h",
	"perfscope gate":           "bh",
	"perfscope history":        "h",
	"perfscope load":           "Hbcdhkmnqt",
	"perfscope profile":        "Hbcdhkmnqt",
	"perfscope push":           "h",
	"perfscope query":          "h",
	"perfscope query deploys":  "h",
	"perfscope query diff":     "hn",
	"perfscope query findings": "h",
	"perfscope query function": "h",
	"perfscope query leaks":    "h",
	"perfscope query merge":    "ho",
	"perfscope query targets":  "h",
	"perfscope query top":      "hn",
	"perfscope report":         "h",
	"perfscope runs":           "h",
	"perfscope runs rm":        "h",
	"perfscope scrape":         "h",
	"perfscope serve":          "h",
	"perfscope token":          "h",
	"perfscope token create":   "h",
	"perfscope token list":     "h",
	"perfscope token revoke":   "h",
	"perfscope version":        "h",
}

// TestShorthandsStillWork parses, for every command, a line using each of
// its shorthands alone and the switches clustered, and checks each flag got
// its value: Go's spellings take nothing from pflag's.
func TestShorthandsStillWork(t *testing.T) {
	values := map[string][2]string{ // flag type → value given, value read
		"bool": {"", "true"}, "int": {"7", "7"}, "int64": {"7", "7"}, "duration": {"3s", "3s"},
		"string": {"v", "v"}, "stringArray": {"A: b", "[A: b]"}, "float64": {"0.5", "0.5"},
	}
	for _, c := range allCommands(newRootCmd()) {
		c.InitDefaultHelpFlag()
		var letters []string
		byLetter := map[string]*pflag.Flag{}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Shorthand != "" {
				letters = append(letters, f.Shorthand)
				byLetter[f.Shorthand] = f
			}
		})
		slices.Sort(letters)
		if got := strings.Join(letters, ""); got != shorthands[c.CommandPath()] {
			t.Errorf("%s has shorthands %q; the test lists %q: list them in shorthands", c.CommandPath(), got, shorthands[c.CommandPath()])
		}
		if c.DisableFlagParsing {
			continue
		}
		var switches []string
		for _, l := range slices.Sorted(maps.Keys(byLetter)) {
			f := byLetter[l]
			if l == "h" {
				continue // -h shows the help
			}
			v, ok := values[f.Value.Type()]
			if !ok {
				t.Errorf("%s -%s: no test value for a %s", c.CommandPath(), l, f.Value.Type())
				continue
			}
			line := append(strings.Fields(c.CommandPath())[1:], "-"+l)
			if v[0] != "" {
				line = append(line, v[0])
			} else {
				switches = append(switches, l)
			}
			checkParsed(t, line, map[string]string{f.Name: v[1]})
			if v[0] != "" && f.Value.Type() != "stringArray" {
				// The value joined to its shorthand: "-c8".
				checkParsed(t, append(line[:len(line)-2], "-"+l+v[0]), map[string]string{f.Name: v[1]})
			}
		}
		if len(switches) > 1 {
			want := map[string]string{}
			for _, l := range switches {
				want[byLetter[l].Name] = "true"
			}
			checkParsed(t, append(strings.Fields(c.CommandPath())[1:], "-"+strings.Join(switches, "")), want)
		}
	}

	// load's flags as ab and wrk users type them.
	checkParsed(t, []string{"load", "-c", "8", "-n", "100", "-d", "2s", "-H", "A: b", "-m", "POST", "-b", "body.json", "-t", "2", "-kq", "http://x/"},
		map[string]string{"concurrency": "8", "requests": "100", "duration": "2s", "header": "[A: b]", "method": "POST", "body": "body.json", "threads": "2", "keepalive": "true", "quiet": "true"})
	checkParsed(t, []string{"load", "-c8", "-n100", "-qk", "-b", "-bench", "http://x/"},
		map[string]string{"concurrency": "8", "requests": "100", "quiet": "true", "keepalive": "true", "body": "-bench"})
	checkParsed(t, []string{"demo", "-c", "4", "-d", "1s", "-q"}, map[string]string{"concurrency": "4", "duration": "1s", "quiet": "true"})
}

// checkParsed parses line and checks the flags' values.
func checkParsed(t *testing.T, line []string, want map[string]string) {
	t.Helper()
	cmd, err := parseLine(t, newRootCmd(), line...)
	if err != nil {
		t.Errorf("%s: %v", strings.Join(line, " "), err)
		return
	}
	for name, v := range want {
		if got := cmd.Flags().Lookup(name).Value.String(); got != v {
			t.Errorf("%s: --%s = %q, want %q", strings.Join(line, " "), name, got, v)
		}
	}
}

// allCommands returns root and every command under it.
func allCommands(root *cobra.Command) []*cobra.Command {
	all := []*cobra.Command{root}
	for _, c := range root.Commands() {
		all = append(all, allCommands(c)...)
	}
	return all
}
