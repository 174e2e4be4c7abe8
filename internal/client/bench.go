package client

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/gitstate"
)

// PushBench uploads the Go benchmark output in the file at path ('go test
// -bench' output or a 'perfscope bench' file), stored on the server per
// commit. Parameters left empty in p are filled in: the commit, branch
// and dirty state from the git work tree the process runs in when the
// file has no 'commit:' line, the machine from this host's name, and the
// commit time, subject and author from git when it knows the commit.
//
// A file without results, or without a commit where none can be found,
// is an ErrBadInput error.
func (c *Client) PushBench(ctx context.Context, path string, p api.BenchParams) (*api.BenchUpload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read benchmark results: %w", err)
	}
	parsed, err := bench.Parse(bytes.NewReader(data), path)
	if err != nil {
		return nil, err
	}
	if len(parsed.Results) == 0 {
		return nil, badInput("%s holds no benchmark results (lines such as 'BenchmarkX-8  1000  123 ns/op')", path)
	}
	fileCommit := parsed.Results[0].GetConfig("commit")
	if p.Commit == "" && fileCommit == "" {
		// Plain 'go test -bench' output: the results are of the code
		// checked out here.
		st, err := gitstate.Read(ctx, ".")
		if err != nil {
			return nil, badInput("%s has no 'commit:' line and this is not a git work tree: pass --commit", path)
		}
		p.Commit = st.Commit
		if p.Branch == "" {
			p.Branch = st.Branch
		}
		if p.Dirty == "" {
			p.Dirty = fmt.Sprint(st.Dirty)
		}
	}
	if p.Machine == "" {
		p.Machine, _ = os.Hostname()
	}
	if p.CommitTime == "" || p.Subject == "" || p.Author == "" {
		rev := p.Commit
		if rev == "" {
			rev = fileCommit
		}
		// Unknown to git here is fine: the server orders such a commit
		// by when it was first uploaded, and shows it by its hash.
		if c, err := gitstate.Describe(ctx, ".", rev); err == nil {
			if p.CommitTime == "" && !c.Time.IsZero() {
				p.CommitTime = c.Time.Format(time.RFC3339)
			}
			if p.Subject == "" {
				p.Subject = c.Subject
			}
			if p.Author == "" {
				p.Author = c.Author
			}
		}
	}
	var res api.BenchUpload
	code, err := c.post(ctx, api.BenchPath+"?"+p.Values().Encode(), "text/plain; charset=utf-8", bytes.NewReader(data), &res)
	if err != nil {
		return nil, err
	}
	if code != http.StatusCreated {
		return nil, fmt.Errorf("push %s: unexpected answer %d from the server", path, code)
	}
	res.URL = c.url(res.URL)
	return &res, nil
}
