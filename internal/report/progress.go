package report

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

// The lines commands print while they work, and the short answers of
// commands that change something, so that their numbers are written here
// like every other number the tool shows.

// LoadProgress describes a running load beside its progress bar.
func LoadProgress(label string, rps float64, errors int64) string {
	return fmt.Sprintf("%s %9.0f req/s %7d errors", label, rps, errors)
}

// BenchProgress is the status line of a benchmark job: where it is, and
// when the benchmarks were counted beforehand, benchmark k of n with the
// time elapsed and, when left is positive, the time estimated to be left.
func BenchProgress(p bench.Progress, elapsed, left time.Duration) string {
	state := "running"
	if p.Done {
		state = "done   "
	}
	side := ""
	if p.Side != "" {
		side = p.Side + " "
	}
	overall := ""
	if p.Benchmarks > 0 {
		overall = fmt.Sprintf("benchmark %d of %d, %s elapsed", p.BenchmarkIndex, p.Benchmarks, units.Seconds(elapsed.Seconds()))
		if left > 0 {
			overall += ", about " + units.Seconds(left.Seconds()) + " left"
		}
		overall += "  "
	}
	return fmt.Sprintf("%s[%d/%d] %s  %s%s  %s round %d/%d", overall, p.PackageIndex, p.Packages, p.Package, side, state, p.Benchmark, p.Round, p.Rounds)
}

// CountingProgress reports that a benchmark's instructions are being
// counted; side names the tree ("base", "head") when there are two.
func CountingProgress(side string, done, total int, name string) string {
	if side != "" {
		return fmt.Sprintf("counting instructions of the %s (%d/%d): Benchmark%s", side, done+1, total, name)
	}
	return fmt.Sprintf("counting instructions (%d/%d): Benchmark%s", done+1, total, name)
}

// BuildingTests says that the tests of packages are being built: the
// package's import path when there is one, else how many.
func BuildingTests(packages []string) string {
	if len(packages) == 1 {
		return "building the tests of " + packages[0]
	}
	return "building the tests of " + strconv.Itoa(len(packages)) + " packages"
}

// GateStart says what a gate is about to do.
func GateStart(measure, base string, rounds int) string {
	return fmt.Sprintf("gate: measuring %s; building base %s and head, then %d interleaved rounds", measure, base, rounds)
}

// GateExtending says that a gate measures more rounds to decide.
func GateExtending(done, more int) string {
	return fmt.Sprintf("gate: too noisy to decide after %d rounds; measuring %d more", done, more)
}

// TokenCreated and TokenRevoked confirm a change to the tokens of the
// store described by where.
func TokenCreated(t store.Token, where string) string {
	return fmt.Sprintf("created token %d (%s) in %s; it is shown only now", t.ID, t.Name, where)
}

// TokenRevoked: see TokenCreated.
func TokenRevoked(t store.Token, where string) string {
	return fmt.Sprintf("revoked token %d (%s) in %s", t.ID, t.Name, where)
}

// WriteTokens lists API tokens: ID, name and creation time.
func WriteTokens(w io.Writer, tokens []store.Token) error {
	t := &table{header: []string{"ID", "NAME", "CREATED"}, right: []bool{true}}
	for _, tok := range tokens {
		t.add(strconv.FormatInt(tok.ID, 10), tok.Name, tok.Created.Local().Format("2006-01-02 15:04"))
	}
	d := &doc{}
	d.add(section{blocks: []block{{table: t}}})
	return renderDoc(w, Text, d)
}
