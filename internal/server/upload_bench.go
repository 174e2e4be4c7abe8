package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/gitstate"
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
	run, err := dashboard.BenchRun(r.URL.Query(), parsed)
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
	s.dash.BenchChanged()
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
