package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"
)

// Caps of benchmark text read from outside (an upload to the dashboard),
// besides its size in bytes, which the caller bounds. The text is read as a
// stream and refused at the line where it passes a cap, so reading it costs
// no more than the cap.
const (
	// MaxLine bounds a line, in bytes. A result line is a few hundred;
	// benchfmt's reader takes no line of 64 KiB.
	MaxLine = 32 << 10
	// MaxResults bounds the result lines: 10,000 benchmarks of 10
	// samples, or 100 of 1,000.
	MaxResults = 100_000
	// MaxMetrics bounds the distinct metrics, a benchmark's unit in
	// its package (BenchmarkX's sec/op, B/op and allocs/op are three):
	// storing a metric the store has not seen costs a few statements:
	// PostgreSQL took 27 s for 50,000 new ones on a quiet 2-core machine,
	// and 38 s for 10,000 on the same machine at a load average of 11,
	// within the request's minute.
	MaxMetrics = 10_000
	// MaxConfig bounds the configuration in effect at a result line
	// (the "key: value" lines before it), in bytes. It is compared at
	// every result line; 'go test' writes a few hundred bytes of it.
	MaxConfig = 16 << 10
	// MaxMemory bounds the memory the results read take until they
	// are stored, by the estimate of keeper: lines, measurements,
	// configuration and the metrics' names. A result line of 'go test
	// -bench -benchmem' output counts about 400 bytes, so MaxResults
	// of them fit twice; it stops lines of thousands of measurements, or
	// a configuration changing at every line.
	MaxMemory = 96 << 20
	// MaxWarnings bounds the malformed lines named one by one; one more
	// warning counts the others.
	MaxWarnings = 100
)

// An InputError is why ReadBounded refused benchmark text: it is not
// benchmark text or could not be read whole, or with Cap, it passes a cap.
// Err is the reason, wrapping the reader's error when reading failed.
type InputError struct {
	Cap bool
	Err error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// ReadBounded reads benchmark text from outside (the body of an upload)
// within the caps, as Scan reads it, leaving out unit metadata lines. It
// refuses text that is not benchmark text, could not be read whole or
// passes a cap with an *InputError.
func ReadBounded(body io.Reader) (*Results, error) {
	in := &boundedLines{br: bufio.NewReaderSize(body, MaxLine+1)}
	keep := keeper{metrics: make(map[string]struct{})}
	err := Scan(in, "upload", func(rec benchfmt.Record) {
		if in.over == nil {
			in.over = keep.add(rec)
		}
	})
	switch {
	case in.over != nil:
		return nil, in.over
	case in.err != nil && in.err != io.EOF:
		return nil, in.err
	case err != nil:
		return nil, err
	}
	if keep.dropped > 0 {
		keep.res.Warnings = append(keep.res.Warnings, fmt.Errorf("and %d more malformed lines", keep.dropped))
	}
	return &keep.res, nil
}

// boundedLines is benchmark text as benchfmt's reader reads it: whole lines, each checked to be text no longer than MaxLine, so
// that what the reader would fail on with a bare "token too long" or
// "unexpected EOF" is refused first with its line and reason.
type boundedLines struct {
	br   *bufio.Reader
	line int    // lines read so far
	rest []byte // checked bytes not yet read
	err  error  // why reading stopped: io.EOF at the end of the body
	over error  // a cap the results passed, which stops reading
}

func (b *boundedLines) Read(p []byte) (int, error) {
	for len(b.rest) == 0 {
		if b.over != nil {
			return 0, b.over
		}
		if b.err != nil {
			return 0, b.err
		}
		b.rest, b.err = b.next()
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

// next reads and checks one line.
func (b *boundedLines) next() ([]byte, error) {
	line, err := b.br.ReadSlice('\n')
	n := b.line + 1
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, &InputError{Err: fmt.Errorf("line %d is longer than %d bytes, the most a line of Go benchmark format may have here: is the body 'go test -bench' output?", n, MaxLine)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &InputError{Err: fmt.Errorf("the body ended at line %d before its announced end: the upload was cut short, send it again", n)}
	case err != nil && err != io.EOF:
		return nil, &InputError{Err: fmt.Errorf("read the body at line %d: %w", n, err)}
	}
	if len(line) == 0 {
		return nil, err
	}
	b.line = n
	if bytes.IndexByte(line, 0) >= 0 {
		return nil, &InputError{Err: fmt.Errorf("line %d has a NUL byte: the body is binary, not Go benchmark format ('go test -bench' output)", n)}
	}
	if !utf8.Valid(line) {
		return nil, &InputError{Err: fmt.Errorf("line %d is not UTF-8 text: send Go benchmark format ('go test -bench' output)", n)}
	}
	return line, err
}

// Estimates of the memory a kept result takes, in bytes: the Result and
// its place in the list, each measurement, and per configuration key the
// index that reading a key builds in each result (benchfmt's configPos).
const (
	keptResultBytes = 160
	keptValueBytes  = 64
	keptConfigBytes = 64
)

// keeper keeps the results as they are read, within the
// caps on results, metrics and memory.
type keeper struct {
	res     Results
	dropped int // malformed lines beyond MaxWarnings
	// metrics are the distinct package, name and unit triples seen.
	metrics map[string]struct{}
	key     []byte
	memory  int
	// config is the configuration of the last kept result, which the
	// next ones share while the file's configuration lines stay the same:
	// a copy per result would let a few long lines take memory as many
	// times as there are results.
	config []benchfmt.Config
}

// add keeps rec or returns the cap it would pass. Unit metadata lines are
// left out: the store keeps none.
func (k *keeper) add(rec benchfmt.Record) error {
	switch rec := rec.(type) {
	case *benchfmt.SyntaxError:
		if len(k.res.Warnings) < MaxWarnings {
			k.res.Warnings = append(k.res.Warnings, rec)
		} else {
			k.dropped++
		}
	case *benchfmt.Result:
		return k.keep(rec)
	}
	return nil
}

func (k *keeper) keep(r *benchfmt.Result) error {
	_, line := r.Pos()
	split := "split the file into several uploads of the same commit, whose samples add up"
	if len(k.res.Results) == MaxResults {
		return &InputError{Cap: true, Err: fmt.Errorf("more than %d result lines (line %d is one more): %s", MaxResults, line, split)}
	}
	config := k.config
	if !sameConfig(config, r.Config) {
		size := 0
		for _, c := range r.Config {
			size += len(c.Key) + len(c.Value)
		}
		if size > MaxConfig {
			return &InputError{Cap: true, Err: fmt.Errorf("the configuration lines in effect at line %d take %d bytes, more than the %d a result may have", line, size, MaxConfig)}
		}
		config = make([]benchfmt.Config, len(r.Config))
		for i, c := range r.Config {
			config[i] = benchfmt.Config{Key: c.Key, Value: bytes.Clone(c.Value), File: c.File}
		}
		k.memory += size + keptConfigBytes*len(config)
	}
	k.memory += keptResultBytes + len(r.Name) + keptValueBytes*len(r.Values) + keptConfigBytes*len(r.Config)
	var pkg []byte
	if i, ok := r.ConfigIndex("pkg"); ok {
		pkg = r.Config[i].Value
	}
	for _, v := range r.Values {
		k.key = append(append(append(append(append(k.key[:0], pkg...), 0), r.Name...), 0), v.Unit...)
		if _, ok := k.metrics[string(k.key)]; ok {
			continue
		}
		if len(k.metrics) == MaxMetrics {
			return &InputError{Cap: true, Err: fmt.Errorf("more than %d distinct metrics (a benchmark's unit; line %d has one more): %s", MaxMetrics, line, split)}
		}
		k.metrics[string(k.key)] = struct{}{}
		k.memory += 2 * len(k.key) // the name here and in the store
	}
	if k.memory > MaxMemory {
		return &InputError{Cap: true, Err: fmt.Errorf("the results up to line %d take more than the %d MiB of memory an upload may: %s", line, MaxMemory>>20, split)}
	}
	k.config = config
	k.res.Results = append(k.res.Results, &benchfmt.Result{
		Config: config, Name: bytes.Clone(r.Name), Iters: r.Iters, Values: slices.Clone(r.Values),
	})
	return nil
}

// sameConfig reports whether two configurations have the same keys and
// values in the same order.
func sameConfig(a, b []benchfmt.Config) bool {
	return slices.EqualFunc(a, b, func(x, y benchfmt.Config) bool {
		return x.Key == y.Key && x.File == y.File && bytes.Equal(x.Value, y.Value)
	})
}
