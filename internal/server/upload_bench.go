package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/server/api"
	"github.com/perfscope/perfscope/internal/store"
)

// Caps of one benchmark upload, besides its size in bytes (--max-upload).
// The body is read as a stream and refused at the line where it passes a
// cap, before anything is stored, so a request over a cap costs the server
// no more than the cap.
const (
	// maxBenchLine bounds a line, in bytes. A result line is a few hundred;
	// benchfmt's reader takes no line of 64 KiB.
	maxBenchLine = 32 << 10
	// maxBenchResults bounds the result lines: 10,000 benchmarks of 10
	// samples, or 100 of 1,000.
	maxBenchResults = 100_000
	// maxBenchMetrics bounds the distinct metrics, a benchmark's unit in
	// its package (BenchmarkX's sec/op, B/op and allocs/op are three):
	// storing a metric the store has not seen costs a few statements:
	// PostgreSQL took 27 s for 50,000 new ones on a quiet 2-core machine,
	// and 38 s for 10,000 on the same machine at a load average of 11,
	// within the request's minute.
	maxBenchMetrics = 10_000
	// maxBenchConfig bounds the configuration in effect at a result line
	// (the "key: value" lines before it), in bytes. It is compared at
	// every result line; 'go test' writes a few hundred bytes of it.
	maxBenchConfig = 16 << 10
	// maxBenchMemory bounds the memory the results read take until they
	// are stored, by the estimate of benchKeeper: lines, measurements,
	// configuration and the metrics' names. A result line of 'go test
	// -bench -benchmem' output counts about 400 bytes, so maxBenchResults
	// of them fit twice; it stops lines of thousands of measurements, or
	// a configuration changing at every line.
	maxBenchMemory = 96 << 20
	// maxBenchWarnings bounds the malformed lines the answer names one by
	// one; it counts the others.
	maxBenchWarnings = 100
)

// handleUploadBench stores one run of benchmarks: POST /api/v1/bench with a
// body in Go benchmark format ("go test -bench" output or a 'perfscope bench'
// file, as UTF-8 text) and a token. It answers 201 with an api.BenchUpload
// once the run is committed to the store. A client's mistake gets one line
// saying what was wrong, and nothing is stored:
//
//	400  a body without results, bad parameters, a body cut short or
//	     unreadable, a binary body (a NUL byte, or not UTF-8), a line
//	     over 32 KiB (named with its number)
//	413  a body over the upload limit (--max-upload), over 100,000 result
//	     lines, over 10,000 distinct metrics (package, benchmark, unit),
//	     configuration lines over 16 KiB in effect at a result, or
//	     results taking over 96 MiB of memory; split such a file into
//	     several uploads of the same commit, whose samples add up
//
// Query parameters (each overrides the file's configuration line of the same
// meaning, where it has one):
//
//	commit       the commit hash the benchmarks ran on (required, or a "commit:" line)
//	branch       its branch ("branch:" line)
//	dirty        true when the work tree had uncommitted changes ("dirty:" line)
//	commit_time  committer date, RFC 3339 or Unix seconds; orders commits
//	time         when the benchmarks ran, RFC 3339 or Unix seconds; default now
//	machine      host name of the machine that ran them; results of different machines never mix
//	goos, goarch, cpu  the machine's platform ("goos:", "goarch:", "cpu:" lines)
//	go           Go version ("go:" line)
//	package      import path for results without a "pkg:" line
func (s *Server) handleUploadBench(w http.ResponseWriter, r *http.Request) {
	body, ok := s.limitBody(w, r, "bench")
	if !ok {
		return
	}
	parsed, err := readBenchUpload(body)
	if err != nil {
		s.uploadFailed(w, r, "bench", err)
		return
	}
	run, err := benchRunOf(r.URL.Query(), parsed)
	if err != nil {
		s.uploadFailed(w, r, "bench", err)
		return
	}
	id, err := s.cfg.Store.SaveBenchRun(r.Context(), run)
	if err != nil {
		s.uploadFailed(w, r, "bench", err)
		return
	}
	s.metrics.upload("bench", "ok", body.n)
	s.cache.invalidate()
	res := api.BenchUpload{
		ID: id, Commit: run.Commit, Branch: run.Branch, Dirty: run.Dirty, Machine: run.Machine.Hostname,
		Results: len(run.Results),
	}
	q := url.Values{}
	for k, v := range map[string]string{"branch": run.Branch, "machine": run.Machine.Hostname} {
		if v != "" {
			q.Set(k, v)
		}
	}
	res.URL = "/benchmarks?" + q.Encode()
	res.Benchmarks = parsed.Benchmarks()
	for _, warning := range parsed.Warnings {
		res.Warnings = append(res.Warnings, warning.Error())
	}
	writeJSON(w, http.StatusCreated, res)
}

// readBenchUpload reads the body of a benchmark upload within the caps.
// Its errors are the client's: 400 for a body that is not benchmark text
// or could not be read whole, 413 over a cap (a *http.MaxBytesError over
// the size limit).
func readBenchUpload(body io.Reader) (*bench.Results, error) {
	in := &benchLines{br: bufio.NewReaderSize(body, maxBenchLine+1)}
	keep := benchKeeper{metrics: make(map[string]struct{})}
	err := bench.Scan(in, "upload", func(rec benchfmt.Record) {
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

// benchLines is the body of a benchmark upload as benchfmt's reader reads
// it: whole lines, each checked to be text no longer than maxBenchLine, so
// that what the reader would fail on with a bare "token too long" or
// "unexpected EOF" is refused first with its line and reason.
type benchLines struct {
	br   *bufio.Reader
	line int    // lines read so far
	rest []byte // checked bytes not yet read
	err  error  // why reading stopped: io.EOF at the end of the body
	over error  // a cap the results passed, which stops reading
}

func (b *benchLines) Read(p []byte) (int, error) {
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
func (b *benchLines) next() ([]byte, error) {
	line, err := b.br.ReadSlice('\n')
	n := b.line + 1
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, badRequest(fmt.Sprintf("line %d is longer than %d bytes, the most a line of Go benchmark format may have here: is the body 'go test -bench' output?", n, maxBenchLine))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, badRequest(fmt.Sprintf("the body ended at line %d before its announced end: the upload was cut short, send it again", n))
	case err != nil && err != io.EOF:
		return nil, uploadReadError(fmt.Sprintf("read the body at line %d", n), err)
	}
	if len(line) == 0 {
		return nil, err
	}
	b.line = n
	if bytes.IndexByte(line, 0) >= 0 {
		return nil, badRequest(fmt.Sprintf("line %d has a NUL byte: the body is binary, not Go benchmark format ('go test -bench' output)", n))
	}
	if !utf8.Valid(line) {
		return nil, badRequest(fmt.Sprintf("line %d is not UTF-8 text: send Go benchmark format ('go test -bench' output)", n))
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

// benchKeeper keeps the results of an upload as they are read, within the
// caps on results, metrics and memory.
type benchKeeper struct {
	res     bench.Results
	dropped int // malformed lines beyond maxBenchWarnings
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
func (k *benchKeeper) add(rec benchfmt.Record) error {
	switch rec := rec.(type) {
	case *benchfmt.SyntaxError:
		if len(k.res.Warnings) < maxBenchWarnings {
			k.res.Warnings = append(k.res.Warnings, rec)
		} else {
			k.dropped++
		}
	case *benchfmt.Result:
		return k.keep(rec)
	}
	return nil
}

func (k *benchKeeper) keep(r *benchfmt.Result) error {
	_, line := r.Pos()
	split := "split the file into several uploads of the same commit, whose samples add up"
	if len(k.res.Results) == maxBenchResults {
		return tooLarge(fmt.Sprintf("more than %d result lines (line %d is one more): %s", maxBenchResults, line, split))
	}
	config := k.config
	if !sameConfig(config, r.Config) {
		size := 0
		for _, c := range r.Config {
			size += len(c.Key) + len(c.Value)
		}
		if size > maxBenchConfig {
			return tooLarge(fmt.Sprintf("the configuration lines in effect at line %d take %d bytes, more than the %d a result may have", line, size, maxBenchConfig))
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
		if len(k.metrics) == maxBenchMetrics {
			return tooLarge(fmt.Sprintf("more than %d distinct metrics (a benchmark's unit; line %d has one more): %s", maxBenchMetrics, line, split))
		}
		k.metrics[string(k.key)] = struct{}{}
		k.memory += 2 * len(k.key) // the name here and in the store
	}
	if k.memory > maxBenchMemory {
		return tooLarge(fmt.Sprintf("the results up to line %d take more than the %d MiB of memory an upload may: %s", line, maxBenchMemory>>20, split))
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

// benchRunOf builds the run to store from the query parameters and the
// parsed file. Errors are the client's.
func benchRunOf(q url.Values, parsed *bench.Results) (store.BenchRun, error) {
	if len(parsed.Results) == 0 {
		msg := "no benchmark results in the body: send Go benchmark format ('go test -bench' output, lines such as 'BenchmarkX-8  1000  123 ns/op')"
		if len(parsed.Warnings) > 0 {
			msg += "; first malformed line: " + parsed.Warnings[0].Error()
		}
		return store.BenchRun{}, badRequest(msg)
	}
	// The file's own configuration, where every result agrees on it.
	conf := func(key string) (string, error) {
		v := parsed.Results[0].GetConfig(key)
		for _, r := range parsed.Results[1:] {
			if r.GetConfig(key) != v {
				return "", badRequest(fmt.Sprintf("the results disagree on %q (%q and %q): upload one file per %s", key, v, r.GetConfig(key), key))
			}
		}
		return v, nil
	}
	pick := func(v, key string) (string, error) {
		if v != "" || key == "" {
			return v, nil
		}
		return conf(key)
	}
	p := api.ParseBenchParams(q)
	var run store.BenchRun
	var err error
	fields := []struct {
		param, value, key string
		dst               *string
	}{
		{"commit", p.Commit, "commit", &run.Commit},
		{"branch", p.Branch, "branch", &run.Branch},
		{"machine", p.Machine, "", &run.Machine.Hostname},
		{"goos", p.GOOS, "goos", &run.Machine.GOOS},
		{"goarch", p.GOARCH, "goarch", &run.Machine.GOARCH},
		{"cpu", p.CPU, "cpu", &run.Machine.CPU},
		{"go", p.Go, "go", &run.GoVersion},
		{"package", p.Package, "", &run.Package},
	}
	for _, f := range fields {
		if *f.dst, err = pick(f.value, f.key); err != nil {
			return run, err
		}
		if len(*f.dst) > 512 {
			return run, badRequest(fmt.Sprintf("%s is longer than 512 characters", f.param))
		}
	}
	if run.Commit == "" {
		return run, badRequest("no commit: pass ?commit=HASH or upload a file with a 'commit:' line (as 'perfscope bench' writes)")
	}
	if strings.ContainsAny(run.Commit, " \t\n/") {
		return run, badRequest(fmt.Sprintf("commit %q: want a hash, without spaces or slashes", run.Commit))
	}
	dirty, err := pick(p.Dirty, "dirty")
	if err != nil {
		return run, err
	}
	if dirty != "" {
		if run.Dirty, err = strconv.ParseBool(dirty); err != nil {
			return run, badRequest(fmt.Sprintf("dirty %q: want true or false", dirty))
		}
	}
	if run.CommitTime, err = parseTimeParam("commit_time", p.CommitTime); err != nil {
		return run, err
	}
	if run.Time, err = parseTimeParam("time", p.Time); err != nil {
		return run, err
	}
	run.Results = parsed.Results
	return run, nil
}

// parseTimeParam reads a time given as RFC 3339 or Unix seconds; absent is
// the zero time.
func parseTimeParam(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if sec, err := strconv.ParseInt(v, 10, 64); err == nil && sec > 0 {
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Time{}, badRequest(fmt.Sprintf("%s %q: want RFC 3339 (2025-03-01T12:00:00Z) or Unix seconds", name, v))
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// limitBody bounds the request body by the upload limit, refusing at once
// a body that declares a larger length.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request, kind string) (*countingReader, bool) {
	if r.ContentLength > s.cfg.MaxUpload {
		s.uploadFailed(w, r, kind, &http.MaxBytesError{Limit: s.cfg.MaxUpload})
		return nil, false
	}
	return &countingReader{r: http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload)}, true
}

// uploadFailed answers a failed upload: 413 over the size limit, 400 for
// what the client sent, 409 for a duplicate, 500 otherwise.
func (s *Server) uploadFailed(w http.ResponseWriter, r *http.Request, kind string, err error) {
	var tooLarge *http.MaxBytesError
	code, outcome := statusOf(err), "error"
	switch {
	case errors.As(err, &tooLarge):
		code, outcome = http.StatusRequestEntityTooLarge, "too_large"
		err = fmt.Errorf("the upload is larger than the server's limit of %d bytes (perfscope serve --max-upload)", tooLarge.Limit)
	case errors.Is(err, errConflict):
		code, outcome = http.StatusConflict, "conflict"
	case code == http.StatusRequestEntityTooLarge:
		outcome = "too_large"
	case code == http.StatusBadRequest:
		outcome = "bad_request"
	}
	s.metrics.upload(kind, outcome, 0)
	s.fail(w, r, code, err)
}

// errConflict marks an upload of something the server already has.
var errConflict = errors.New("conflict")
