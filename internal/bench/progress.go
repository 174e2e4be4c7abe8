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
}

// progressWriter passes "go test" output through and reports each
// benchmark as it starts (the testing package prints the name, then a tab,
// before measuring) and as it ends (the rest of the line).
type progressWriter struct {
	w       io.Writer
	line    []byte
	started bool
	rounds  map[string]int
	base    Progress
	report  func(Progress)
}

func newProgressWriter(w io.Writer, base Progress, report func(Progress)) *progressWriter {
	return &progressWriter{w: w, base: base, report: report, rounds: make(map[string]int)}
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
			p.report(ev)
		}
	}
	p.line, p.started = p.line[:0], false
}
