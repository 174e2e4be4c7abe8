package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/perfscope/perfscope/internal/gitstate"

	"github.com/perfscope/perfscope/internal/api"
)

// WriteBenchUpload says what a server stored of a benchmark upload and
// which malformed lines it skipped.
func WriteBenchUpload(w io.Writer, res *api.BenchUpload) error {
	var b strings.Builder
	fmt.Fprintf(&b, "pushed %d results of %d benchmarks for commit %s: %s\n", res.Results, res.Benchmarks, gitstate.Short(res.Commit), res.URL)
	for _, warning := range res.Warnings {
		b.WriteString("skipped: " + warning + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write upload result: %w", err)
	}
	return nil
}

// WriteRunUpload says where an uploaded run is shown; existed says the
// server had it already.
func WriteRunUpload(w io.Writer, res *api.RunUpload, existed bool) error {
	msg := fmt.Sprintf("pushed run %s with %d profiles: %s\n", res.ID, res.Profiles, res.URL)
	if existed {
		msg = fmt.Sprintf("run %s is already on the server: %s\n", res.ID, res.URL)
	}
	if _, err := io.WriteString(w, msg); err != nil {
		return fmt.Errorf("write upload result: %w", err)
	}
	return nil
}

// WriteRunDeleted says that a run was deleted from a server.
func WriteRunDeleted(w io.Writer, res *api.RunDeleted) error {
	msg := fmt.Sprintf("deleted run %s and its files\n", res.ID)
	if !res.Files {
		msg = fmt.Sprintf("deleted run %s from the index; its files are outside the server's data directory and were kept\n", res.ID)
	}
	if _, err := io.WriteString(w, msg); err != nil {
		return fmt.Errorf("write deletion result: %w", err)
	}
	return nil
}
