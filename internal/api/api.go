// Package api holds the types of perfscope's HTTP API: the parameters of
// uploads and the JSON the server answers with. The server and its client
// both import it, so a field renamed on one side is renamed on the other.
//
// It holds data only; how uploads are stored and sent is the server's and
// the client's business.
package api

import (
	"net/url"
	"strings"
)

// Endpoints the client calls.
const (
	// BenchPath takes Go benchmark output: POST, query BenchParams.
	BenchPath = "/api/v1/bench"
	// RunsPath takes a run directory: POST, multipart/form-data or tar.gz.
	RunsPath = "/api/v1/runs"
)

// BenchParams are the query parameters of a benchmark upload. Each
// overrides the configuration line of the same meaning in the uploaded
// file, where it has one; empty means "not given".
type BenchParams struct {
	Commit     string // the commit hash the benchmarks ran on ("commit:" line)
	Branch     string // its branch ("branch:" line)
	Dirty      string // "true" when the work tree had uncommitted changes ("dirty:" line)
	CommitTime string // committer date, RFC 3339 or Unix seconds; orders commits
	Subject    string // first line of the commit's message; optional
	Author     string // the commit author's name; optional
	Time       string // when the benchmarks ran, RFC 3339 or Unix seconds; default now
	Machine    string // host name of the machine that ran them
	GOOS       string // "goos:" line
	GOARCH     string // "goarch:" line
	CPU        string // "cpu:" line
	Go         string // Go version ("go:" line)
	Package    string // import path for results without a "pkg:" line
}

// A param is one query parameter's name and the field holding it.
type param struct {
	name string
	v    *string
}

// fields pairs each parameter's name with its field, in one place for
// both directions.
func (p *BenchParams) fields() []param {
	return []param{
		{"commit", &p.Commit}, {"branch", &p.Branch}, {"dirty", &p.Dirty},
		{"commit_time", &p.CommitTime}, {"subject", &p.Subject}, {"author", &p.Author}, {"time", &p.Time}, {"machine", &p.Machine},
		{"goos", &p.GOOS}, {"goarch", &p.GOARCH}, {"cpu", &p.CPU}, {"go", &p.Go},
		{"package", &p.Package},
	}
}

// Values returns the parameters that are set as a query.
func (p BenchParams) Values() url.Values {
	q := url.Values{}
	for _, f := range p.fields() {
		if *f.v != "" {
			q.Set(f.name, *f.v)
		}
	}
	return q
}

// ParseBenchParams reads the parameters from a query, trimming spaces.
func ParseBenchParams(q url.Values) BenchParams {
	var p BenchParams
	for _, f := range p.fields() {
		*f.v = strings.TrimSpace(q.Get(f.name))
	}
	return p
}

// A BenchUpload is the answer to a benchmark upload (201 Created).
type BenchUpload struct {
	// ID is the stored run's id.
	ID     int64  `json:"id"`
	Commit string `json:"commit"`
	Branch string `json:"branch"`
	Dirty  bool   `json:"dirty"`
	// Subject and Author are the commit's, as stored; empty when the
	// upload gave none.
	Subject string `json:"subject,omitempty"`
	Author  string `json:"author,omitempty"`
	Machine string `json:"machine"`
	// Benchmarks is the number of distinct benchmarks, Results the
	// number of result lines (samples) stored.
	Benchmarks int `json:"benchmarks"`
	Results    int `json:"results"`
	// Warnings are the malformed lines that were skipped.
	Warnings []string `json:"warnings,omitempty"`
	// URL is the dashboard page of the uploaded benchmarks, a path on
	// the server.
	URL string `json:"url"`
}

// A RunUpload is the answer to a profiling run upload (201 Created).
type RunUpload struct {
	ID       string `json:"id"`
	Profiles int    `json:"profiles"`
	// URL is the run's dashboard page, a path on the server.
	URL string `json:"url"`
}

// A RunDeleted is the answer to deleting a profiling run (200 OK).
type RunDeleted struct {
	ID string `json:"id"`
	// Files says whether the run's files were removed too: a run indexed
	// from a directory outside the server's data directory keeps them.
	Files bool `json:"files_removed"`
}

// An Error is the JSON body of every failed API request.
type Error struct {
	// Error says what was wrong and, where it helps, what to do.
	Error  string `json:"error"`
	Status int    `json:"status"`
}
