package pprofweb

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
)

// Source names of the fetched profiles; they never reach a file system or
// the network, fetcher answers them.
const (
	headSource = "perfscope-head"
	baseSource = "perfscope-base"
)

// fetcher hands the driver profiles already in memory.
type fetcher map[string]*profile.Profile

func (f fetcher) Fetch(src string, _, _ time.Duration) (*profile.Profile, string, error) {
	p, ok := f[src]
	if !ok || p == nil {
		return nil, "", fmt.Errorf("no profile %q", src)
	}
	// The driver edits what it fetches; the source stays "" so it is
	// treated as local and never symbolized over the network.
	return p.Copy(), "", nil
}

// quietUI keeps the driver's messages out of the server's output,
// remembering the last error for the error message.
type quietUI struct {
	mu   sync.Mutex
	errs []string
}

func (u *quietUI) ReadLine(string) (string, error) { return "", errors.New("no terminal") }
func (u *quietUI) Print(...any)                    {}
func (u *quietUI) PrintErr(args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.errs = append(u.errs, strings.TrimSpace(fmt.Sprint(args...)))
	if len(u.errs) > 5 {
		u.errs = u.errs[1:]
	}
}
func (u *quietUI) IsTerminal() bool                    { return false }
func (u *quietUI) WantBrowser() bool                   { return false }
func (u *quietUI) SetAutoComplete(func(string) string) {}

func (u *quietUI) lastErr() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.errs) == 0 {
		return ""
	}
	return ": " + u.errs[len(u.errs)-1]
}

// flags gives the driver a fixed command line.
type flags struct {
	fs    *flag.FlagSet
	args  []string
	extra []string
}

func newFlags(args []string) *flags {
	fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
	fs.SetOutput(discard{})
	return &flags{fs: fs, args: args}
}

func (f *flags) Bool(name string, def bool, usage string) *bool {
	return f.fs.Bool(name, def, usage)
}
func (f *flags) Int(name string, def int, usage string) *int { return f.fs.Int(name, def, usage) }
func (f *flags) Float64(name string, def float64, usage string) *float64 {
	return f.fs.Float64(name, def, usage)
}
func (f *flags) String(name, def, usage string) *string { return f.fs.String(name, def, usage) }

func (f *flags) StringList(name, def, usage string) *[]*string {
	l := &stringList{}
	if def != "" {
		l.vals = []*string{&def}
	}
	f.fs.Var(l, name, usage)
	return &l.vals
}

func (f *flags) ExtraUsage() string      { return strings.Join(f.extra, "\n") }
func (f *flags) AddExtraUsage(eu string) { f.extra = append(f.extra, eu) }
func (f *flags) Parse(usage func()) []string {
	f.fs.Usage = usage
	if err := f.fs.Parse(f.args); err != nil {
		usage()
		return nil
	}
	return f.fs.Args()
}

// stringList is a repeatable string flag.
type stringList struct{ vals []*string }

func (l *stringList) String() string { return "" }
func (l *stringList) Set(v string) error {
	l.vals = append(l.vals, &v)
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
