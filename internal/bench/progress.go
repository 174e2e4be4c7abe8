package bench

import (
	"bytes"
	"io"
	"strings"
)

// A Progress reports what a running benchmark job is doing, for a person
// watching a terminal.
type Progress struct {
	// Package is the import path being benchmarked.
	Package string
	// PackageIndex and Packages place it in the whole job (1-based).
	PackageIndex, Packages int
	// Benchmark is the full name being measured, as printed by
	// "go test" ("BenchmarkPad/n=10-2").
	Benchmark string
	// Round counts the runs of Benchmark so far, this one included;
	// Rounds is how many there will be (-count, or the gate's rounds).
	Round, Rounds int
	// Done is false when the measurement starts and true when its
	// result line has been read; Line is then that line.
	Done bool
	Line string
	// Side is "base" or "head" for the gate's interleaved runs.
	Side string
	// Benchmarks counts the top-level benchmarks of the whole job and
	// BenchmarkIndex places Benchmark's top-level benchmark among them
	// (1-based); both are 0 when the job was not listed beforehand
	// (Options.Progress lists it).
	Benchmarks, BenchmarkIndex int
}

// progressWriter passes "go test" output through and reports each
// benchmark as it starts (the testing package prints the name, then a tab,
// before measuring) and as it ends (the rest of the line).
type progressWriter struct {
	w       io.Writer
	line    []byte
	started bool
	rounds  map[string]int
	// order numbers the top-level benchmarks in the order they start,
	// from base.BenchmarkIndex.
	order  map[string]int
	base   Progress
	report func(Progress)
}

func newProgressWriter(w io.Writer, base Progress, report func(Progress)) *progressWriter {
	return &progressWriter{w: w, base: base, report: report, rounds: make(map[string]int), order: make(map[string]int)}
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if p.report == nil {
		return n, err
	}
	for _, c := range b[:n] {
		if c == '\n' {
			p.endLine()
			continue
		}
		p.line = append(p.line, c)
		if c == '\t' && !p.started && bytes.HasPrefix(p.line, []byte("Benchmark")) {
			p.started = true
			name := strings.TrimSpace(string(p.line))
			p.rounds[name]++
			ev := p.base
			ev.Benchmark, ev.Round = name, p.rounds[name]
			ev.BenchmarkIndex = p.index(name)
			p.report(ev)
		}
	}
	return n, err
}

func (p *progressWriter) endLine() {
	if p.started {
		f := strings.Fields(string(p.line))
		if len(f) > 0 {
			ev := p.base
			ev.Benchmark, ev.Round, ev.Done, ev.Line = f[0], p.rounds[f[0]], true, string(p.line)
			ev.BenchmarkIndex = p.index(f[0])
			p.report(ev)
		}
	}
	p.line, p.started = p.line[:0], false
}

// index returns the 1-based place in the job of the top-level benchmark of
// name ("BenchmarkPad/n=10-2" belongs to BenchmarkPad), or 0 when the job's
// benchmarks were not counted.
func (p *progressWriter) index(name string) int {
	if p.base.Benchmarks == 0 {
		return 0
	}
	// The function's name is an identifier: it ends where a sub-benchmark
	// ("/n=10") or the GOMAXPROCS suffix ("-2") begins.
	top := name
	if i := strings.IndexAny(name, "/-"); i > 0 {
		top = name[:i]
	}
	i, ok := p.order[top]
	if !ok {
		i = p.base.BenchmarkIndex + len(p.order)
		p.order[top] = i
	}
	return min(i, p.base.Benchmarks)
}

// Fraction is the share of the job's measurements finished when p was
// reported, from 0 to 1, counting each top-level benchmark as an equal
// part and each of its rounds as an equal part of that; it is 0 when the
// job's benchmarks were not counted (Benchmarks is 0).
func (p Progress) Fraction() float64 {
	if p.Benchmarks == 0 || p.BenchmarkIndex == 0 || p.Rounds == 0 {
		return 0
	}
	rounds := p.Round - 1
	if p.Done {
		rounds = p.Round
	}
	f := (float64(p.BenchmarkIndex-1) + float64(min(rounds, p.Rounds))/float64(p.Rounds)) / float64(p.Benchmarks)
	return min(max(f, 0), 1)
}
