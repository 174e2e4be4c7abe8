package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/store"
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
//	subject      first line of the commit's message (optional; shown beside the hash)
//	author       the commit author's name (optional)
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
	parsed, err := bench.ReadBounded(body)
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
	s.metrics.Upload("bench", "ok", body.n)
	s.cache.Invalidate()
	res := api.BenchUpload{
		ID: id, Commit: run.Commit, Branch: run.Branch, Dirty: run.Dirty, Machine: run.Machine.Hostname,
		Subject: gitstate.OneLine(run.Subject, gitstate.MaxSubject), Author: gitstate.OneLine(run.Author, gitstate.MaxAuthor),
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
		{"subject", p.Subject, "", &run.Subject},
		{"author", p.Author, "", &run.Author},
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
	s.metrics.Upload(kind, outcome, 0)
	s.fail(w, r, code, err)
}

// errConflict marks an upload of something the server already has.
var errConflict = errors.New("conflict")
