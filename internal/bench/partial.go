package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// PartialSuffix ends the name of a results file while it is being
// written: "perfscope bench" writes NAME.partial and renames it NAME when
// the run ends, however it ends, short of perfscope being killed outright
// (kill -9, a crash, the machine going down). A file named NAME is
// complete or says it was interrupted (InterruptedKey); a NAME.partial is
// what a run that died had measured. Both are Go benchmark format.
const PartialSuffix = ".partial"

// InterruptedKey is the configuration key of the line "interrupted: true"
// that ends the results file of an interrupted run (Ctrl-C): the results
// above it are those measured until then. A configuration line applies to
// the results after it, so at the end it applies to none: benchstat and
// "perfscope compare" read the file as any other and group its results
// with a complete file's.
const InterruptedKey = "interrupted"

// A resultsFile is a results file being written under its partial name.
// It writes whole lines only: a benchmark's name is printed when its
// measurement starts and its numbers when it ends, and a line cut between
// the two by the end of perfscope would read as a malformed result.
type resultsFile struct {
	path string // the final name
	f    *os.File
	line []byte // the unfinished last line
}

// createResults starts the results file path, empty, under its partial
// name. A file already at path is removed: it is not this run's, and must
// not be taken for its results should the run die.
func createResults(path string) (*resultsFile, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("replace results file: %w", err)
	}
	f, err := os.Create(path + PartialSuffix)
	if err != nil {
		return nil, fmt.Errorf("create results file: %w", err)
	}
	return &resultsFile{path: path, f: f}, nil
}

// reopenResults renames the finished results file path back to its partial
// name to append to it.
func reopenResults(path string) (*resultsFile, error) {
	if err := os.Rename(path, path+PartialSuffix); err != nil {
		return nil, fmt.Errorf("append to results file: %w", err)
	}
	f, err := os.OpenFile(path+PartialSuffix, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		// Back under its own name: it is as complete as it was.
		os.Rename(path+PartialSuffix, path)
		return nil, fmt.Errorf("append to results file: %w", err)
	}
	return &resultsFile{path: path, f: f}, nil
}

func (r *resultsFile) Write(p []byte) (int, error) {
	i := bytes.LastIndexByte(p, '\n')
	if i < 0 {
		r.line = append(r.line, p...)
		return len(p), nil
	}
	if len(r.line) > 0 {
		if _, err := r.f.Write(r.line); err != nil {
			return 0, err
		}
		r.line = r.line[:0]
	}
	if _, err := r.f.Write(p[:i+1]); err != nil {
		return 0, err
	}
	r.line = append(r.line, p[i+1:]...)
	return len(p), nil
}

// finish closes the file, ending it with "interrupted: true" when
// interrupted, and gives it its final name. An unfinished last line is
// ended, unless it is a benchmark whose measurement never ended.
func (r *resultsFile) finish(interrupted bool) error {
	var err error
	if len(r.line) > 0 && !bytes.HasPrefix(r.line, []byte("Benchmark")) {
		_, err = r.f.Write(append(r.line, '\n'))
	}
	if interrupted && err == nil {
		_, err = fmt.Fprintf(r.f, "%s: true\n", InterruptedKey)
	}
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write results file: %w", err)
	}
	if err := os.Rename(r.f.Name(), r.path); err != nil {
		return fmt.Errorf("write results file: %w", err)
	}
	return nil
}
